package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeTransactionsOptions;
import org.apache.kafka.clients.admin.DescribeTransactionsResult;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport that talks to a Kafka cluster. It owns, and closes:
 * <ul>
 *   <li>an {@link Admin} for the topic and for DescribeTransactions;</li>
 *   <li>a plain idempotent producer ({@code acks=all}) that appends registrations: a
 *       candidate holds no epoch to open a transaction with;</li>
 *   <li>one transactional producer per role, {@code transactional.id} = the role name
 *       exactly, built on demand by the factory; it writes the role's leases and
 *       guarded records;</li>
 *   <li>a {@code read_committed} consumer with manual assignment and no group, so an
 *       aborted lease write stays invisible.</li>
 * </ul>
 * Both writers pin a role's records to one partition with {@link RolePartitioner}.
 */
public final class KafkaCoordinationTransport implements CoordinationTransport {

    private static final Logger log = LoggerFactory.getLogger(KafkaCoordinationTransport.class);

    /** How long one cluster operation may take before it fails with a timeout, by default. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(30);

    private static final Duration POLL_STEP = Duration.ofMillis(100);
    private static final String TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms";

    /** How long {@link #close()} gives each client to finish what is pending. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);
    private final Admin admin;
    private final Producer<byte[], byte[]> registrar;
    private final Function<Role, Producer<byte[], byte[]>> transactionalProducers;
    private final Consumer<byte[], byte[]> reader;
    private final TopicSpec topic;
    private final Duration timeout;
    private final Map<Role, KafkaRoleEpoch> epochs = new ConcurrentHashMap<>();
    // Wakes contenders on news; null when this transport was built without one.
    private volatile TopicWatcher watcher;
    // Producers built ahead of a challenge, not yet initialised: no epoch, no fencing.
    private final Map<Role, Producer<byte[], byte[]>> prepared = new ConcurrentHashMap<>();
    private final ReentrantLock readerLock = new ReentrantLock(true);
    // Reads for describes of many roles (readAll), so they never queue behind the
    // contenders' reads on the shared reader; built on first use, null without a supplier.
    private volatile Supplier<Consumer<byte[], byte[]>> describeReaders;
    private Consumer<byte[], byte[]> describeReader;
    private final ReentrantLock describeReaderLock = new ReentrantLock();
    private volatile int partitionCount;
    private volatile String bootstrapServers;
    // The topic this member pinned on first use, when it last checked it is still that
    // topic, and why it no longer is (then every operation refuses: sticky on purpose).
    private volatile CoordinationTopic.Identity pinned;
    private volatile long identityCheckedAt;
    private volatile TopicConfigurationException changed;
    private volatile boolean missingOnce;
    // The role producers' transaction.timeout.ms, when this transport built them itself.
    private volatile Duration transactionTimeout;

    /** A transport on the default topic settings and operation timeout. */
    public KafkaCoordinationTransport(Admin admin, Producer<byte[], byte[]> registrar,
            Function<Role, Producer<byte[], byte[]>> transactionalProducers, Consumer<byte[], byte[]> reader) {
        this(admin, registrar, transactionalProducers, reader, TopicSpec.DEFAULTS, DEFAULT_OPERATION_TIMEOUT);
    }

    /**
     * A transport on the given topic settings.
     *
     * @param timeout how long one operation (a send, a read to the end, a describe) may
     *     wait for the cluster before it fails with a timeout that says so
     */
    public KafkaCoordinationTransport(Admin admin, Producer<byte[], byte[]> registrar,
            Function<Role, Producer<byte[], byte[]>> transactionalProducers, Consumer<byte[], byte[]> reader,
            TopicSpec topic, Duration timeout) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.registrar = Objects.requireNonNull(registrar, "registrar");
        this.transactionalProducers = Objects.requireNonNull(transactionalProducers, "transactionalProducers");
        this.reader = Objects.requireNonNull(reader, "reader");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /**
     * Follows the coordination topic with consumers from {@code watchers} (one at a time,
     * on one thread), so {@link #watch} wakes contenders on news. Without it, contenders
     * find news by their periodic passes alone.
     */
    public KafkaCoordinationTransport withWatcher(Supplier<Consumer<byte[], byte[]>> watchers) {
        // The count this member pinned, never a lookup of its own: the watcher must not hold
        // the transport's lock while the cluster does not answer (the contenders need it).
        this.watcher = new TopicWatcher(topic.name(), () -> changed == null ? partitionCount : 0, watchers);
        return this;
    }

    /**
     * Reads for {@link #readAll} with a consumer of its own, built from
     * {@code describeReaders} on first use, so a describe of many roles (the endpoint)
     * never waits behind the contenders' reads. Without it, readAll shares their reader.
     */
    public KafkaCoordinationTransport withDescribeReader(Supplier<Consumer<byte[], byte[]>> describeReaders) {
        this.describeReaders = Objects.requireNonNull(describeReaders, "describeReaders");
        return this;
    }

    /**
     * Builds every client from one map of connection settings (bootstrap servers,
     * security), adding the settings each client must have.
     */
    public static KafkaCoordinationTransport create(Map<String, Object> connection, TopicSpec topic, Duration timeout,
            Duration transactionTimeout) {
        return create(connection, connection, connection, topic, timeout, transactionTimeout);
    }

    /**
     * Builds every client from the settings of an application's own Kafka clients (for
     * example Spring Kafka's factories): connection and security settings apply
     * unchanged; the settings each client must have replace theirs. Any
     * {@code transactional.id} there is dropped: a role producer's id is the role name.
     */
    public static KafkaCoordinationTransport create(Map<String, Object> adminConnection, Map<String, Object> producerConnection,
            Map<String, Object> consumerConnection, TopicSpec topic, Duration timeout, Duration transactionTimeout) {
        Admin admin = Admin.create(named(adminSettings(adminConnection, timeout), "admin"));
        KafkaProducer<byte[], byte[]> registrar = new KafkaProducer<>(named(registrarSettings(producerConnection, timeout), "registrar"));
        KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(named(readerSettings(consumerConnection), "reader"));
        Map<String, Object> watcherSettings = named(watcherSettings(consumerConnection), "watcher");
        KafkaCoordinationTransport transport = new KafkaCoordinationTransport(admin, registrar,
                role -> new KafkaProducer<>(named(transactionalSettings(producerConnection, role, timeout, transactionTimeout),
                        "role-" + role.name())),
                reader, topic, timeout).withWatcher(() -> new KafkaConsumer<>(watcherSettings));
        Map<String, Object> describeReaderSettings = named(readerSettings(consumerConnection), "describe-reader");
        transport.withDescribeReader(() -> new KafkaConsumer<>(describeReaderSettings));
        transport.transactionTimeout = transactionTimeout;
        Object servers = adminConnection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        transport.bootstrapServers = servers instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList())
                : servers == null ? null : servers.toString();
        return transport;
    }

    /** Gives each client its own client.id (the application's, if any, as a prefix), so logs and metrics tell them apart. */
    private static Map<String, Object> named(Map<String, Object> settings, String suffix) {
        Object base = settings.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        String prefix = base == null || base.toString().isBlank() ? "krabka" : base.toString();
        settings.put(CommonClientConfigs.CLIENT_ID_CONFIG, prefix + "-coordination-" + suffix);
        return settings;
    }

    /**
     * How long every client of this transport waits at most between two attempts to connect
     * to a broker that does not answer (Kafka's default: 1 s), unless the connection settings
     * say otherwise. The first attempts still come after Kafka's 50 ms, doubling, so a broker
     * back after a restart of a few seconds is reached as soon as before; only a longer
     * outage is noticed up to this much (plus 20% jitter) late. Each attempt logs two or three
     * lines per client, so this bounds the log of a member whose cluster is gone.
     */
    public static final Duration RECONNECT_BACKOFF_MAX = Duration.ofSeconds(10);

    /**
     * {@code metadata.recovery.strategy} of every client, unless the connection settings say
     * otherwise: {@code none}, Kafka 3.x's behaviour. Kafka 4's default, {@code rebootstrap},
     * falls back to the bootstrap servers whenever no known broker can be reached right now
     * (every one in its reconnect backoff), without any backoff of its own and with an INFO
     * line each time: an admin client did so thousands of times a second while the cluster
     * was down (docs/OPERATIONS.md). What it buys, a client that finds its cluster again after
     * every broker changed its advertised host name, a member gets by restarting.
     */
    public static final String METADATA_RECOVERY_STRATEGY = "none";

    /** Reconnect and metadata-recovery settings shared by every client (see the constants above). */
    private static Map<String, Object> backedOff(Map<String, Object> settings) {
        settings.putIfAbsent(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, METADATA_RECOVERY_STRATEGY);
        settings.putIfAbsent(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, RECONNECT_BACKOFF_MAX.toMillis());
        return settings;
    }

    /** Admin settings: the connection plus request and API timeouts, reconnect backoff and metadata recovery. */
    public static Map<String, Object> adminSettings(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        settings.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), 30_000));
        return settings;
    }

    /** Registrar settings: idempotent, {@code acks=all}, byte arrays, no transactional id, reconnect backoff and metadata recovery. */
    public static Map<String, Object> registrarSettings(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = producerBase(connection, timeout);
        settings.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        return settings;
    }

    /**
     * Transactional settings of a role's producer: {@code transactional.id} is the role
     * name exactly (any prefix would make it a different epoch).
     */
    public static Map<String, Object> transactionalSettings(Map<String, Object> connection, Role role, Duration timeout,
            Duration transactionTimeout) {
        Map<String, Object> settings = producerBase(connection, timeout);
        settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, role.name());
        settings.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) transactionTimeout.toMillis());
        // A challenger's InitProducerId often waits once for the coordinator to finish
        // the previous holder's transaction (CONCURRENT_TRANSACTIONS, a few milliseconds);
        // at the default 100 ms backoff that wait was most of a handover. The backoff still grows
        // exponentially up to retry.backoff.max.ms, so a struggling broker is not hammered.
        settings.putIfAbsent(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 5);
        return settings;
    }

    /** Reader settings: {@code read_committed}, no group, no auto-commit, byte arrays, reconnect backoff and metadata recovery. */
    public static Map<String, Object> readerSettings(Map<String, Object> connection) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.remove(ConsumerConfig.GROUP_ID_CONFIG);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        // A standby waits in a long poll; a release is a transaction whose marker may not
        // wake a held fetch, so bound each fetch's wait: it bounds how late a release is seen.
        settings.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        // A deleted coordination topic must stay deleted until an operator acts.
        settings.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        return settings;
    }

    /**
     * Watcher settings: a reader's, with Kafka's default fetch wait (500 ms): the watcher
     * is woken by appends, so its wait only bounds how often an idle member asks.
     */
    static Map<String, Object> watcherSettings(Map<String, Object> connection) {
        Map<String, Object> settings = readerSettings(connection);
        settings.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 500);
        return settings;
    }

    private static Map<String, Object> producerBase(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) timeout.toMillis());
        int requestTimeout = (int) Math.min(timeout.toMillis(), 30_000);
        settings.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeout);
        settings.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(timeout.toMillis(), requestTimeout + 1L));
        settings.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
        return settings;
    }

    @Override
    public String topic() {
        return topic.name();
    }

    @Override
    public String location() {
        String servers = bootstrapServers;
        return servers == null ? "topic " + topic.name() : "topic " + topic.name() + " on bootstrap servers " + servers;
    }

    /** How often a member checks that the topic it pinned is still the same topic. */
    static final Duration IDENTITY_CHECK_INTERVAL = Duration.ofSeconds(5);

    @Override
    public int partitionCount() {
        TopicConfigurationException gone = changed;
        if (gone != null) {
            throw gone;
        }
        int count = partitionCount;
        if (count == 0) {
            synchronized (this) {
                if (partitionCount == 0) {
                    checkTransactionTimeout();
                    pinned = CoordinationTopic.ensure(admin, topic, timeout);
                    identityCheckedAt = System.nanoTime();
                    partitionCount = pinned.partitions();
                }
                count = partitionCount;
            }
        }
        return count;
    }

    /**
     * Refuses, on first use, a lease longer than the brokers let a transaction last:
     * every InitProducerId would fail, but a standby would only learn it when it
     * challenges. A member that may not describe the brokers' configuration (an ACL)
     * skips the check and learns it from its first InitProducerId instead.
     */
    private void checkTransactionTimeout() {
        Duration wanted = transactionTimeout;
        if (wanted == null) {
            return;
        }
        try {
            Collection<Node> nodes = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<ConfigResource> brokers = nodes.stream()
                    .map(node -> new ConfigResource(ConfigResource.Type.BROKER, node.idString())).toList();
            // One request for every broker's configuration.
            Map<ConfigResource, Config> configs = admin.describeConfigs(brokers).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            for (Map.Entry<ConfigResource, Config> broker : configs.entrySet()) {
                ConfigEntry maximum = broker.getValue().get(TRANSACTION_MAX_TIMEOUT);
                if (maximum != null && maximum.value() != null && Long.parseLong(maximum.value()) < wanted.toMillis()) {
                    throw new CoordinationConfigurationException("the lease duration " + wanted + " is longer than broker "
                            + broker.getKey().name() + "'s " + TRANSACTION_MAX_TIMEOUT + " (" + maximum.value() + " ms): every"
                            + " InitProducerId of a role would be refused. Lower krabka.coordination.lease.duration"
                            + " (LeaseConfig.duration) or raise " + TRANSACTION_MAX_TIMEOUT + " on every broker");
                }
            }
        } catch (CoordinationConfigurationException tooLong) {
            throw tooLong;
        } catch (Exception e) {
            CoordinationException translated = KafkaErrors.translate("describing the brokers' configuration", e);
            if (!(translated instanceof CoordinationAuthorizationException)) {
                throw translated;
            }
            log.debug("Not allowed to describe the brokers' {}; the first InitProducerId will tell", TRANSACTION_MAX_TIMEOUT);
        }
    }

    /**
     * Checks, at most every {@link #IDENTITY_CHECK_INTERVAL}, that the topic is still the
     * one pinned on first use. Offsets are terms and a role's partition follows from the
     * count: a topic deleted and re-created (by an operator, or by auto-creation after a
     * broker lost its data) restarts terms at 0, and altered partitions move roles. From
     * then on every operation refuses, so this member challenges no one.
     */
    private void checkIdentity() {
        CoordinationTopic.Identity expected = pinned;
        if (expected == null || System.nanoTime() - identityCheckedAt < IDENTITY_CHECK_INTERVAL.toNanos()) {
            return;
        }
        identityCheckedAt = System.nanoTime();
        CoordinationTopic.Identity now = CoordinationTopic.current(admin, topic, timeout);
        if (expected.equals(now)) {
            missingOnce = false;
            return;
        }
        if (now == null && !missingOnce) {
            // One broker's metadata may lag; a topic is gone when two checks say so.
            missingOnce = true;
            return;
        }
        String what = now == null ? "was deleted"
                : !now.topicId().equals(expected.topicId()) ? "was deleted and created again (topic id " + expected.topicId()
                        + " is now " + now.topicId() + ")"
                : "changed its partition count from " + expected.partitions() + " to " + now.partitions();
        changed = new TopicConfigurationException("the coordination topic " + topic.name() + " " + what + " while this member"
                + " used it; its offsets are the terms devices compare, so this member stops contending. Stop every member,"
                + " restore or recreate the topic as it was (or start all members afresh and tell the devices that terms"
                + " restart), then restart the members");
        throw changed;
    }

    private TopicPartition partitionOf(Role role) {
        return new TopicPartition(topic.name(), RolePartitioner.partitionFor(role, partitionCount()));
    }

    @Override
    public long register(Role role, MemberId member, long registeredAt) {
        return append(role, CoordinationKey.registration(role, member),
                CoordinationCodec.encodeValue(new CoordinationRecord.Registration(member, registeredAt)),
                "registering " + member + " for role " + role);
    }

    @Override
    public void deregister(Role role, MemberId member) {
        append(role, CoordinationKey.registration(role, member), null, "deregistering " + member + " from role " + role);
    }

    private long append(Role role, CoordinationKey key, byte[] value, String operation) {
        TopicPartition partition = partitionOf(role);
        try {
            return registrar.send(new ProducerRecord<>(partition.topic(), partition.partition(),
                            CoordinationCodec.encodeKey(key), value))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).offset();
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        }
    }

    /**
     * The longest one read holds the member's one consumer before it lets another role's
     * read go first: a partition whose leader is gone must not hold up the roles on the
     * healthy ones for a whole operation timeout (their renewals wait behind their reads).
     */
    static final Duration READ_SLICE = Duration.ofMillis(500);
    /** The slice of a read of a partition that did not answer the previous one in time. */
    static final Duration SICK_SLICE = Duration.ofMillis(100);

    // Partitions whose last read did not learn the end offset within a slice, until one
    // does; while one is, a single read at a time probes it and the others fail at once.
    private final Set<Integer> unanswering = ConcurrentHashMap.newKeySet();
    private final Map<Integer, ReentrantLock> probes = new ConcurrentHashMap<>();

    @Override
    public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        TopicPartition partition = partitionOf(role);
        String operation = "reading role " + role + " from " + partition + " at offset " + fromOffset;
        long started = System.nanoTime();
        long waitUntil = started + maxWait.toNanos();
        long giveUpAt = started + timeout.toNanos();
        List<RawRecord> records = new ArrayList<>();
        long next = fromOffset;
        long end = -1;
        ReentrantLock probe = null;
        try {
            if (unanswering.contains(partition.partition())) {
                // Every role on a partition without a leader would otherwise wait out its
                // whole timeout on a shared pass thread, and queue for the reader between
                // slices: one read finds out when it answers again, the others give up now.
                probe = probes.computeIfAbsent(partition.partition(), p -> new ReentrantLock());
                if (!probe.tryLock()) {
                    probe = null;
                    throw new CoordinationTimeoutException("the last read of " + partition + " got no answer within "
                            + READ_SLICE.toMillis() + " ms, and another read waits for it now");
                }
            }
            while (true) {
                // Between slices too: a read of a partition that no longer exists would
                // otherwise wait out the whole operation timeout before anyone noticed.
                checkIdentity();
                if (System.nanoTime() - giveUpAt > 0 && (end < 0 || next < end)) {
                    throw new org.apache.kafka.common.errors.TimeoutException(end < 0
                            ? "the partition's end offset was not known within " + timeout
                            : "the partition's end " + end + " was not reached within " + timeout);
                }
                // One consumer serves every role of this member: hold it for one short
                // slice at a time, so a slow partition or a role waiting for news never
                // blocks another's read for long.
                readerLock.lock();
                try {
                    if (!reader.assignment().equals(Set.of(partition))) {
                        reader.assign(Set.of(partition));
                    }
                    reader.seek(partition, next);
                    Duration slice = unanswering.contains(partition.partition()) ? SICK_SLICE : READ_SLICE;
                    long sliceEnd = Math.min(System.nanoTime() + slice.toNanos(), giveUpAt);
                    if (end < 0) {
                        // read_committed: the end is the last stable offset.
                        Long found = endOffset(partition, sliceEnd);
                        if (found == null) {
                            unanswering.add(partition.partition());
                            continue;
                        }
                        unanswering.remove(partition.partition());
                        end = found;
                    }
                    if (next < end) {
                        while (next < end && System.nanoTime() < sliceEnd) {
                            collect(reader.poll(POLL_STEP).records(partition), records);
                            next = reader.position(partition, timeout);
                        }
                        if (next >= end) {
                            return new RoleRecords(records, next);
                        }
                        continue;
                    }
                    long remaining = waitUntil - System.nanoTime();
                    if (remaining <= 0) {
                        return new RoleRecords(records, next);
                    }
                    collect(reader.poll(Duration.ofNanos(Math.min(remaining, POLL_STEP.toNanos()))).records(partition), records);
                    if (!records.isEmpty()) {
                        return new RoleRecords(records, reader.position(partition, timeout));
                    }
                } finally {
                    readerLock.unlock();
                }
            }
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        } finally {
            if (probe != null) {
                probe.unlock();
            }
        }
    }

    /** The partition's end offset, or null when it was not known by {@code untilNanos}. */
    private Long endOffset(TopicPartition partition, long untilNanos) {
        try {
            return reader.endOffsets(Set.of(partition), Duration.ofNanos(Math.max(1, untilNanos - System.nanoTime())))
                    .get(partition);
        } catch (org.apache.kafka.common.errors.TimeoutException notYet) {
            return null;
        }
    }

    private static void collect(List<ConsumerRecord<byte[], byte[]>> polled, List<RawRecord> into) {
        for (ConsumerRecord<byte[], byte[]> record : polled) {
            into.add(new RawRecord(record.offset(), record.timestamp(), record.key(), record.value()));
        }
    }

    @Override
    public RoleEpoch initEpoch(Role role) {
        KafkaRoleEpoch previous = epochs.remove(role);
        if (previous != null) {
            previous.close();
        }
        Producer<byte[], byte[]> ready = prepared.remove(role);
        Producer<byte[], byte[]> producer = ready != null ? ready : transactionalProducers.apply(role);
        try {
            producer.initTransactions();
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw KafkaErrors.translate("initializing the epoch of role " + role, e);
        }
        KafkaRoleEpoch epoch = new KafkaRoleEpoch(role, producer, timeout);
        epochs.put(role, epoch);
        return epoch;
    }

    /**
     * Builds the role's producer and lets it fetch the coordination topic's metadata and
     * connect, without InitProducerId (which would be a challenge). A standby next in line
     * calls it, so its challenge pays only for InitProducerId, not for building and
     * connecting a client. Does nothing when one is prepared or the epoch is held here.
     */
    @Override
    public void prepareEpoch(Role role) {
        if (epochs.containsKey(role) || prepared.containsKey(role)) {
            return;
        }
        Producer<byte[], byte[]> producer = transactionalProducers.apply(role);
        try {
            producer.partitionsFor(topic.name());
        } catch (RuntimeException e) {
            // Only a head start: the challenge builds its own producer.
            producer.close(Duration.ZERO);
            log.debug("Could not prepare the producer of role {}: {}", role, e.toString());
            return;
        }
        Producer<byte[], byte[]> raced = prepared.putIfAbsent(role, producer);
        if (raced != null) {
            producer.close(Duration.ZERO);
        }
    }

    @Override
    public boolean watches() {
        return watcher != null;
    }

    @Override
    public AutoCloseable watch(Role role, java.util.function.Consumer<RoleNews> onNews) {
        TopicWatcher current = watcher;
        return current == null ? () -> { } : current.watch(role, onNews::accept);
    }

    /**
     * Asks the watcher, which follows every watched role's partition anyway, instead of
     * the reader: no consumer is taken, so a partition whose leader is gone holds up no
     * one. The topic's identity check, which rides on reads, rides on this too.
     */
    @Override
    public boolean tellsEverythingSince(Role role, long fromOffset) {
        TopicWatcher current = watcher;
        if (current == null) {
            return false;
        }
        TopicPartition partition = partitionOf(role);
        try {
            checkIdentity();
        } catch (CoordinationException e) {
            throw e;
        } catch (Exception e) {
            throw KafkaErrors.translate("checking the coordination topic " + topic.name(), e);
        }
        return current.covers(partition.partition(), fromOffset);
    }

    private static ProducerState producerState(TransactionDescription description) {
        return new ProducerState(description.producerId(), (short) description.producerEpoch(), description.state().toString(),
                description.transactionStartTimeMs().orElse(-1L));
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role) {
        return describeEpoch(role, timeout);
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role, Duration within) {
        // At least a millisecond: an answer already on its way still counts.
        long millis = Math.max(1, Math.min(within.toMillis(), timeout.toMillis()));
        try {
            TransactionDescription description = admin.describeTransactions(List.of(role.name()),
                            new DescribeTransactionsOptions().timeoutMs((int) millis))
                    .description(role.name()).get(millis, TimeUnit.MILLISECONDS);
            return Optional.of(producerState(description));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TransactionalIdNotFoundException) {
                return Optional.empty();
            }
            throw KafkaErrors.translate("describing the epoch of role " + role, e);
        } catch (Exception e) {
            throw KafkaErrors.translate("describing the epoch of role " + role, e);
        }
    }

    /**
     * Reads every partition with the one consumer in one go: one end-offset lookup for
     * all of them, then polls that fetch them together, instead of a lookup and a fetch
     * per partition. Like {@link #read}, it holds the consumer for one short slice at a
     * time and gives up after the operation timeout.
     */
    @Override
    public Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
        if (fromOffsets.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, Role> roles = new LinkedHashMap<>();
        Map<TopicPartition, Long> next = new HashMap<>();
        Map<TopicPartition, List<RawRecord>> records = new HashMap<>();
        fromOffsets.forEach((role, from) -> {
            TopicPartition partition = partitionOf(role);
            if (roles.putIfAbsent(partition, role) != null) {
                throw new IllegalArgumentException("roles " + roles.get(partition) + " and " + role + " share " + partition
                        + ": pass one role per partition");
            }
            next.put(partition, from);
            records.put(partition, new ArrayList<>());
        });
        String operation = "reading " + roles.size() + " partitions of " + topic.name();
        boolean ownReader = describeReaders != null;
        ReentrantLock lock = ownReader ? describeReaderLock : readerLock;
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        Map<TopicPartition, Long> ends = null;
        try {
            while (true) {
                checkIdentity();
                if (System.nanoTime() - giveUpAt > 0) {
                    throw new org.apache.kafka.common.errors.TimeoutException(ends == null
                            ? "the partitions' end offsets were not known within " + timeout
                            : behind(next, ends).size() + " partitions were not read to their ends within " + timeout);
                }
                // One slice at a time, as in read: the shared reader serves every role's reads.
                lock.lock();
                try {
                    Consumer<byte[], byte[]> reader = ownReader ? describeReader() : this.reader;
                    long sliceEnd = Math.min(System.nanoTime() + READ_SLICE.toNanos(), giveUpAt);
                    if (ends == null) {
                        // endOffsets updates the last stable offset of each assigned partition and
                        // logs a WARN for every other one it was asked about.
                        reader.assign(Set.copyOf(roles.keySet()));
                        try {
                            ends = reader.endOffsets(roles.keySet(), Duration.ofNanos(Math.max(1, sliceEnd - System.nanoTime())));
                        } catch (org.apache.kafka.common.errors.TimeoutException notYet) {
                            continue;
                        }
                    }
                    Set<TopicPartition> behind = behind(next, ends);
                    if (!behind.isEmpty()) {
                        reader.assign(Set.copyOf(behind));
                        behind.forEach(partition -> reader.seek(partition, next.get(partition)));
                        try {
                            while (!behind.isEmpty() && System.nanoTime() < sliceEnd) {
                                var polled = reader.poll(POLL_STEP);
                                for (TopicPartition partition : List.copyOf(behind)) {
                                    collect(polled.records(partition), records.get(partition));
                                    long position = reader.position(partition, timeout);
                                    next.put(partition, position);
                                    if (position >= ends.get(partition)) {
                                        // Done: fetch only the others from now on.
                                        behind.remove(partition);
                                        reader.pause(Set.of(partition));
                                    }
                                }
                            }
                        } finally {
                            // read() assigns one partition and polls it: none may stay paused.
                            reader.resume(reader.paused());
                        }
                    }
                    if (behind.isEmpty()) {
                        Map<Role, RoleRecords> read = new LinkedHashMap<>();
                        roles.forEach((partition, role) -> read.put(role, new RoleRecords(records.get(partition), next.get(partition))));
                        return read;
                    }
                } finally {
                    lock.unlock();
                }
            }
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        }
    }

    /** The consumer of {@link #readAll}; called with its lock held. */
    private Consumer<byte[], byte[]> describeReader() {
        if (describeReader == null) {
            describeReader = describeReaders.get();
        }
        return describeReader;
    }

    /** The partitions whose next offset is short of their end. */
    private static Set<TopicPartition> behind(Map<TopicPartition, Long> next, Map<TopicPartition, Long> ends) {
        Set<TopicPartition> behind = new HashSet<>();
        ends.forEach((partition, end) -> {
            if (next.get(partition) < end) {
                behind.add(partition);
            }
        });
        return behind;
    }

    /**
     * One DescribeTransactions for all of {@code roles} (the Admin groups the ids by
     * coordinator, so one request per broker that coordinates some of them), all within
     * one operation timeout.
     */
    @Override
    public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        Map<String, Role> byName = new LinkedHashMap<>();
        roles.forEach(role -> byName.putIfAbsent(role.name(), role));
        if (byName.isEmpty()) {
            return Map.of();
        }
        String operation = "describing the epochs of " + byName.size() + " roles";
        DescribeTransactionsResult result;
        try {
            result = admin.describeTransactions(byName.keySet());
        } catch (RuntimeException e) {
            throw KafkaErrors.translate(operation, e);
        }
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        Map<Role, Optional<ProducerState>> described = new LinkedHashMap<>();
        for (Map.Entry<String, Role> id : byName.entrySet()) {
            try {
                TransactionDescription description = result.description(id.getKey())
                        .get(Math.max(0, giveUpAt - System.nanoTime()), TimeUnit.NANOSECONDS);
                described.put(id.getValue(), Optional.of(producerState(description)));
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TransactionalIdNotFoundException)) {
                    throw KafkaErrors.translate(operation + " (role " + id.getValue() + ")", e);
                }
                described.put(id.getValue(), Optional.empty());
            } catch (Exception e) {
                throw KafkaErrors.translate(operation + " (role " + id.getValue() + ")", e);
            }
        }
        return described;
    }

    @Override
    public void close() {
        CoordinationException failure = null;
        for (KafkaRoleEpoch epoch : epochs.values()) {
            epoch.close();
        }
        epochs.clear();
        TopicWatcher current = watcher;
        if (current != null) {
            current.close();
        }
        prepared.values().forEach(producer -> producer.close(Duration.ZERO));
        prepared.clear();
        // Bounded: Kafka's clients wait without end by default for what is still pending
        // (a registration tombstone, an admin call), and with the cluster gone a member's
        // shutdown took minutes. Whatever the contenders still needed was done or given
        // up before the transport closes.
        for (Runnable client : List.<Runnable>of(() -> registrar.close(CLOSE_TIMEOUT), () -> admin.close(CLOSE_TIMEOUT))) {
            try {
                client.run();
            } catch (RuntimeException e) {
                failure = failure == null ? new CoordinationException("closing the transport failed", e) : failure;
            }
        }
        readerLock.lock();
        try {
            reader.close(CloseOptions.timeout(CLOSE_TIMEOUT));
        } catch (RuntimeException e) {
            failure = failure == null ? new CoordinationException("closing the transport failed", e) : failure;
        } finally {
            readerLock.unlock();
        }
        describeReaderLock.lock();
        try {
            if (describeReader != null) {
                describeReader.close(CloseOptions.timeout(CLOSE_TIMEOUT));
            }
        } catch (RuntimeException e) {
            failure = failure == null ? new CoordinationException("closing the transport failed", e) : failure;
        } finally {
            describeReaderLock.unlock();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
