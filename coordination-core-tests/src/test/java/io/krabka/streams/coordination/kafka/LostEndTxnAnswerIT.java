package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A commit whose answer is lost after it committed, and whose resend Kafka answers with
 * a fence (issue 36, finding 2). kafka-clients sends EndTxn again by itself after a
 * disconnect; when a challenger's InitProducerId lands in between, the coordinator
 * answers the resend PRODUCER_FENCED, so {@code commitTransaction()} throws
 * {@code ProducerFencedException} on its first attempt although the transaction
 * committed. A write that reports that as {@link FencedException} ("nothing of it was
 * written") lies: the record is in the log.
 *
 * <p>The library's clients reach the broker through an {@link EndTxnAnswerDropper} on a
 * listener of their own; the challenger uses the INTERNAL listener directly.
 */
class LostEndTxnAnswerIT {

    private static final String PROXIED = "PROXIED";

    private static KafkaProcessCluster cluster;
    private static EndTxnAnswerDropper proxy;

    @BeforeAll
    static void startBroker(@TempDir Path dir) {
        cluster = KafkaProcessCluster.builder(dir)
                .nodes(1)
                .settings(AbstractLeadershipIT.BROKER_SETTINGS)
                .listener(new KafkaProcessCluster.Listener(PROXIED, "PLAINTEXT", (node, bound) -> {
                    proxy = new EndTxnAnswerDropper(bound);
                    return proxy.port();
                }))
                .start();
    }

    @AfterAll
    static void stopBroker() {
        if (proxy != null) {
            proxy.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2, 1})
    void aCommitWhoseAnswerWasLostAndWhoseResendIsFencedIsNotReportedAsNothingWritten(short transactionVersion)
            throws Exception {
        setTransactionVersion(transactionVersion);
        String suffix = "tv" + transactionVersion;
        Role role = Role.of("lost-end-txn-" + suffix);
        String topic = "commands-" + suffix;
        CommitOutcomeIT.createTopic(cluster, topic);
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(1));
        ExecutorService writer = Executors.newSingleThreadExecutor();
        Throwable thrown;
        try (KafkaCoordinationTransport transport = proxied("coordination-" + suffix, lease);
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system())) {
            Leadership held = client.acquire(role, MemberId.of("a"), Duration.ofSeconds(60));
            held.renew();

            // The role producer's client.id, as KafkaCoordinationTransport.create names it.
            proxy.arm("krabka-coordination-role-" + role.name());
            CompletableFuture<List<RecordMetadata>> write = CompletableFuture.supplyAsync(
                    () -> held.write(List.of(new ProducerRecord<>(topic, 0, null, "command".getBytes()))), writer);
            proxy.endTxnAnswerDropped().get(30, TimeUnit.SECONDS);
            // The commit reached the coordinator; its answer did not reach the leader, whose
            // resend is held. A challenger's InitProducerId lands first.
            try (KafkaProducer<byte[], byte[]> challenger = challenger(role)) {
                challenger.initTransactions();
            }
            proxy.release();

            thrown = outcome(write);
            System.out.printf(
                    "LostEndTxnAnswerIT tv%d: write %s; held requests (api keys) %s; EndTxn answers %s; leadership %s%n",
                    transactionVersion,
                    thrown == null ? "returned" : "threw " + thrown,
                    proxy.heldRequests(),
                    proxy.endTxnAnswers(),
                    held.state());
            assertThat(proxy.endTxnAnswers())
                    .as("the resent EndTxn reached the coordinator")
                    .hasSizeGreaterThanOrEqualTo(2);
        } finally {
            writer.shutdownNow();
        }

        List<String> log = CommitOutcomeIT.committedValues(cluster, topic);
        System.out.printf("LostEndTxnAnswerIT tv%d: committed values of %s: %s%n", transactionVersion, topic, log);
        // What each outcome promises about the command.
        if (thrown == null) {
            assertThat(log).as("a write that returned").containsExactly("command");
        } else if (thrown instanceof FencedException) {
            assertThat(log).as("a write that threw " + thrown).isEmpty();
        } else {
            assertThat(thrown).isInstanceOf(CommitOutcomeUnknownException.class);
            assertThat(log).as("a write whose outcome is unknown").hasSizeLessThanOrEqualTo(1);
        }
        // And what this scenario is: the commit landed, so the write returns or says it cannot
        // tell; never FencedException.
        assertThat(log).containsExactly("command");
        if (thrown != null) {
            assertThat(thrown).as("the write of a committed command").isInstanceOf(CommitOutcomeUnknownException.class);
        }
    }

    /**
     * A guarded write whose records are never acknowledged (the leader's requests are held,
     * as for a member paused by SIGSTOP) when its lease runs out: the expiry closes its
     * producer under the commit. Kafka's producer sends EndTxn only once every record was
     * acknowledged, so nothing was written, and the write says so ({@link FencedException},
     * the leadership EXPIRED) instead of "may have committed or not".
     */
    @org.junit.jupiter.api.Test
    void aWriteCutShortByItsExpiryBeforeItsRecordsWereAcknowledgedReportsNothingWritten() throws Exception {
        setTransactionVersion((short) 2);
        Role role = Role.of("cut-short");
        String topic = "commands-cut-short";
        CommitOutcomeIT.createTopic(cluster, topic);
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(1));
        ExecutorService writer = Executors.newSingleThreadExecutor();
        Throwable thrown;
        try (KafkaCoordinationTransport transport = proxied("coordination-cut-short", lease);
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system())) {
            Leadership held = client.acquire(role, MemberId.of("a"), Duration.ofSeconds(60));
            // One write first, so the producer knows the topic: otherwise the command's send may
            // still wait for its metadata (held too) when the expiry closes the producer, and the
            // write fails before it sent anything, a different path to the same "nothing written".
            held.write(List.of(new ProducerRecord<>(topic, 0, null, "before".getBytes())));
            proxy.holdFrom("krabka-coordination-role-" + role.name(), EndTxnAnswerDropper.PRODUCE);
            CompletableFuture<List<RecordMetadata>> write = CompletableFuture.supplyAsync(
                    () -> held.write(List.of(new ProducerRecord<>(topic, 0, null, "command".getBytes()))), writer);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> proxy.heldRequests().contains(EndTxnAnswerDropper.PRODUCE));
            // The member's expiry check, once the deadline passed.
            await().atMost(Duration.ofSeconds(30)).until(held::expireIfDue);
            thrown = outcome(write);
            proxy.release();
        } finally {
            writer.shutdownNow();
        }
        // A challenger's InitProducerId aborts whatever the held requests left open.
        try (KafkaProducer<byte[], byte[]> challenger = challenger(role)) {
            challenger.initTransactions();
        }
        assertThat(CommitOutcomeIT.committedValues(cluster, topic))
                .as("the log")
                .containsExactly("before");
        assertThat(thrown)
                .as("what the write reported")
                .isExactlyInstanceOf(FencedException.class)
                .hasMessageContaining("ended (EXPIRED)")
                .hasStackTraceContaining("before every record was acknowledged");
    }

    /** A transport on a one-partition coordination topic {@code topic}, reaching the broker through the proxy. */
    private static KafkaCoordinationTransport proxied(String topic, LeaseConfig lease) {
        return KafkaCoordinationTransport.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(PROXIED)),
                TopicSpec.DEFAULTS.withName(topic).withPartitions(1).withReplicationFactor(1),
                Duration.ofSeconds(10),
                lease.duration());
    }

    /** What {@code write} returned (null) or threw. */
    private static Throwable outcome(CompletableFuture<?> write) throws Exception {
        try {
            write.get(60, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause() instanceof CompletionException c && c.getCause() != null ? c.getCause() : e.getCause();
        }
    }

    private static KafkaProducer<byte[], byte[]> challenger(Role role) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                role.name(),
                ProducerConfig.CLIENT_ID_CONFIG,
                "challenger-" + role.name(),
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                30_000,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class));
    }

    /** Finalizes transaction.version at {@code version} and waits until the broker says so. */
    private static void setTransactionVersion(short version) throws Exception {
        try (Admin admin = cluster.admin()) {
            FinalizedVersionRange finalized = admin.describeFeatures()
                    .featureMetadata()
                    .get(10, TimeUnit.SECONDS)
                    .finalizedFeatures()
                    .get("transaction.version");
            short current = finalized == null ? 0 : finalized.maxVersionLevel();
            if (current == version) {
                return;
            }
            FeatureUpdate.UpgradeType type =
                    version < current ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE : FeatureUpdate.UpgradeType.UPGRADE;
            admin.updateFeatures(
                            Map.of("transaction.version", new FeatureUpdate(version, type)),
                            new UpdateFeaturesOptions())
                    .all()
                    .get(10, TimeUnit.SECONDS);
            await("transaction.version " + version)
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> {
                        FinalizedVersionRange now = admin.describeFeatures()
                                .featureMetadata()
                                .get(10, TimeUnit.SECONDS)
                                .finalizedFeatures()
                                .get("transaction.version");
                        return now != null && now.maxVersionLevel() == version;
                    });
        }
    }
}
