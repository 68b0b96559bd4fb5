package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One member reads every role's partition through one consumer. When the only broker of
 * one partition of the coordination topic is gone, the roles on the other partitions
 * must go on renewing on time: a read of the dead partition may not hold the reader for
 * a whole operation timeout.
 */
class SlowPartitionIT {

    private static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofSeconds(1));

    /** One role per partition; the test below covers it with 24 roles on the dead partition, so this runs with -Plong. */
    @Test
    @Tag("long")
    void rolesOnHealthyPartitionsKeepTheirLeadershipWhileAnotherPartitionIsOffline(@TempDir Path dir) throws Exception {
        try (KafkaProcessCluster cluster =
                KafkaProcessCluster.builder(dir).nodes(3).start()) {
            int doomed = cluster.nodes().get(2).id();
            int healthy = cluster.nodes().get(0).id();
            String topic = "slow-partition";
            try (Admin admin = cluster.admin()) {
                // Partition 0 lives on the doomed node alone, the others on a node that stays.
                admin.createTopics(List.of(new NewTopic(
                                        topic, Map.of(0, List.of(doomed), 1, List.of(healthy), 2, List.of(healthy)))
                                .configs(Map.of(
                                        "cleanup.policy", "compact", "unclean.leader.election.enable", "false"))))
                        .all()
                        .get(30, TimeUnit.SECONDS);
            }
            TopicSpec spec = TopicSpec.DEFAULTS
                    .withName(topic)
                    .withPartitions(3)
                    .withReplicationFactor(1)
                    .withCreate(false);
            Role sick = roleOn(0, 3);
            Role well = roleOn(1, 3);
            List<LeadershipEndCause> wellEnds = new CopyOnWriteArrayList<>();
            try (KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()),
                            spec,
                            Duration.ofSeconds(15),
                            LEASE.duration());
                    CoordinationClient client = new CoordinationClient(transport, LEASE, InstantSource.system());
                    Contender onSick =
                            new Contender(client, sick, MemberId.of("n1"), listener(new CopyOnWriteArrayList<>()));
                    Contender onWell = new Contender(client, well, MemberId.of("n1"), listener(wellEnds))) {
                onSick.start();
                onWell.start();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> onSick.leadership().isPresent()
                                && onWell.leadership().isPresent());
                Leadership held = onWell.leadership().orElseThrow();
                moveTransactionCoordinatorsOff(cluster, doomed);

                cluster.kill(doomed);
                // Three leases: every renewal of the healthy role must land before its deadline.
                Instant until = Instant.now().plus(LEASE.duration().multipliedBy(3));
                await().atMost(LEASE.duration().multipliedBy(4))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> {
                            assertThat(wellEnds)
                                    .as("ends of the role on the healthy partition")
                                    .isEmpty();
                            assertThat(held.isActive()).isTrue();
                            return Instant.now().isAfter(until);
                        });
                assertThat(held.deadline()).isAfter(until);
            }
        }
    }

    /**
     * Many roles on the dead partition, of two members: the holder's renewals of them
     * block on their commits, the standby's passes for them read a partition that does not
     * answer. Neither may hold up another role: the holder's role on a healthy partition
     * keeps renewing on time, and a release of another healthy role is taken over as fast
     * as without the dead partition.
     */
    @Test
    void manyRolesOnADeadPartitionHoldUpNoRoleOnAHealthyOne(@TempDir Path dir) throws Exception {
        try (KafkaProcessCluster cluster =
                KafkaProcessCluster.builder(dir).nodes(3).start()) {
            int doomed = cluster.nodes().get(2).id();
            int healthy = cluster.nodes().get(0).id();
            String topic = "slow-partition-many";
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(
                                        topic, Map.of(0, List.of(doomed), 1, List.of(healthy), 2, List.of(healthy)))
                                .configs(Map.of(
                                        "cleanup.policy", "compact", "unclean.leader.election.enable", "false"))))
                        .all()
                        .get(30, TimeUnit.SECONDS);
            }
            TopicSpec spec = TopicSpec.DEFAULTS
                    .withName(topic)
                    .withPartitions(3)
                    .withReplicationFactor(1)
                    .withCreate(false);
            List<Role> sick = rolesOn(0, 3, SICK_ROLES);
            Role well = roleOn(1, 3);
            Role handedOver = rolesOn(2, 3, 1).get(0);
            Map<String, Object> connection =
                    Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            List<LeadershipEndCause> wellEnds = new CopyOnWriteArrayList<>();
            List<Contender> contenders = new ArrayList<>();
            try (KafkaCoordinationTransport holderTransport = KafkaCoordinationTransport.create(
                            connection, spec, Duration.ofSeconds(15), LEASE.duration());
                    CoordinationClient holderClient =
                            new CoordinationClient(holderTransport, LEASE, InstantSource.system());
                    KafkaCoordinationTransport standbyTransport = KafkaCoordinationTransport.create(
                            connection, spec, Duration.ofSeconds(15), LEASE.duration());
                    CoordinationClient standbyClient =
                            new CoordinationClient(standbyTransport, LEASE, InstantSource.system())) {
                try {
                    MemberId holder = MemberId.of("holder");
                    MemberId standby = MemberId.of("standby");
                    List<Contender> held = new ArrayList<>();
                    for (Role role : sick) {
                        held.add(new Contender(holderClient, role, holder, listener(new CopyOnWriteArrayList<>())));
                    }
                    Contender onWell = new Contender(holderClient, well, holder, listener(wellEnds));
                    Contender releasing =
                            new Contender(holderClient, handedOver, holder, listener(new CopyOnWriteArrayList<>()));
                    held.add(onWell);
                    held.add(releasing);
                    contenders.addAll(held);
                    held.forEach(Contender::start);
                    await().atMost(Duration.ofSeconds(120))
                            .until(() ->
                                    held.stream().allMatch(c -> c.leadership().isPresent()));
                    List<Contender> standbys = new ArrayList<>();
                    for (Role role : sick) {
                        standbys.add(
                                new Contender(standbyClient, role, standby, listener(new CopyOnWriteArrayList<>())));
                    }
                    Contender takingOver =
                            new Contender(standbyClient, handedOver, standby, listener(new CopyOnWriteArrayList<>()));
                    standbys.add(takingOver);
                    contenders.addAll(standbys);
                    standbys.forEach(Contender::start);
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> sick.stream().allMatch(role -> inRoster(holderClient, role, standby))
                                    && inRoster(holderClient, handedOver, standby));
                    Leadership wellHeld = onWell.leadership().orElseThrow();
                    moveTransactionCoordinatorsOff(cluster, doomed);

                    cluster.kill(doomed);
                    // The holder's leases on the dead partition lapse; the standby's passes for
                    // them now read the dead partition, at once and over and over.
                    await().atMost(LEASE.duration().multipliedBy(3))
                            .until(() -> held.subList(0, SICK_ROLES).stream()
                                    .noneMatch(c -> c.leadership().isPresent()));
                    Instant until = Instant.now().plus(LEASE.duration().multipliedBy(2));
                    await().atMost(LEASE.duration().multipliedBy(3))
                            .pollInterval(Duration.ofMillis(200))
                            .until(() -> {
                                assertThat(wellEnds)
                                        .as("ends of the role on the healthy partition")
                                        .isEmpty();
                                assertThat(wellHeld.isActive()).isTrue();
                                return Instant.now().isAfter(until);
                            });
                    assertThat(wellHeld.deadline()).isAfter(until);

                    long released = System.nanoTime();
                    assertThat(releasing.release()).isTrue();
                    await().atMost(Duration.ofSeconds(30))
                            .pollInterval(Duration.ofMillis(5))
                            .until(() -> takingOver.leadership().isPresent());
                    Duration takeover = Duration.ofNanos(System.nanoTime() - released);
                    // A takeover after a release is tens of milliseconds (one read, one
                    // InitProducerId, one commit); behind reads of the dead partition it took seconds.
                    assertThat(takeover)
                            .as("takeover of %s after its release", handedOver)
                            .isLessThan(TAKEOVER_BOUND);
                    assertThat(wellEnds)
                            .as("ends of the role on the healthy partition")
                            .isEmpty();
                } finally {
                    // Before the clients close under them.
                    contenders.forEach(Contender::stop);
                    contenders.forEach(contender -> contender.awaitStopped(Duration.ofSeconds(5)));
                }
            }
        }
    }

    private static final int SICK_ROLES = 24;
    /** Generous for a busy 2-core machine; behind the dead partition's reads it took over 4 s. */
    private static final Duration TAKEOVER_BOUND = Duration.ofMillis(1500);

    private static boolean inRoster(CoordinationClient client, Role role, MemberId member) {
        return client.observe(role, Duration.ZERO).roster().stream()
                .anyMatch(ranked -> ranked.member().equals(member));
    }

    private static List<Role> rolesOn(int partition, int partitions, int count) {
        List<Role> roles = new ArrayList<>();
        for (int i = 0; roles.size() < count; i++) {
            Role role = Role.of("many-" + i);
            if (RolePartitioner.partitionFor(role, partitions) == partition) {
                roles.add(role);
            }
        }
        return roles;
    }

    /**
     * Only the coordination topic's partition 0 should go offline: the transaction
     * coordinators (partitions of __transaction_state) move to the other nodes first, so
     * the renewals of the healthy role have a live coordinator throughout.
     */
    private static void moveTransactionCoordinatorsOff(KafkaProcessCluster cluster, int doomed) throws Exception {
        List<Integer> others = cluster.nodes().stream()
                .map(KafkaProcessCluster.Node::id)
                .filter(id -> id != doomed)
                .toList();
        try (Admin admin = cluster.admin()) {
            var description = admin.describeTopics(List.of("__transaction_state"))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get("__transaction_state");
            Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
            Set<TopicPartition> partitions = new HashSet<>();
            for (TopicPartitionInfo info : description.partitions()) {
                TopicPartition partition = new TopicPartition("__transaction_state", info.partition());
                moves.put(partition, Optional.of(new NewPartitionReassignment(others)));
                partitions.add(partition);
            }
            admin.alterPartitionReassignments(moves).all().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> admin.listPartitionReassignments(partitions)
                            .reassignments()
                            .get(30, TimeUnit.SECONDS)
                            .isEmpty());
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> admin
                            .describeTopics(List.of("__transaction_state"))
                            .allTopicNames()
                            .get(30, TimeUnit.SECONDS)
                            .get("__transaction_state")
                            .partitions()
                            .stream()
                            .allMatch(info -> info.leader() != null
                                    && info.leader().id() != doomed
                                    && !info.replicas().stream().anyMatch(node -> node.id() == doomed)));
        }
    }

    private static Role roleOn(int partition, int partitions) {
        for (int i = 0; ; i++) {
            Role role = Role.of("role-" + i);
            if (RolePartitioner.partitionFor(role, partitions) == partition) {
                return role;
            }
        }
    }

    private static Contender.Listener listener(List<LeadershipEndCause> ends) {
        return new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add(cause);
            }
        };
    }
}
