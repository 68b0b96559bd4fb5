package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.Assumptions;

/**
 * A real in-process KRaft cluster: one dedicated controller and 1-3 brokers, on the
 * production metadata version and its default features (transaction version 2).
 *
 * <p>Most tests take the {@linkplain #shared() shared} cluster, one per test JVM; a test
 * that stops, pauses or reconfigures brokers, or needs several of them, starts its own.
 */
public final class KafkaTestCluster implements AutoCloseable {

    private static final MetadataVersion VERSION = MetadataVersion.latestProduction();
    /**
     * The broker settings of the shared cluster: a transaction that timed out is aborted
     * within half a second of its timeout, not a minute (the broker's default check).
     */
    public static final Map<String, String> SHARED_SETTINGS =
            Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500");

    private static final short DEFAULT_TRANSACTION_VERSION = Feature.TRANSACTION_VERSION.defaultLevel(VERSION);

    /** This JVM's shared cluster, started on first use; null until then and after {@link #stopShared()}. */
    private static KafkaTestCluster shared;

    private final KafkaClusterTestKit kit;
    private final Admin admin;
    /** Whether this is the shared cluster, which only {@link #stopShared()} stops. */
    private boolean isShared;
    /** The bootstrap servers and the owner of a cluster that {@link #wrap} took over; null on the test kit's. */
    private final String wrappedBootstrapServers;

    private final AutoCloseable wrappedOwner;

    private KafkaTestCluster(KafkaClusterTestKit kit) {
        this.kit = kit;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kit.bootstrapServers()));
        this.wrappedBootstrapServers = null;
        this.wrappedOwner = null;
    }

    private KafkaTestCluster(String bootstrapServers, AutoCloseable owner) {
        this.kit = null;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
        this.wrappedBootstrapServers = bootstrapServers;
        this.wrappedOwner = owner;
    }

    /**
     * This class's API over a cluster that runs elsewhere, such as broker JVMs of another
     * Kafka release ({@link KafkaProcessCluster}), so tests written against it run there
     * too. {@link #kit()} is not available; {@link #close()} closes {@code owner}.
     */
    public static KafkaTestCluster wrap(String bootstrapServers, AutoCloseable owner) {
        return new KafkaTestCluster(bootstrapServers, owner);
    }

    /** Starts a cluster with {@code brokers} brokers and these extra broker settings. */
    public static KafkaTestCluster start(int brokers, Map<String, String> brokerSettings) {
        try {
            // Without the production features the kit bootstraps transaction.version 0.
            BootstrapMetadata bootstrap = BootstrapMetadata.fromVersions(
                    VERSION,
                    Feature.PRODUCTION_FEATURES.stream()
                            .collect(Collectors.toMap(Feature::featureName, feature -> feature.defaultLevel(VERSION))),
                    "krabka-test");
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder(bootstrap)
                    .setCombined(false)
                    .setNumControllerNodes(1)
                    .setNumBrokerNodes(brokers)
                    .build());
            Map<String, String> settings = new HashMap<>(Map.of(
                    "transaction.state.log.replication.factor", "1",
                    "transaction.state.log.min.isr", "1",
                    "transaction.state.log.num.partitions", "1",
                    "offsets.topic.replication.factor", "1",
                    "offsets.topic.num.partitions", "1",
                    "group.initial.rebalance.delay.ms", "0"));
            settings.putAll(brokerSettings);
            settings.forEach(builder::setConfigProp);
            KafkaClusterTestKit kit = builder.build();
            kit.format();
            kit.startup();
            kit.waitForReadyBrokers();
            return new KafkaTestCluster(kit);
        } catch (Exception e) {
            throw new IllegalStateException("could not start the test Kafka cluster", e);
        }
    }

    /** Starts a one-broker cluster. */
    public static KafkaTestCluster start() {
        return start(1, Map.of());
    }

    /**
     * The one-broker cluster that the tests of this JVM share ({@link #SHARED_SETTINGS}),
     * started on first use and stopped when the test run ends ({@link SharedClusterStop}).
     * Starting a cluster costs seconds; a test class that only needs a broker saves them.
     *
     * <p>What a test on it must keep to: its topics and roles are its own (a random suffix
     * in their names is the easy way), as tests of other classes ran before it on the same
     * broker. A role's name is its transactional id across the cluster: a role another class
     * used starts at an epoch no lease of this test explains, which costs a wait. It does
     * not stop, pause or reconfigure the broker. The cluster comes back at the default
     * transaction version on every call, whatever an earlier test set. {@link #close()} on
     * it does nothing, so a class closes it as it would close its own.
     */
    public static synchronized KafkaTestCluster shared() {
        if (shared == null) {
            shared = start(1, SHARED_SETTINGS);
            shared.isShared = true;
            SharedClusterStop.register(KafkaTestCluster::stopShared);
        }
        shared.setTransactionVersion(DEFAULT_TRANSACTION_VERSION);
        return shared;
    }

    /** Stops the shared cluster if it was started. */
    static synchronized void stopShared() {
        if (shared != null) {
            KafkaTestCluster stopping = shared;
            shared = null;
            stopping.isShared = false;
            stopping.close();
        }
    }

    public String bootstrapServers() {
        return kit == null ? wrappedBootstrapServers : kit.bootstrapServers();
    }

    public Admin admin() {
        return admin;
    }

    public KafkaClusterTestKit kit() {
        if (kit == null) {
            throw new IllegalStateException("a wrapped cluster has no test kit");
        }
        return kit;
    }

    /**
     * Sets the finalized {@code transaction.version} (1: epoch fixed per producer; 2: bumps per transaction).
     * On brokers that do not support {@code version} (Kafka 3.9 knows level 0 only) the
     * calling test is aborted: what it would test does not exist there.
     */
    public void setTransactionVersion(short version) {
        FeatureMetadata features;
        try {
            features = admin.describeFeatures().featureMetadata().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not set transaction.version to " + version, e);
        }
        short current = finalizedTransactionVersion(features);
        if (current == version) {
            return;
        }
        SupportedVersionRange supported = features.supportedFeatures().get("transaction.version");
        short max = supported == null ? 0 : supported.maxVersion();
        if (version > max) {
            Assumptions.abort("the brokers support transaction.version up to " + max + ", not " + version);
        }
        try {
            FeatureUpdate.UpgradeType type =
                    version < current ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE : FeatureUpdate.UpgradeType.UPGRADE;
            admin.updateFeatures(
                            Map.of("transaction.version", new FeatureUpdate(version, type)),
                            new UpdateFeaturesOptions())
                    .all()
                    .get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not set transaction.version to " + version, e);
        }
        // The controller has committed the update; a broker applies it from its metadata log a
        // moment later, and a producer started before that would run at the old version.
        org.awaitility.Awaitility.await("transaction.version " + version + " applied by the brokers")
                .atMost(Duration.ofSeconds(30))
                .until(() -> finalizedTransactionVersion() == version);
    }

    /** The transaction version a broker has applied. */
    private short finalizedTransactionVersion() throws Exception {
        return finalizedTransactionVersion(
                admin.describeFeatures().featureMetadata().get(10, TimeUnit.SECONDS));
    }

    private static short finalizedTransactionVersion(FeatureMetadata features) {
        // A feature finalized at level 0 is not listed at all.
        FinalizedVersionRange finalized = features.finalizedFeatures().get("transaction.version");
        return finalized == null ? 0 : finalized.maxVersionLevel();
    }

    /** Connection settings for the module's clients. */
    public Map<String, Object> connection() {
        return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    }

    /** A transport on a one-replica, three-partition coordination topic. */
    public KafkaCoordinationTransport transport() {
        return transport(TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3));
    }

    public KafkaCoordinationTransport transport(TopicSpec topic) {
        return KafkaCoordinationTransport.create(connection(), topic, Duration.ofSeconds(20), Duration.ofSeconds(20));
    }

    /**
     * Waits until every transaction with records in {@code partition} up to its present
     * end is decided and its markers are written: the last stable offset, where
     * read_committed readers stop, has reached the high watermark as it is now. A commit
     * returns once the coordinator has logged its decision and writes the markers after
     * that; until they land a read_committed reader stops before the transaction's first
     * record, and so before everything appended after it too, transactional or not. A
     * test that reads what it has just written waits for this first.
     */
    public void awaitDecided(TopicPartition partition) {
        long end = endOffset(partition, IsolationLevel.READ_UNCOMMITTED);
        org.awaitility.Awaitility.await("the last stable offset of " + partition + " reaching " + end)
                .atMost(Duration.ofSeconds(30))
                .until(() -> endOffset(partition, IsolationLevel.READ_COMMITTED) >= end);
    }

    /** The partition's end as a reader with this isolation sees it: the high watermark, or the last stable offset. */
    public long endOffset(TopicPartition partition, IsolationLevel isolation) {
        try {
            return admin.listOffsets(Map.of(partition, OffsetSpec.latest()), new ListOffsetsOptions(isolation))
                    .partitionResult(partition)
                    .get(10, TimeUnit.SECONDS)
                    .offset();
        } catch (Exception e) {
            throw new IllegalStateException("could not list the end offset of " + partition, e);
        }
    }

    /** Appends records {@code k<from>} to {@code k<to - 1>} to {@code topic}, plainly, with the values {@code value} gives. */
    public void produce(String topic, int from, int to, IntFunction<byte[]> value) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8), value.apply(i)));
            }
        }
    }

    /**
     * The committed records of partition 0 of {@code topic}, as a read_committed reader sees
     * them once every transaction appended there so far is decided ({@link #awaitDecided}):
     * right after a commit returns, its markers may not be written yet.
     */
    public List<ConsumerRecord<byte[], byte[]>> committed(String topic) {
        awaitDecided(new TopicPartition(topic, 0));
        Map<String, Object> settings = new HashMap<>();
        settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(100)).forEach(records::add);
            }
        }
        return records;
    }

    /** Creates a topic with one replica unless it exists. */
    public void createTopic(String name, int partitions) {
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
                    .all()
                    .get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("could not create topic " + name, e);
            }
        } catch (Exception e) {
            throw new IllegalStateException("could not create topic " + name, e);
        }
    }

    @Override
    public void close() {
        if (isShared) {
            return;
        }
        admin.close(Duration.ofSeconds(5));
        try {
            if (kit == null) {
                wrappedOwner.close();
                return;
            }
            kit.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the test Kafka cluster", e);
        }
    }
}
