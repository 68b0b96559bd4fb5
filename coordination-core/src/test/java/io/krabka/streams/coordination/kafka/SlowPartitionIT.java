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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One member reads every role's partition through one consumer. When the only broker of
 * one partition of the coordination topic is gone, the roles on the other partitions
 * must go on renewing on time: a read of the dead partition may not hold the reader for
 * a whole operation timeout.
 */
class SlowPartitionIT {

    private static final LeaseConfig LEASE = new LeaseConfig(Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofSeconds(1));

    @Test
    void rolesOnHealthyPartitionsKeepTheirLeadershipWhileAnotherPartitionIsOffline(@TempDir Path dir) throws Exception {
        try (KafkaProcessCluster cluster = KafkaProcessCluster.builder(dir).nodes(3).start()) {
            int doomed = cluster.nodes().get(2).id();
            int healthy = cluster.nodes().get(0).id();
            String topic = "slow-partition";
            try (Admin admin = cluster.admin()) {
                // Partition 0 lives on the doomed node alone, the others on a node that stays.
                admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(doomed), 1, List.of(healthy), 2, List.of(healthy)))
                        .configs(Map.of("cleanup.policy", "compact", "unclean.leader.election.enable", "false"))))
                        .all().get(30, TimeUnit.SECONDS);
            }
            TopicSpec spec = TopicSpec.DEFAULTS.withName(topic).withPartitions(3).withReplicationFactor(1).withCreate(false);
            Role sick = roleOn(0, 3);
            Role well = roleOn(1, 3);
            List<LeadershipEndCause> wellEnds = new CopyOnWriteArrayList<>();
            try (KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                         Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()), spec,
                         Duration.ofSeconds(15), LEASE.duration());
                 CoordinationClient client = new CoordinationClient(transport, LEASE, InstantSource.system());
                 Contender onSick = new Contender(client, sick, MemberId.of("n1"), listener(new CopyOnWriteArrayList<>()));
                 Contender onWell = new Contender(client, well, MemberId.of("n1"), listener(wellEnds))) {
                onSick.start();
                onWell.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> onSick.leadership().isPresent() && onWell.leadership().isPresent());
                Leadership held = onWell.leadership().orElseThrow();
                moveTransactionCoordinatorsOff(cluster, doomed);

                cluster.kill(doomed);
                // Three leases: every renewal of the healthy role must land before its deadline.
                Instant until = Instant.now().plus(LEASE.duration().multipliedBy(3));
                await().atMost(LEASE.duration().multipliedBy(4)).pollInterval(Duration.ofMillis(200)).until(() -> {
                    assertThat(wellEnds).as("ends of the role on the healthy partition").isEmpty();
                    assertThat(held.isActive()).isTrue();
                    return Instant.now().isAfter(until);
                });
                assertThat(held.deadline()).isAfter(until);
            }
        }
    }

    /**
     * Only the coordination topic's partition 0 should go offline: the transaction
     * coordinators (partitions of __transaction_state) move to the other nodes first, so
     * the renewals of the healthy role have a live coordinator throughout.
     */
    private static void moveTransactionCoordinatorsOff(KafkaProcessCluster cluster, int doomed) throws Exception {
        List<Integer> others = cluster.nodes().stream().map(KafkaProcessCluster.Node::id).filter(id -> id != doomed).toList();
        try (Admin admin = cluster.admin()) {
            var description = admin.describeTopics(List.of("__transaction_state")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get("__transaction_state");
            Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
            Set<TopicPartition> partitions = new HashSet<>();
            for (TopicPartitionInfo info : description.partitions()) {
                TopicPartition partition = new TopicPartition("__transaction_state", info.partition());
                moves.put(partition, Optional.of(new NewPartitionReassignment(others)));
                partitions.add(partition);
            }
            admin.alterPartitionReassignments(moves).all().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.listPartitionReassignments(partitions).reassignments()
                    .get(30, TimeUnit.SECONDS).isEmpty());
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.describeTopics(List.of("__transaction_state")).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get("__transaction_state").partitions().stream()
                    .allMatch(info -> info.leader() != null && info.leader().id() != doomed && !info.replicas().stream()
                            .anyMatch(node -> node.id() == doomed)));
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
            public void granted(Leadership leadership) {
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add(cause);
            }
        };
    }
}
