package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real in-process KRaft cluster: one dedicated controller and 1-3 brokers, on the
 * production metadata version and its default features (transaction version 2).
 */
public final class KafkaTestCluster implements AutoCloseable {

    private static final MetadataVersion VERSION = MetadataVersion.latestProduction();

    private final KafkaClusterTestKit kit;
    private final Admin admin;

    private KafkaTestCluster(KafkaClusterTestKit kit) {
        this.kit = kit;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kit.bootstrapServers()));
    }

    /** Starts a cluster with {@code brokers} brokers and these extra broker settings. */
    public static KafkaTestCluster start(int brokers, Map<String, String> brokerSettings) {
        try {
            // Without the production features the kit bootstraps transaction.version 0.
            BootstrapMetadata bootstrap = BootstrapMetadata.fromVersions(VERSION,
                    Feature.PRODUCTION_FEATURES.stream()
                            .collect(Collectors.toMap(Feature::featureName, feature -> feature.defaultLevel(VERSION))),
                    "krabka-test");
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder(bootstrap)
                    .setCombined(false).setNumControllerNodes(1).setNumBrokerNodes(brokers).build());
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

    public String bootstrapServers() {
        return kit.bootstrapServers();
    }

    public Admin admin() {
        return admin;
    }

    public KafkaClusterTestKit kit() {
        return kit;
    }

    /** Sets the finalized {@code transaction.version} (1: epoch fixed per producer; 2: bumps per transaction). */
    public void setTransactionVersion(short version) {
        try {
            short current = admin.describeFeatures().featureMetadata().get(10, TimeUnit.SECONDS)
                    .finalizedFeatures().get("transaction.version").maxVersionLevel();
            if (current == version) {
                return;
            }
            FeatureUpdate.UpgradeType type = version < current
                    ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE : FeatureUpdate.UpgradeType.UPGRADE;
            admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate(version, type)), new UpdateFeaturesOptions())
                    .all().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("could not set transaction.version to " + version, e);
        }
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

    /** Creates a topic with one replica unless it exists. */
    public void createTopic(String name, int partitions) {
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(20, TimeUnit.SECONDS);
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
        admin.close(Duration.ofSeconds(5));
        try {
            kit.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the test Kafka cluster", e);
        }
    }
}
