package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeConfigsResult;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The roles' reads of a partition whose leader is gone, on Kafka's mock consumer: they
 * must not each hold a thread for a whole operation timeout.
 */
class TopicReadersTest {

    private static final int PARTITIONS = 3;
    private static final TopicSpec SPEC =
            TopicSpec.DEFAULTS.withName("readers").withPartitions(PARTITIONS).withReplicationFactor(1);
    private static final TopicPartition DEAD = new TopicPartition(SPEC.name(), 0);
    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    /**
     * Reads that began together, before any slice found the partition unanswering (a role
     * per pass thread, all at once), each waited out the whole timeout: on a member with
     * many roles on the dead partition, every pass thread, and a healthy role's takeover
     * queued behind them (SlowPartitionIT). Once one finds it unanswering, it alone waits.
     */
    @Test
    void readsOfADeadPartitionThatBeganTogetherLeaveOneToWaitForIt() throws Exception {
        AtomicReference<@Nullable Thread> second = new AtomicReference<>();
        CountDownLatch firstAsking = new CountDownLatch(1);
        CountDownLatch answers = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest") {
            @Override
            public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
                if (asked.getAndIncrement() == 0) {
                    // The first slice goes unanswered only once the second read queues for the reader.
                    firstAsking.countDown();
                    await().atMost(Duration.ofSeconds(10)).until(() -> {
                        Thread queued = second.get();
                        return queued != null && queued.getState() == Thread.State.WAITING;
                    });
                    throw new org.apache.kafka.common.errors.TimeoutException("no leader");
                }
                try {
                    if (!answers.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new org.apache.kafka.common.errors.TimeoutException("no leader");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new org.apache.kafka.common.errors.InterruptException(e);
                }
                return super.endOffsets(partitions, timeout);
            }
        };
        reader.updateBeginningOffsets(Map.of(DEAD, 0L));
        reader.updateEndOffsets(Map.of(DEAD, 0L));
        TopicReaders readers = new TopicReaders(pinned(), SPEC.name(), reader, TIMEOUT);
        List<Role> roles = rolesOn(DEAD.partition(), 2);

        CompletableFuture<RoleRecords> first = new CompletableFuture<>();
        CompletableFuture<RoleRecords> then = new CompletableFuture<>();
        start(readers, roles.get(0), first);
        assertThat(firstAsking.await(10, TimeUnit.SECONDS)).isTrue();
        second.set(start(readers, roles.get(1), then));

        // One of them gives up at once, long before the timeout; the other waits for the partition.
        await().atMost(TIMEOUT.dividedBy(2)).until(() -> first.isDone() || then.isDone());
        CompletableFuture<RoleRecords> gaveUp = first.isDone() ? first : then;
        CompletableFuture<RoleRecords> probing = gaveUp == first ? then : first;
        assertThat(gaveUp)
                .failsWithin(Duration.ZERO)
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause()
                .isInstanceOf(CoordinationTimeoutException.class)
                .withMessageContaining("another read waits for it now");
        assertThat(probing).isNotDone();

        answers.countDown();
        assertThat(probing.get(10, TimeUnit.SECONDS).nextOffset()).isZero();
    }

    /**
     * A partition whose own lane was not built read on the shared reader whenever that was
     * free at the instant, and there queued behind the probe of a dead partition slice after
     * slice. While one does not answer, the others read on their own lanes.
     */
    @Test
    void whileAPartitionDoesNotAnswerTheOthersReadOnTheirOwnLanes() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        MockConsumer<byte[], byte[]> shared = new MockConsumer<>("earliest") {
            @Override
            public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
                if (!partitions.contains(DEAD)) {
                    return super.endOffsets(partitions, timeout);
                }
                try {
                    // The dead partition's leader never answers; the wait is Kafka's, bounded by the slice.
                    never.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new org.apache.kafka.common.errors.TimeoutException("no leader");
            }
        };
        TopicPartition healthy = new TopicPartition(SPEC.name(), 1);
        shared.updateBeginningOffsets(Map.of(healthy, 0L));
        shared.updateEndOffsets(Map.of(healthy, 0L));
        List<MockConsumer<byte[], byte[]>> built = new ArrayList<>();
        TopicReaders readers = new TopicReaders(pinned(), SPEC.name(), shared, Duration.ofMillis(300));
        readers.describeWith(() -> {
            MockConsumer<byte[], byte[]> lane = new MockConsumer<>("earliest");
            lane.updateBeginningOffsets(Map.of(healthy, 0L));
            lane.updateEndOffsets(Map.of(healthy, 0L));
            built.add(lane);
            return lane;
        });

        assertThat(catchThrowable(
                        () -> readers.read(rolesOn(DEAD.partition(), 1).get(0), 0, Duration.ZERO)))
                .isInstanceOf(CoordinationTimeoutException.class);
        // The shared reader is free now: before, the healthy partition read on it.
        RoleRecords read = readers.read(rolesOn(healthy.partition(), 1).get(0), 0, Duration.ZERO);

        assertThat(read.nextOffset()).isZero();
        assertThat(built).hasSize(1);
        assertThat(built.get(0).assignment()).containsExactly(healthy);
        assertThat(shared.assignment()).containsExactly(DEAD);
    }

    /**
     * A read between slices when the transport closes: while a partition does not answer,
     * the read would build its lane's consumer after the close had closed every lane, and
     * nothing would ever close it. Now the read fails as any read after the close does.
     */
    @Test
    void aReadAfterTheCloseBuildsNoConsumerThatTheCloseWouldMiss() throws Exception {
        MockConsumer<byte[], byte[]> shared = new MockConsumer<>("earliest") {
            @Override
            public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
                throw new org.apache.kafka.common.errors.TimeoutException("no leader");
            }
        };
        List<MockConsumer<byte[], byte[]>> built = new ArrayList<>();
        TopicReaders readers = new TopicReaders(pinned(), SPEC.name(), shared, Duration.ofMillis(300));
        readers.describeWith(() -> {
            MockConsumer<byte[], byte[]> lane = new MockConsumer<>("earliest");
            built.add(lane);
            return lane;
        });
        assertThat(catchThrowable(
                        () -> readers.read(rolesOn(DEAD.partition(), 1).get(0), 0, Duration.ZERO)))
                .isInstanceOf(CoordinationTimeoutException.class);
        assertThat(built).as("no lane needed yet").isEmpty();

        readers.closeReader(Duration.ofMillis(100));
        readers.closeDescribeReader(Duration.ofMillis(100));
        Throwable healthyRead = catchThrowable(() -> readers.read(rolesOn(1, 1).get(0), 0, Duration.ZERO));
        Throwable describeRead =
                catchThrowable(() -> readers.readAll(Map.of(rolesOn(2, 1).get(0), 0L)));

        assertThat(healthyRead).isInstanceOf(io.krabka.streams.coordination.CoordinationException.class);
        assertThat(describeRead).isInstanceOf(io.krabka.streams.coordination.CoordinationException.class);
        assertThat(built).as("consumers built after the close").isEmpty();
    }

    private static Thread start(TopicReaders readers, Role role, CompletableFuture<RoleRecords> into) {
        Thread thread = new Thread(() -> {
            try {
                into.complete(readers.read(role, 0, Duration.ZERO));
            } catch (RuntimeException e) {
                into.completeExceptionally(e);
            }
        });
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static List<Role> rolesOn(int partition, int count) {
        List<Role> roles = new ArrayList<>();
        for (int i = 0; roles.size() < count; i++) {
            Role role = Role.of("role-" + i);
            if (RolePartitioner.partitionFor(role, PARTITIONS) == partition) {
                roles.add(role);
            }
        }
        return roles;
    }

    /** The topic pinned from an admin that describes it as safe; the cluster id is not told. */
    private static PinnedTopic pinned() throws Exception {
        Node node = new Node(0, "localhost", 9092);
        List<TopicPartitionInfo> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartitionInfo(p, node, List.of(node), List.of(node)));
        }
        TopicDescription description =
                new TopicDescription(SPEC.name(), false, partitions, Set.of(), Uuid.randomUuid());
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, SPEC.name());
        Config config = new Config(List.of(
                new ConfigEntry(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT),
                new ConfigEntry(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false"),
                new ConfigEntry(
                        TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(SPEC.requiredMinInsyncReplicas()))));
        // Its constructor is package-private: the one result here that cannot be subclassed.
        Constructor<DescribeClusterResult> clusterResult = DescribeClusterResult.class.getDeclaredConstructor(
                KafkaFuture.class, KafkaFuture.class, KafkaFuture.class, KafkaFuture.class);
        clusterResult.setAccessible(true);
        KafkaFuture<String> noClusterId = KafkaFuture.completedFuture(null);
        DescribeClusterResult cluster = clusterResult.newInstance(
                KafkaFuture.completedFuture(List.of(node)),
                KafkaFuture.completedFuture(node),
                noClusterId,
                KafkaFuture.completedFuture(Set.of()));
        Admin admin = (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "describeTopics" -> {
                            return new DescribeTopicsResult(
                                    null, Map.of(SPEC.name(), KafkaFuture.completedFuture(description))) {};
                        }
                        case "describeConfigs" -> {
                            return new DescribeConfigsResult(Map.of(resource, KafkaFuture.completedFuture(config))) {};
                        }
                        case "describeCluster" -> {
                            return cluster;
                        }
                        case "close" -> {
                            return null;
                        }
                        default -> throw new UnsupportedOperationException("not here: " + method.getName());
                    }
                });
        PinnedTopic topic = new PinnedTopic(admin, SPEC, TIMEOUT, null);
        assertThat(topic.partitionCount()).isEqualTo(PARTITIONS);
        return topic;
    }
}
