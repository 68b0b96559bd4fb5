package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.kafka.clients.CommonClientConfigs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The roles' reads get more readers only while they queue for the shared one, and every
 * read answers its own partition's records whichever reader served it.
 */
class ReaderLanesIT {

    private static final int PARTITIONS = 8;
    private static final MemberId MEMBER = MemberId.of("lanes-member");
    private static KafkaTestCluster cluster;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @Test
    void readsThatQueueForTheSharedReaderGetUpToThreeMoreAndEachReadsItsOwnPartition() throws Exception {
        String clientId = "lanes-" + UUID.randomUUID();
        Map<String, Object> connection = new HashMap<>(Map.of(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                CommonClientConfigs.CLIENT_ID_CONFIG,
                clientId));
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("lanes_" + UUID.randomUUID().toString().replace("-", ""))
                .withPartitions(PARTITIONS)
                .withReplicationFactor(1);
        try (KafkaCoordinationTransport transport =
                KafkaCoordinationTransport.create(connection, topic, Duration.ofSeconds(30), Duration.ofSeconds(30))) {
            List<Role> roles = onePerPartition();
            for (Role role : roles) {
                transport.register(role, MEMBER, 1_000);
            }

            // One read at a time: the shared reader serves them all.
            for (Role role : roles) {
                assertThat(registrationsRead(transport, role)).isEqualTo(1);
            }
            assertThat(readers(clientId)).as("readers while reads do not queue").isEqualTo(1);

            // A read waiting for news on lane 0's partition holds the shared reader for most of
            // its wait, so the reads meanwhile find it busy.
            Role waiting = roles.get(0);
            CompletableFuture<Integer> news = CompletableFuture.supplyAsync(() -> transport
                    .read(waiting, transport.read(waiting, 0, Duration.ZERO).nextOffset(), Duration.ofSeconds(3))
                    .records()
                    .size());
            for (int round = 0; round < 20; round++) {
                for (Role role : roles.subList(1, roles.size())) {
                    assertThat(registrationsRead(transport, role))
                            .as("records of %s", role)
                            .isEqualTo(1);
                }
            }
            assertThat(news.get(30, TimeUnit.SECONDS))
                    .as("news for the waiting read")
                    .isZero();
            assertThat(readers(clientId)).as("readers once reads queued").isBetween(2, TopicReaders.READER_LANES);
        }
        assertThat(readers(clientId)).as("readers after close").isZero();
    }

    /** Roles on the partitions 0 to 7, one each, partition 0's first. */
    private static List<Role> onePerPartition() {
        Role[] byPartition = new Role[PARTITIONS];
        for (int i = 0, found = 0; found < PARTITIONS; i++) {
            Role role = Role.of("lane-role-" + i);
            int partition = RolePartitioner.partitionFor(role, PARTITIONS);
            if (byPartition[partition] == null) {
                byPartition[partition] = role;
                found++;
            }
        }
        return new ArrayList<>(List.of(byPartition));
    }

    /** How many registrations of {@code role} a read of its partition from the start finds. */
    private static long registrationsRead(KafkaCoordinationTransport transport, Role role) {
        List<RawRecord> records = transport.read(role, 0, Duration.ZERO).records();
        // The partition holds this role's registration only: one role per partition.
        return records.stream().filter(record -> record.value() != null).count();
    }

    /** The transport's readers open now: every Kafka consumer registers an app-info MBean under its client.id. */
    private static int readers(String clientId) throws Exception {
        return ManagementFactory.getPlatformMBeanServer()
                .queryNames(
                        new ObjectName("kafka.consumer:type=app-info,id=" + clientId + "-coordination-reader*"), null)
                .size();
    }
}
