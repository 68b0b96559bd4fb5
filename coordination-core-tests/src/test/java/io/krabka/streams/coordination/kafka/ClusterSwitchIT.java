package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disaster-recovery switch under running members: two independent one-broker clusters
 * (broker JVMs), both advertising the address of one {@link SwitchableForwarder}, which
 * the test points from the first to the second. Kafka's clients follow it without
 * complaint (their metadata logs the new cluster id at INFO and goes on; an idempotent
 * producer appends there; a consumer reads the other cluster's log at its old positions).
 * The member must not: the holder's leadership ends, saying that another cluster
 * answers, and nobody challenges there, so the second cluster never sees the role's
 * transactional id.
 */
@Tag("long") // two broker JVMs of their own, about 30 s: -Plong
class ClusterSwitchIT {

    private static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofSeconds(1));
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void afterADisasterRecoverySwitchTheHolderStopsSayingWhyAndNobodyChallengesOnTheOtherCluster(@TempDir Path dir)
            throws Exception {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName("coordination-dr")
                .withReplicationFactor(1)
                .withPartitions(2);
        Role role = Role.of("dr-role");
        try (SwitchableForwarder address = new SwitchableForwarder()) {
            CompletableFuture<KafkaProcessCluster> startingA =
                    CompletableFuture.supplyAsync(() -> start(dir.resolve("a"), address));
            KafkaProcessCluster b = start(dir.resolve("b"), address);
            try (KafkaProcessCluster a = startingA.get(120, TimeUnit.SECONDS);
                    b;
                    Admin adminA = a.admin();
                    Admin adminB = b.admin()) {
                String idA = adminA.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                String idB = adminB.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                prepareTheOtherCluster(adminB, b, spec);
                address.switchTo(a.node(1).port("DR"));
                Map<String, Object> connection =
                        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + address.port());

                List<String> grants = new CopyOnWriteArrayList<>();
                List<LeadershipEndCause> causes = new CopyOnWriteArrayList<>();
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                try (KafkaCoordinationTransport ta =
                                KafkaCoordinationTransport.create(connection, spec, TIMEOUT, LEASE.duration());
                        KafkaCoordinationTransport tb =
                                KafkaCoordinationTransport.create(connection, spec, TIMEOUT, LEASE.duration());
                        CoordinationClient ca = new CoordinationClient(ta, LEASE, InstantSource.system());
                        CoordinationClient cb = new CoordinationClient(tb, LEASE, InstantSource.system());
                        Contender holder = new Contender(
                                ca, role, MemberId.of("a"), CoordinationTopicIT.recording(grants, failures, causes));
                        Contender standby = new Contender(
                                cb, role, MemberId.of("b"), CoordinationTopicIT.recording(grants, failures, causes))) {
                    holder.start();
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> holder.leadership().isPresent());
                    standby.start();
                    await().atMost(Duration.ofSeconds(30))
                            .until(() ->
                                    cb.observe(role, Duration.ZERO).roster().size() == 2);

                    address.switchTo(b.node(1).port("DR"));
                    long switched = System.nanoTime();
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> !causes.isEmpty()
                                    && holder.problem().orElse(null) instanceof CoordinationConfigurationException
                                    && standby.problem().orElse(null) instanceof CoordinationConfigurationException);
                    System.out.println("ClusterSwitchIT: the holder's leadership ended " + causes + " "
                            + Duration.ofNanos(System.nanoTime() - switched).toMillis() + " ms after the switch: "
                            + chain(failures.get(0)));

                    for (Contender member : List.of(holder, standby)) {
                        assertThat(member.problem().orElseThrow().getMessage())
                                .contains(
                                        "now reaches another Kafka cluster",
                                        "cluster " + idA + " answered when it pinned the coordination topic "
                                                + spec.name(),
                                        "cluster " + idB + " answers now",
                                        "terms restart");
                    }
                    assertThat(holder.leadership()).isEmpty();
                    assertThat(causes).containsExactly(LeadershipEndCause.FAILED);
                    assertThat(failures).hasSize(1);
                    assertThat(chain(failures.get(0)))
                            .as("the end says why")
                            .contains("now reaches another Kafka cluster");

                    // Past two leases, as long as a standby would have waited to challenge the holder's last lease
                    // there:
                    // the other cluster's coordinator never hears of the role (no InitProducerId, no lease
                    // transaction).
                    await().during(LEASE.duration().multipliedBy(2))
                            .atMost(LEASE.duration().multipliedBy(3))
                            .until(() -> grants.size() == 1 && !knows(adminB, role));
                    assertThat(grants).as("nobody challenged after the switch").containsExactly("a");
                }
            }
        }
    }

    private static KafkaProcessCluster start(Path dir, SwitchableForwarder address) {
        return KafkaProcessCluster.builder(dir)
                .settings(AbstractLeadershipIT.BROKER_SETTINGS)
                .listener(new KafkaProcessCluster.Listener("DR", "PLAINTEXT", (node, bound) -> address.port()))
                .start();
    }

    /**
     * The other cluster as a DR site has it: the coordination topic exists (as a mirror
     * would make it) and its transaction coordinator runs (some producer used it), so a
     * renewal that reached it would be answered, not time out.
     */
    private static void prepareTheOtherCluster(Admin admin, KafkaProcessCluster cluster, TopicSpec spec)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        admin.createTopics(List.of(new NewTopic(spec.name(), spec.partitions(), (short) 1)
                        .configs(Map.of("cleanup.policy", "compact"))))
                .all()
                .get(20, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(KafkaCoordinationTransport.transactionalSettings(
                        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()),
                        Role.of("dr-warm-up"),
                        TIMEOUT,
                        TIMEOUT))) {
            producer.initTransactions();
        }
    }

    /** Whether the cluster's transaction coordinator knows the role's transactional id. */
    private static boolean knows(Admin admin, Role role) throws Exception {
        try {
            admin.describeTransactions(List.of(role.name()))
                    .description(role.name())
                    .get(10, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TransactionalIdNotFoundException) {
                return false;
            }
            throw e;
        }
    }

    private static String chain(Throwable failure) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            text.append(t).append(" <- ");
        }
        return text.toString();
    }
}
