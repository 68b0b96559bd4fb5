package io.krabka.streams.coordination.members;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The members' advertised addresses, read from the compacted topic
 * {@code <coordination topic>-members} ({@link MemberAddressCodec}): a thread of its own
 * tails the topic, so {@link #lookup} asks nothing of the cluster. It also writes this
 * member's address ({@link #publish}) and withdraws it ({@link #withdraw}).
 *
 * <p>What it holds is what members claim. It decides nothing: whoever routes with it
 * still checks that the member holds the role and that the address is an allowed target.
 * A malformed record is skipped and counted, never fatal.
 */
public final class MemberAddressBook implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MemberAddressBook.class);

    private final String topic;
    private final @Nullable Producer<byte[], byte[]> producer;
    private final Consumer<byte[], byte[]> consumer;
    private final Duration timeout;
    private final Map<MemberId, MemberAddress> addresses = new ConcurrentHashMap<>();
    private final AtomicLong malformed = new AtomicLong();
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    private final Thread tail;
    private volatile boolean closed;

    MemberAddressBook(
            String topic,
            @Nullable Producer<byte[], byte[]> producer,
            Consumer<byte[], byte[]> consumer,
            Duration timeout) {
        this.topic = topic;
        this.producer = producer;
        this.consumer = consumer;
        this.timeout = timeout;
        this.tail = new Thread(this::tail, "krabka-member-addresses");
        this.tail.setDaemon(true);
    }

    /**
     * Ensures the topic (compacted, one partition, created when missing if {@code create}),
     * then starts tailing it. The settings are an application's own client settings, as
     * {@link KafkaCoordinationTransport#create} takes them.
     *
     * @throws TopicConfigurationException when the topic is missing and may not be created
     */
    public static MemberAddressBook open(
            Map<String, Object> adminSettings,
            Map<String, Object> producerSettings,
            Map<String, Object> consumerSettings,
            String topic,
            short replicationFactor,
            boolean create,
            Duration timeout) {
        try (Admin admin =
                Admin.create(named(KafkaCoordinationTransport.adminSettings(adminSettings, timeout), "admin"))) {
            ensureTopic(admin, topic, replicationFactor, create, timeout);
        }
        MemberAddressBook book = new MemberAddressBook(
                topic,
                new KafkaProducer<>(
                        named(KafkaCoordinationTransport.registrarSettings(producerSettings, timeout), "writer")),
                new KafkaConsumer<>(named(KafkaCoordinationTransport.readerSettings(consumerSettings), "reader")),
                timeout);
        book.tail.start();
        return book;
    }

    private static Map<String, Object> named(Map<String, Object> settings, String suffix) {
        Map<String, Object> copy = new HashMap<>(settings);
        Object base = copy.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        String prefix = base == null || base.toString().isBlank() ? "krabka" : base.toString();
        copy.put(CommonClientConfigs.CLIENT_ID_CONFIG, prefix + "-coordination-members-" + suffix);
        return copy;
    }

    private static void ensureTopic(
            Admin admin, String topic, short replicationFactor, boolean create, Duration timeout) {
        try {
            if (admin.listTopics()
                    .names()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .contains(topic)) {
                return;
            }
            if (!create) {
                throw new TopicConfigurationException("the member address topic " + topic + " does not exist and "
                        + "krabka.coordination.topic.create is false: create it (compacted, one partition)");
            }
            Map<String, String> configs = new HashMap<>();
            configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
            if (replicationFactor >= 3) {
                configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, "2");
            }
            admin.createTopics(List.of(new NewTopic(topic, 1, replicationFactor).configs(configs)))
                    .all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            log.info(
                    "Created the member address topic {} (compacted, 1 partition, replication factor {})",
                    topic,
                    replicationFactor);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new CoordinationException(
                        "cannot ensure the member address topic " + topic + ": " + e.getCause(), e.getCause());
            }
        } catch (TimeoutException e) {
            throw new CoordinationException(
                    "the cluster did not answer within " + timeout + " about the member address topic " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while ensuring the member address topic " + topic, e);
        }
    }

    /** The topic this book reads and writes. */
    public String topic() {
        return topic;
    }

    /**
     * Writes {@code address} and waits until it is durable; this book knows it at once.
     *
     * @throws CoordinationException when the write failed or was not acknowledged in time
     */
    public void publish(MemberAddress address) {
        write(address.member(), MemberAddressCodec.encodeValue(address));
        addresses.put(address.member(), address);
    }

    /** Writes a tombstone for {@code member}'s address and waits until it is durable. */
    public void withdraw(MemberId member) {
        write(member, null);
        addresses.remove(member);
    }

    private void write(MemberId member, byte @Nullable [] value) {
        try {
            Objects.requireNonNull(producer, "a book that reads once writes nothing")
                    .send(new ProducerRecord<>(topic, MemberAddressCodec.encodeKey(member), value))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new CoordinationException(
                    "cannot write the address of member " + member + " to " + topic + ": " + e.getCause(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new CoordinationException(
                    "the address of member " + member + " was not acknowledged within " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("interrupted while writing the address of member " + member, e);
        }
    }

    /** The address {@code member} advertises, as last read; empty when it has none (or withdrew it). */
    public Optional<MemberAddress> lookup(MemberId member) {
        return Optional.ofNullable(addresses.get(member));
    }

    /** Every advertised address, as last read. */
    public Map<MemberId, MemberAddress> all() {
        return Map.copyOf(addresses);
    }

    /** How many records of the topic were malformed and skipped. */
    public long malformedRecords() {
        return malformed.get();
    }

    /** Waits until the topic was read up to its end as it was when the book opened. */
    public boolean awaitCaughtUp(Duration wait) throws InterruptedException {
        return caughtUp.await(wait.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void tail() {
        while (!closed) {
            try {
                readFromTheStart();
                return;
            } catch (WakeupException e) {
                return; // closed
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                // The cluster did not answer (yet): read again from the start once it does.
                log.debug("Reading the member address topic {} timed out; trying again", topic, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                if (!closed) {
                    log.error(
                            "Stopped reading the member address topic {}: routing sees no address written from now on",
                            topic,
                            e);
                }
                return;
            }
        }
    }

    private void readFromTheStart() throws InterruptedException {
        List<TopicPartition> partitions = List.of();
        while (partitions.isEmpty() && !closed) {
            // A topic created a moment ago may not be in every broker's metadata yet.
            List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
            partitions = infos == null
                    ? List.of()
                    : infos.stream()
                            .map(p -> new TopicPartition(p.topic(), p.partition()))
                            .toList();
            if (partitions.isEmpty()) {
                Thread.sleep(100); // a retry backoff, not a synchronisation
            }
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, timeout);
        while (!closed) {
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                apply(record);
            }
            if (caughtUp.getCount() > 0
                    && ends.entrySet().stream()
                            .allMatch(end -> consumer.position(end.getKey(), timeout) >= end.getValue())) {
                caughtUp.countDown();
            }
        }
    }

    private void apply(ConsumerRecord<byte[], byte[]> record) {
        try {
            MemberId member = MemberAddressCodec.decodeKey(record.key());
            Optional<MemberAddress> address = MemberAddressCodec.decodeValue(member, record.value());
            if (address.isPresent()) {
                addresses.put(member, address.get());
            } else {
                addresses.remove(member);
            }
        } catch (MalformedAddressException e) {
            if (malformed.incrementAndGet() <= 20) {
                log.warn(
                        "Skipped a malformed member address record at {}-{} offset {}: {}",
                        record.topic(),
                        record.partition(),
                        record.offset(),
                        e.getMessage());
            }
        }
    }

    /**
     * Reads every address once, up to the end of the topic, and returns them: for a tool
     * (the CLI), with a consumer it owns and closes.
     */
    public static Map<MemberId, MemberAddress> readOnce(
            Consumer<byte[], byte[]> consumer, String topic, Duration timeout) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
        if (infos == null || infos.isEmpty()) {
            return Map.of();
        }
        MemberAddressBook book = new MemberAddressBook(topic, null, consumer, timeout);
        List<TopicPartition> partitions = infos.stream()
                .map(p -> new TopicPartition(p.topic(), p.partition()))
                .toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, timeout);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (ends.entrySet().stream().anyMatch(end -> consumer.position(end.getKey(), timeout) < end.getValue())) {
            if (System.nanoTime() > deadline) {
                throw new CoordinationException(
                        "could not read the member address topic " + topic + " to its end within " + timeout);
            }
            consumer.poll(Duration.ofMillis(200)).forEach(book::apply);
        }
        return book.all();
    }

    /** Stops tailing and closes the clients; writes nothing (withdraw first on a graceful stop). */
    @Override
    public void close() {
        closed = true;
        consumer.wakeup();
        try {
            tail.join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(1)));
        } catch (RuntimeException e) {
            log.debug("Closing the member address reader failed", e);
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(1));
        }
    }
}
