package io.krabka.streams.coordination.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.AbstractLeadershipIT;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fencing probe on a real Kafka 4.1 broker (one broker JVM, transaction version 2
 * unless a test lowers it): the live checks pass and report what the broker is, the topic
 * settings that void the quorum claim are named, a read-only run writes nothing, and
 * nothing is left open.
 *
 * <p>And two backends that speak Kafka's protocol but break fencing, built here as fake
 * gateways in front of the same broker (each on a listener of its own, advertised as the
 * gateway's port, so every connection passes through it): an Iggy-like gateway that
 * answers InitProducerId, AddPartitionsToTxn and EndTxn with UNSUPPORTED_VERSION
 * (apache/iggy#3545), and a Gravitee-like gateway that answers a commit with
 * PRODUCER_FENCED although no one else initialized the transactional id, as Gravitee's
 * virtual clusters do after a restart (gravitee-io/gravitee-platform-docs#1658). The probe
 * must FAIL on each, naming what is wrong.
 *
 * <p>One broker for the class (the default build's budget): each test uses topics of its own.
 */
class FencingProbeIT {

    private static final ProtocolGateway IGGY = new ProtocolGateway(request -> request instanceof InitProducerIdRequest
                    || request instanceof AddPartitionsToTxnRequest
                    || request instanceof EndTxnRequest
            ? Optional.of(request.getErrorResponse(0, Errors.UNSUPPORTED_VERSION.exception()))
            : Optional.empty());
    private static final ProtocolGateway GRAVITEE = new ProtocolGateway(
            request -> request instanceof EndTxnRequest endTxn && endTxn.data().committed()
                    ? Optional.of(request.getErrorResponse(0, Errors.PRODUCER_FENCED.exception()))
                    : Optional.empty());

    private static KafkaProcessCluster process;
    private static KafkaTestCluster cluster;

    @BeforeAll
    static void startBroker(@TempDir Path dir) {
        process = KafkaProcessCluster.builder(dir)
                .settings(AbstractLeadershipIT.BROKER_SETTINGS)
                .listener(new KafkaProcessCluster.Listener("IGGY", "PLAINTEXT", (node, bound) -> IGGY.relayTo(bound)))
                .listener(new KafkaProcessCluster.Listener(
                        "GRAVITEE", "PLAINTEXT", (node, bound) -> GRAVITEE.relayTo(bound)))
                .start();
        cluster = KafkaTestCluster.wrap(process.bootstrapServers(), process);
    }

    @AfterAll
    static void stopBroker() {
        IGGY.close();
        GRAVITEE.close();
        if (cluster != null) {
            cluster.close();
        }
    }

    private static FencingReport probe(String listener, String topic) {
        return FencingProbe.builder(
                        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, process.bootstrapServers(listener)))
                .topic(TopicSpec.DEFAULTS
                        .withName(topic)
                        .withReplicationFactor(1)
                        .withAllowUnsafe(true))
                .timeout(Duration.ofSeconds(10))
                .build()
                .run();
    }

    private static FencingReport probe(TopicSpec topic, boolean readOnly) {
        return FencingProbe.builder(cluster.connection())
                .topic(topic)
                .timeout(Duration.ofSeconds(20))
                .roles(4)
                .readOnly(readOnly)
                .build()
                .run();
    }

    @Test
    void kafka41WithTransactionVersion2ReportsItselfPassesTheLiveChecksAndLeavesNothingOpen() throws Exception {
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("coordination-tv2")
                .withPartitions(3)
                .withReplicationFactor(1)
                .withAllowUnsafe(true);
        FencingReport report = probe(topic, false);
        System.out.println("FencingProbeIT tv2 (" + report.took().toMillis() + " ms):\n  "
                + String.join(
                        "\n  ",
                        report.checks().stream().map(ProbeCheck::toString).toList()));

        assertThat(report.clusterId())
                .isEqualTo(cluster.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS));
        assertThat(report.check("transaction-version").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.PASS);
            assertThat(check.finding()).isEqualTo("transaction.version=2");
        });
        assertThat(report.check("metadata-version").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        assertThat(report.check("transaction-apis").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        for (String live : List.of("live-fence", "commit-after-fence", "epoch-behaviour", "aborted-read")) {
            assertThat(report.check(live).orElseThrow().status()).as(live).isEqualTo(ProbeStatus.PASS);
        }
        assertThat(report.check("live-fence").orElseThrow().finding())
                .contains("was refused with ProducerFencedException");
        assertThat(report.check("epoch-behaviour").orElseThrow().finding()).contains("as transaction.version=2 says");
        // A one-broker development setup, allowed on purpose: warned about, not failed.
        assertThat(report.failures()).isEmpty();
        assertThat(report.warnings()).extracting(ProbeCheck::name).contains("topic", "broker.transaction-state-log");
        assertThat(report.status()).isEqualTo(ProbeStatus.WARN);
        assertThat(report.check("connections").orElseThrow().finding()).contains("up to 12 clients");

        // What it wrote, and where: the probe topic, never the coordination topic, and no transaction left open.
        assertThat(report.probeTopic()).isEqualTo("coordination-tv2-probe");
        assertThat(report.transactionalId()).startsWith("coordination-tv2-probe-");
        assertThat(cluster.admin().listTopics().names().get(10, TimeUnit.SECONDS))
                .contains("coordination-tv2-probe")
                .doesNotContain("coordination-tv2");
        assertThat(cluster.admin().listTransactions().all().get(10, TimeUnit.SECONDS))
                .filteredOn(listing -> listing.transactionalId().equals(report.transactionalId()))
                .extracting(TransactionListing::state)
                .doesNotContain(TransactionState.ONGOING);
    }

    @Test
    void transactionVersion1IsReportedAndItsEpochBehaviourAgrees() {
        cluster.setTransactionVersion((short) 1);
        try {
            // The controller finalized the level; the broker's metadata may tell it a moment later.
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> cluster.admin()
                                    .describeFeatures()
                                    .featureMetadata()
                                    .get(10, TimeUnit.SECONDS)
                                    .finalizedFeatures()
                                    .get("transaction.version")
                                    .maxVersionLevel()
                            == 1);
            FencingReport report = probe(
                    TopicSpec.DEFAULTS
                            .withName("coordination-tv1")
                            .withReplicationFactor(1)
                            .withAllowUnsafe(true),
                    false);
            assertThat(report.check("transaction-version").orElseThrow().finding())
                    .isEqualTo("transaction.version=1");
            assertThat(report.check("epoch-behaviour").orElseThrow()).satisfies(check -> {
                assertThat(check.status()).isEqualTo(ProbeStatus.PASS);
                assertThat(check.finding()).contains("as transaction.version=1 says");
            });
            assertThat(report.check("live-fence").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
            assertThat(report.check("aborted-read").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        } finally {
            cluster.setTransactionVersion((short) 2);
        }
    }

    @Test
    void aTopicWithUncleanLeaderElectionAndOneWithMinInsyncReplicasOneAreNamed() throws Exception {
        cluster.admin()
                .createTopics(List.of(
                        new NewTopic("unclean", 1, (short) 1)
                                .configs(Map.of(
                                        "cleanup.policy",
                                        "compact",
                                        "unclean.leader.election.enable",
                                        "true",
                                        "min.insync.replicas",
                                        "2")),
                        new NewTopic("single-isr", 1, (short) 1)
                                .configs(Map.of("cleanup.policy", "compact", "min.insync.replicas", "1"))))
                .all()
                .get(20, TimeUnit.SECONDS);

        FencingReport unclean = probe(TopicSpec.DEFAULTS.withName("unclean").withPartitions(1), true);
        assertThat(unclean.check("topic.unclean-leader-election").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.finding()).isEqualTo("unclean: unclean.leader.election.enable=true");
            assertThat(check.fix()).contains("--add-config unclean.leader.election.enable=false");
        });
        assertThat(unclean.check("topic.cleanup-policy").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        assertThatThrownBy(unclean::requireNoFailure)
                .isInstanceOf(FencingProbeException.class)
                .hasMessageContaining("topic.unclean-leader-election FAIL")
                .hasMessageContaining("Fix: kafka-configs.sh");

        FencingReport singleIsr =
                probe(TopicSpec.DEFAULTS.withName("single-isr").withPartitions(1), true);
        assertThat(singleIsr.check("topic.min-insync-replicas").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.finding()).isEqualTo("single-isr: effective min.insync.replicas=1");
        });
        assertThat(singleIsr
                        .check("topic.unclean-leader-election")
                        .orElseThrow()
                        .status())
                .isEqualTo(ProbeStatus.PASS);
        assertThat(singleIsr.status()).isEqualTo(ProbeStatus.FAIL);
    }

    /**
     * A topic a broker created on first use (its defaults: delete policy, its partition
     * count), as after a cluster was replaced under running members: the fixes say to
     * delete it and let the members create it, not to make the members use its count.
     */
    @Test
    void aTopicABrokerCreatedWithItsDefaultsIsToBeDeletedNotAdoptedSaysTheFix() throws Exception {
        cluster.admin()
                .createTopics(List.of(new NewTopic("auto-created", 1, (short) 1)))
                .all()
                .get(20, TimeUnit.SECONDS);

        FencingReport report = probe(TopicSpec.DEFAULTS.withName("auto-created").withPartitions(3), true);
        assertThat(report.check("topic.cleanup-policy").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.finding()).isEqualTo("auto-created: cleanup.policy=delete");
            assertThat(check.fix())
                    .contains("auto.create.topics.enable=true", "kafka-topics.sh --delete --topic auto-created");
        });
        assertThat(report.check("topic.partitions").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.fix()).startsWith("see topic.cleanup-policy first");
        });
    }

    @Test
    void liveChecksThatPassedAreReusedOnlyWhenAskedForAndOnlyOnTheSameCluster() {
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("coordination-reuse")
                .withReplicationFactor(1)
                .withAllowUnsafe(true);
        FencingProbe reusing = FencingProbe.builder(cluster.connection())
                .topic(topic)
                .timeout(Duration.ofSeconds(20))
                .reuseLiveChecksFor(Duration.ofMinutes(10))
                .build();
        FencingReport first = reusing.run();
        FencingReport second = reusing.run();
        assertThat(second.transactionalId()).isEqualTo(first.transactionalId());
        assertThat(second.check("live-fence").orElseThrow().finding()).endsWith(", reused)");
        assertThat(second.check("live-fence").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        // The read-only checks run again; without reuse the live checks do too.
        assertThat(second.check("topic").orElseThrow().finding()).doesNotContain("reused");
        FencingReport fresh = probe(topic, false);
        assertThat(fresh.transactionalId()).isNotEqualTo(first.transactionalId());
        assertThat(fresh.check("live-fence").orElseThrow().finding()).doesNotContain("reused");
    }

    @Test
    void aReadOnlyRunWritesNothingAndSaysWhatItDidNotCheck() throws Exception {
        FencingReport report = probe(
                TopicSpec.DEFAULTS
                        .withName("read-only")
                        .withReplicationFactor(1)
                        .withAllowUnsafe(true),
                true);
        assertThat(report.readOnly()).isTrue();
        assertThat(report.probeTopic()).isNull();
        assertThat(report.skipped())
                .extracting(ProbeCheck::name)
                .containsExactly("live-fence", "commit-after-fence", "epoch-behaviour", "aborted-read");
        assertThat(report.skipped())
                .allSatisfy(check -> assertThat(check.finding()).isEqualTo("not checked (read-only)"));
        assertThat(report.check("topic").orElseThrow().finding()).contains("does not exist yet");
        Set<String> topics = cluster.admin().listTopics().names().get(10, TimeUnit.SECONDS);
        assertThat(topics).doesNotContain("read-only", "read-only-probe");
    }

    /**
     * A user without Spring probes through the client it will contend with: the cluster,
     * topic, timeout and transaction timeout of the client's own transport. The probe writes
     * only to its probe topic (the coordination topic does not even exist after it), and the
     * client contends afterwards as usual.
     */
    @Test
    void aCoordinationClientProbesItsOwnTransportsClusterAndTopicBeforeContending() throws Exception {
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("coordination-client")
                .withPartitions(3)
                .withReplicationFactor(1)
                .withAllowUnsafe(true);
        try (KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                        cluster.connection(), topic, Duration.ofSeconds(20), Duration.ofSeconds(20));
                CoordinationClient client = new CoordinationClient(transport)) {
            FencingReport report = client.probe();

            assertThat(report.clusterId())
                    .isEqualTo(cluster.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS));
            assertThat(report.bootstrapServers()).isEqualTo(cluster.bootstrapServers());
            assertThat(report.topic()).isEqualTo("coordination-client");
            assertThat(report.check("broker.transaction-timeouts").orElseThrow().status())
                    .isEqualTo(ProbeStatus.PASS);
            for (String live : List.of("live-fence", "commit-after-fence", "epoch-behaviour", "aborted-read")) {
                assertThat(report.check(live).orElseThrow().status()).as(live).isEqualTo(ProbeStatus.PASS);
            }
            assertThat(report.failures()).isEmpty();
            assertThat(report.probeTopic()).isEqualTo("coordination-client-probe");
            assertThat(cluster.admin().listTopics().names().get(10, TimeUnit.SECONDS))
                    .contains("coordination-client-probe")
                    .doesNotContain("coordination-client");

            Leadership held = client.acquire(Role.of("probed"), MemberId.of("m"), Duration.ofSeconds(30));
            assertThat(held.term()).isNotNegative();
            held.close();
        }
    }

    /** The transport's transaction timeout is the lease the probe checks; a read-only run from the client writes nothing. */
    @Test
    void theClientsProbeChecksItsTransportsTransactionTimeoutAndCanRunReadOnly() throws Exception {
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("coordination-client-lease")
                .withReplicationFactor(1)
                .withAllowUnsafe(true);
        // Longer than the brokers' transaction.max.timeout.ms (15 min by default): every InitProducerId would be
        // refused.
        try (KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                        cluster.connection(), topic, Duration.ofSeconds(20), Duration.ofMinutes(16));
                CoordinationClient client = new CoordinationClient(transport)) {
            FencingReport report = client.fencingProbe().readOnly(true).build().run();

            assertThat(report.check("broker.transaction-timeouts").orElseThrow())
                    .satisfies(check -> {
                        assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
                        assertThat(check.finding())
                                .contains(
                                        "the lease is " + Duration.ofMinutes(16).toMillis() + " ms");
                    });
            assertThat(report.readOnly()).isTrue();
            assertThat(cluster.admin().listTopics().names().get(10, TimeUnit.SECONDS))
                    .doesNotContain("coordination-client-lease", "coordination-client-lease-probe");
        }
    }

    /** A transport given its clients, or one of another kind, cannot be probed by the client: it says what to use. */
    @Test
    void aClientOnATransportNotCreatedFromSettingsSaysItCannotProbe() {
        try (InMemoryCoordinationTransport transport = new InMemoryCluster().transport(TopicSpec.DEFAULTS);
                CoordinationClient client = new CoordinationClient(transport)) {
            assertThatThrownBy(client::probe)
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("KafkaCoordinationTransport.create")
                    .hasMessageContaining("FencingProbe.builder(connection)");
        }
    }

    @Test
    void aGatewayWithoutTransactionsFailsTheLiveFenceNamingTheUnsupportedApi() {
        FencingReport report = probe("IGGY", "coordination-iggy");
        System.out.println("FencingProbeIT iggy: " + report.checks() + "; gateway answered " + IGGY.answered());

        assertThat(report.status()).isEqualTo(ProbeStatus.FAIL);
        assertThat(report.check("live-fence").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.finding())
                    .startsWith("InitProducerId of producer A failed")
                    .contains("not supported");
            assertThat(check.meaning()).contains("does not support Kafka transactions");
        });
        assertThat(report.check("aborted-read").orElseThrow().status()).isEqualTo(ProbeStatus.SKIPPED);
        assertThat(IGGY.answered()).anyMatch(answer -> answer.startsWith("INIT_PRODUCER_ID"));
        assertThatThrownBy(report::requireNoFailure)
                .isInstanceOf(FencingProbeException.class)
                .hasMessageContaining("live-fence FAIL: InitProducerId of producer A failed");
    }

    @Test
    void aGatewayThatFencesACommitNoNewerProducerCausedFailsNamingTheFalseFence() {
        FencingReport report = probe("GRAVITEE", "coordination-gravitee");
        System.out.println("FencingProbeIT gravitee: " + report.checks() + "; gateway answered " + GRAVITEE.answered());

        assertThat(report.status()).isEqualTo(ProbeStatus.FAIL);
        // The real fence is still seen (the gateway answers the deposed producer's commit as fenced too)...
        assertThat(report.check("live-fence").orElseThrow().status()).isEqualTo(ProbeStatus.PASS);
        // ...but so is a fence no newer producer caused.
        assertThat(report.check("commit-after-fence").orElseThrow()).satisfies(check -> {
            assertThat(check.status()).isEqualTo(ProbeStatus.FAIL);
            assertThat(check.finding())
                    .contains("answered as fenced")
                    .contains("although no other producer initialized");
            assertThat(check.meaning()).contains("A fence that no newer leader caused");
        });
        assertThat(GRAVITEE.answered()).anyMatch(answer -> answer.startsWith("END_TXN"));
    }
}
