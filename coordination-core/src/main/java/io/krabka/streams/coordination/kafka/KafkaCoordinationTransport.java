package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The transport that talks to a Kafka cluster. It owns, and closes:
 * <ul>
 *   <li>an {@link Admin} for the topic and for DescribeTransactions;</li>
 *   <li>a plain idempotent producer ({@code acks=all}) that appends registrations: a
 *       candidate holds no epoch to open a transaction with;</li>
 *   <li>a transactional producer ({@code transactional.id} = the role name exactly) for each
 *       role it holds or is about to challenge, from the factory: leases and guarded records;</li>
 *   <li>a {@code read_committed} consumer, manually assigned, no group: aborted leases stay unseen.</li>
 * </ul>
 * Both writers pin a role's records to one partition with {@link RolePartitioner}.
 * Pinning and checks: {@code PinnedTopic} (the topic and the cluster it is on, which
 * {@code PinnedEpoch} holds every role's transactions to); reads: {@code TopicReaders};
 * role producers: {@code RoleEpochs}; describes: {@code TransactionDescriptions}.
 *
 * <p>Size: the whole SPI on Kafka, each operation a short delegation to the parts above,
 * and the {@link Settings} it was created from, which the fencing probe reuses.
 */
public final class KafkaCoordinationTransport implements CoordinationTransport {

    /** How long one cluster operation may take before it fails with a timeout, by default. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(30);

    /** How long {@link #close()} gives each client to finish what is pending. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);
    /** How fresh the topic's identity check must be before a challenge's InitProducerId. */
    static final Duration IDENTITY_CHECK_BEFORE_CHALLENGE = Duration.ofSeconds(1);

    private final Admin admin;
    private final Producer<byte[], byte[]> registrar;
    private final TopicSpec topic;
    private final Duration timeout;
    private final PinnedTopic pinned;
    private final TopicReaders readers;
    private final RoleEpochs epochs;
    private final TransactionDescriptions descriptions;
    // Wakes contenders on news; null when this transport was built without one.
    private volatile @Nullable TopicWatcher watcher;
    private final @Nullable String bootstrapServers;
    // What create() built this transport from; null when it was given its clients.
    private final @Nullable Settings settings;

    /**
     * What a transport was {@linkplain #create(Map, Map, Map, TopicSpec, Duration, Duration) created}
     * from, so a tool reaches the same cluster the same way: the fencing probe
     * ({@code CoordinationClient.probe()}). The connection settings may hold credentials
     * (SASL, TLS key passwords): never log them.
     *
     * @param adminConnection the admin client's connection settings, as given
     * @param producerConnection the producers' connection settings, as given
     * @param consumerConnection the consumers' connection settings, as given
     * @param topic the coordination topic's settings
     * @param timeout how long one cluster operation may take
     * @param transactionTimeout the role producers' {@code transaction.timeout.ms}: the lease duration
     */
    public record Settings(
            Map<String, Object> adminConnection,
            Map<String, Object> producerConnection,
            Map<String, Object> consumerConnection,
            TopicSpec topic,
            Duration timeout,
            Duration transactionTimeout) {

        public Settings {
            // Copies that keep a null value, which Kafka's clients accept and Map.copyOf does not.
            adminConnection = java.util.Collections.unmodifiableMap(new java.util.HashMap<>(adminConnection));
            producerConnection = java.util.Collections.unmodifiableMap(new java.util.HashMap<>(producerConnection));
            consumerConnection = java.util.Collections.unmodifiableMap(new java.util.HashMap<>(consumerConnection));
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(timeout, "timeout");
            Objects.requireNonNull(transactionTimeout, "transactionTimeout");
        }
    }

    /** A transport on the default topic settings and operation timeout. */
    public KafkaCoordinationTransport(
            Admin admin,
            Producer<byte[], byte[]> registrar,
            Function<Role, Producer<byte[], byte[]>> transactionalProducers,
            Consumer<byte[], byte[]> reader) {
        this(admin, registrar, transactionalProducers, reader, TopicSpec.DEFAULTS, DEFAULT_OPERATION_TIMEOUT);
    }

    /**
     * A transport on the given topic settings.
     *
     * @param timeout how long one operation (a send, a read to the end, a describe) may
     *     wait for the cluster before it fails with a timeout that says so
     */
    public KafkaCoordinationTransport(
            Admin admin,
            Producer<byte[], byte[]> registrar,
            Function<Role, Producer<byte[], byte[]>> transactionalProducers,
            Consumer<byte[], byte[]> reader,
            TopicSpec topic,
            Duration timeout) {
        this(admin, registrar, transactionalProducers, reader, topic, timeout, null);
    }

    /** @param settings what create() built the clients from (the role producers' transaction.timeout.ms among them); null otherwise */
    private KafkaCoordinationTransport(
            Admin admin,
            Producer<byte[], byte[]> registrar,
            Function<Role, Producer<byte[], byte[]>> transactionalProducers,
            Consumer<byte[], byte[]> reader,
            TopicSpec topic,
            Duration timeout,
            @Nullable Settings settings) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.registrar = Objects.requireNonNull(registrar, "registrar");
        Objects.requireNonNull(transactionalProducers, "transactionalProducers");
        Objects.requireNonNull(reader, "reader");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.pinned = new PinnedTopic(admin, topic, timeout, settings == null ? null : settings.transactionTimeout());
        this.readers = new TopicReaders(pinned, topic.name(), reader, timeout);
        this.epochs = new RoleEpochs(transactionalProducers, topic.name(), timeout);
        this.descriptions = new TransactionDescriptions(admin, timeout);
        this.settings = settings;
        Object servers =
                settings == null ? null : settings.adminConnection().get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        this.bootstrapServers = servers instanceof List<?> list
                ? String.join(",", list.stream().map(String::valueOf).toList())
                : servers == null ? null : servers.toString();
    }

    /**
     * Follows the coordination topic with consumers from {@code watchers} (one at a time,
     * on one thread), so {@link #watch} wakes contenders on news. Without it, contenders
     * find news by their periodic passes alone.
     */
    public KafkaCoordinationTransport withWatcher(Supplier<Consumer<byte[], byte[]>> watchers) {
        // The count this member pinned, never a lookup of its own: the watcher must not hold
        // the transport's lock while the cluster does not answer (the contenders need it).
        this.watcher = new TopicWatcher(topic.name(), pinned::pinnedCount, watchers);
        return this;
    }

    /**
     * Reads for {@link #readAll} with a consumer of its own, built from
     * {@code describeReaders} on first use, so a describe of many roles (the endpoint)
     * never waits behind the contenders' reads; and the roles' reads with up to three more
     * when they queue for the shared reader. Without it, all reads share one reader.
     */
    public KafkaCoordinationTransport withDescribeReader(Supplier<Consumer<byte[], byte[]>> describeReaders) {
        readers.describeWith(Objects.requireNonNull(describeReaders, "describeReaders"));
        return this;
    }

    /**
     * Builds every client from one map of connection settings (bootstrap servers,
     * security), adding the settings each client must have.
     */
    public static KafkaCoordinationTransport create(
            Map<String, Object> connection, TopicSpec topic, Duration timeout, Duration transactionTimeout) {
        return create(connection, connection, connection, topic, timeout, transactionTimeout);
    }

    /**
     * Builds every client from the settings of an application's own Kafka clients (for
     * example Spring Kafka's factories): connection and security settings apply
     * unchanged; the settings each client must have replace theirs. Any
     * {@code transactional.id} there is dropped: a role producer's id is the role name.
     */
    public static KafkaCoordinationTransport create(
            Map<String, Object> adminConnection,
            Map<String, Object> producerConnection,
            Map<String, Object> consumerConnection,
            TopicSpec topic,
            Duration timeout,
            Duration transactionTimeout) {
        Admin admin = Admin.create(ClientSettings.named(adminSettings(adminConnection, timeout), "admin"));
        KafkaProducer<byte[], byte[]> registrar =
                new KafkaProducer<>(ClientSettings.named(registrarSettings(producerConnection, timeout), "registrar"));
        KafkaConsumer<byte[], byte[]> reader =
                new KafkaConsumer<>(ClientSettings.named(readerSettings(consumerConnection), "reader"));
        Map<String, Object> watcherSettings =
                ClientSettings.named(ClientSettings.watcher(consumerConnection), "watcher");
        KafkaCoordinationTransport transport = new KafkaCoordinationTransport(
                        admin,
                        registrar,
                        role -> new KafkaProducer<>(ClientSettings.named(
                                transactionalSettings(producerConnection, role, timeout, transactionTimeout),
                                "role-" + role.name())),
                        reader,
                        topic,
                        timeout,
                        new Settings(
                                adminConnection,
                                producerConnection,
                                consumerConnection,
                                topic,
                                timeout,
                                transactionTimeout))
                .withWatcher(() -> new KafkaConsumer<>(watcherSettings));
        // The describe reader and the readers of busy lanes, numbered in the order they are built.
        AtomicInteger built = new AtomicInteger();
        return transport.withDescribeReader(() -> new KafkaConsumer<>(
                ClientSettings.named(readerSettings(consumerConnection), "reader-" + built.incrementAndGet())));
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
     * otherwise: {@code none}, Kafka 3.x's behaviour. Kafka 4's {@code rebootstrap} retried the
     * bootstrap servers thousands of times a second, an INFO line each, while the cluster was
     * down (docs/OPERATIONS.md); a member whose brokers all changed their names restarts.
     */
    public static final String METADATA_RECOVERY_STRATEGY = "none";

    /** Admin settings: the connection plus request and API timeouts, reconnect backoff and metadata recovery. */
    public static Map<String, Object> adminSettings(Map<String, Object> connection, Duration timeout) {
        return ClientSettings.admin(connection, timeout);
    }

    /** Registrar settings: idempotent, {@code acks=all}, byte arrays, no transactional id, reconnect backoff and metadata recovery. */
    public static Map<String, Object> registrarSettings(Map<String, Object> connection, Duration timeout) {
        return ClientSettings.registrar(connection, timeout);
    }

    /**
     * Transactional settings of a role's producer: {@code transactional.id} is the role
     * name exactly (any prefix would make it a different epoch).
     */
    public static Map<String, Object> transactionalSettings(
            Map<String, Object> connection, Role role, Duration timeout, Duration transactionTimeout) {
        return ClientSettings.transactional(connection, role, timeout, transactionTimeout);
    }

    /** Reader settings: {@code read_committed}, no group, no auto-commit, byte arrays, reconnect backoff and metadata recovery. */
    public static Map<String, Object> readerSettings(Map<String, Object> connection) {
        return ClientSettings.reader(connection);
    }

    @Override
    public String topic() {
        return topic.name();
    }

    /** What {@code create} built this transport from; empty for a transport given its clients. */
    public Optional<Settings> settings() {
        return Optional.ofNullable(settings);
    }

    @Override
    public String location() {
        String servers = bootstrapServers;
        return servers == null ? "topic " + topic.name() : "topic " + topic.name() + " on bootstrap servers " + servers;
    }

    @Override
    public int partitionCount() {
        return pinned.partitionCount();
    }

    @Override
    public long register(Role role, MemberId member, long registeredAt) {
        return append(
                role,
                CoordinationKey.registration(role, member),
                CoordinationCodec.encodeValue(new CoordinationRecord.Registration(member, registeredAt)),
                "registering " + member + " for role " + role);
    }

    @Override
    public void deregister(Role role, MemberId member) {
        append(
                role,
                CoordinationKey.registration(role, member),
                null,
                "deregistering " + member + " from role " + role);
    }

    private long append(Role role, CoordinationKey key, byte @Nullable [] value, String operation) {
        TopicPartition partition = pinned.partitionOf(role);
        try {
            return registrar
                    .send(new ProducerRecord<>(
                            partition.topic(), partition.partition(), CoordinationCodec.encodeKey(key), value))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .offset();
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        }
    }

    @Override
    public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        return readers.read(role, fromOffset, maxWait);
    }

    /** See {@code TopicReaders.readAll}: one end-offset lookup and fetches of every partition together. */
    @Override
    public Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
        return readers.readAll(fromOffsets);
    }

    @Override
    public RoleEpoch initEpoch(Role role) {
        try {
            // A challenge after the topic was altered under this member would grant a term on
            // the wrong partition: look again first unless a check is fresher than a second
            // (a describe of one topic, about a millisecond; the periodic check is every 5 s).
            pinned.checkIdentity(IDENTITY_CHECK_BEFORE_CHALLENGE);
        } catch (RuntimeException e) {
            throw KafkaErrors.translate("checking the coordination topic " + topic.name(), e);
        }
        try {
            return new PinnedEpoch(epochs.initEpoch(role), pinned);
        } catch (CoordinationException failed) {
            // Another cluster behind the address answers InitProducerId as its own (slowly,
            // when it has no transaction state yet): say so rather than "no answer".
            throw pinned.explain(failed);
        }
    }

    /** See {@code RoleEpochs.prepareEpoch}: builds and connects the role's producer, without InitProducerId. */
    @Override
    public void prepareEpoch(Role role) {
        epochs.prepareEpoch(role);
    }

    @Override
    public void discardPrepared(Role role) {
        epochs.discardPrepared(role);
    }

    @Override
    public boolean watches() {
        return watcher != null;
    }

    @Override
    public AutoCloseable watch(Role role, java.util.function.Consumer<RoleNews> onNews) {
        TopicWatcher current = watcher;
        return current == null ? () -> {} : current.watch(role, onNews::accept);
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
        TopicPartition partition = pinned.partitionOf(role);
        try {
            pinned.checkIdentity();
        } catch (RuntimeException e) {
            throw KafkaErrors.translate("checking the coordination topic " + topic.name(), e);
        }
        return current.covers(partition.partition(), fromOffset);
    }

    /** See {@code OtherTopics}: the topic whose partition for {@code role} has the producer among its active producers. */
    @Override
    public Optional<String> otherTopicWrittenBy(Role role, long producerId) {
        return OtherTopics.writtenBy(admin, topic.name(), role, producerId, timeout);
    }

    /** The topic's {@code min.compaction.lag.ms}, read when the topic was pinned. */
    @Override
    public Duration minCompactionLag() {
        return pinned.minCompactionLag();
    }

    /** See {@code PinnedTopic.unsafe}: settings altered while running, re-checked every 15 s. */
    @Override
    public Optional<TopicConfigurationException> topicProblem() {
        return pinned.unsafe();
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role) {
        return describeEpoch(role, timeout);
    }

    /** Refused once the topic or the cluster changed: another cluster's coordinator knows other producers. */
    @Override
    public Optional<ProducerState> describeEpoch(Role role, Duration within) {
        pinned.requireUnchanged();
        return descriptions.describeEpoch(role, within);
    }

    /** See {@code TransactionDescriptions.describeEpochs}: one DescribeTransactions for all of {@code roles}; refused as {@link #describeEpoch}. */
    @Override
    public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        pinned.requireUnchanged();
        return descriptions.describeEpochs(roles);
    }

    @Override
    public void close() {
        epochs.closeEpochs();
        TopicWatcher current = watcher;
        if (current != null) {
            current.close();
        }
        epochs.closePrepared();
        // Bounded: Kafka's clients wait without end by default for what is still pending
        // (a registration tombstone, an admin call), and with the cluster gone a member's
        // shutdown took minutes. Whatever the contenders still needed was done or given
        // up before the transport closes. In parallel, so a member is gone CLOSE_TIMEOUT
        // after this starts, not four of them.
        CoordinationException failure = ClientClose.inParallel(
                Map.of(
                        "registrar",
                        () -> registrar.close(CLOSE_TIMEOUT),
                        "admin",
                        () -> admin.close(CLOSE_TIMEOUT),
                        "reader",
                        () -> readers.closeReader(CLOSE_TIMEOUT),
                        "describe-reader",
                        () -> readers.closeDescribeReader(CLOSE_TIMEOUT)),
                CLOSE_TIMEOUT.plusMillis(500));
        if (failure != null) {
            throw failure;
        }
    }
}
