package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryConsumer;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Moves this member's roles on demand in a test with {@link AutoConfigureCoordinationTest}:
 * the starter's real leadership loop runs, on an in-memory cluster and a manual lease
 * clock, so what happens next (work started or stopped, events, health) is what happens
 * in production.
 *
 * <p>It also feeds {@code @LeaderListener} methods and reads what they wrote:
 * {@link #send} writes input, {@link #awaitProcessed} waits until a role's listeners
 * committed all of it, and {@link #records} reads an output or dead-letter topic as a
 * {@code read_committed} consumer does. The pipelines are the production ones, on the
 * in-memory cluster: outputs and input offsets commit in one guarded transaction, which a
 * {@link #fence} refuses whole.
 */
public final class CoordinationTestSupport {

    /** How long the await methods wait, by default: passes and the role's work run on real threads. */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);
    private static final MemberId OTHER = MemberId.of("coordination-test-other-member");

    private final InMemoryCluster cluster;
    private final ManualClock clock;
    private final LeadershipLoop loop;
    private final LeaseConfig lease;
    private final TopicSpec topic;
    private final RoleTransitions transitions;
    private final ObjectProvider<LeaderPipelines> pipelines;

    CoordinationTestSupport(InMemoryCluster cluster, ManualClock clock, LeadershipLoop loop, LeaseConfig lease,
            TopicSpec topic, RoleTransitions transitions, ObjectProvider<LeaderPipelines> pipelines) {
        this.transitions = transitions;
        this.pipelines = pipelines;
        this.cluster = cluster;
        this.clock = clock;
        this.loop = loop;
        this.lease = lease;
        this.topic = topic;
    }

    /** The lease clock. */
    public ManualClock clock() {
        return clock;
    }

    /** The in-memory cluster the starter runs on. */
    public InMemoryCluster cluster() {
        return cluster;
    }

    /** Advances the lease clock. */
    public void advance(Duration duration) {
        clock.advance(duration);
    }

    /** What this member does for {@code role} now. */
    public MemberRoleState state(String role) {
        return loop.state(Role.of(role));
    }

    /**
     * Waits until this member holds {@code role}. With no other member in the cluster it
     * takes the role on its own at startup; after {@link #fence} or another member's lease,
     * advance the clock past that lease first.
     */
    public void awaitLeader(String role) {
        await(() -> state(role) == MemberRoleState.LEADER, role + " held by this member");
    }

    /** Waits until this member does not hold {@code role}. */
    public void awaitNotLeader(String role) {
        await(() -> state(role) != MemberRoleState.LEADER, role + " not held by this member");
    }

    /**
     * Another member takes {@code role}: it runs InitProducerId for it (the broker fences
     * this member's producer) and writes its lease. This member's leadership ends as
     * FENCED, its work stops, and it stays a standby until that lease runs out on the
     * clock ({@link #advance}). Returns once this member no longer holds the role.
     */
    public void fence(String role) {
        Role fenced = Role.of(role);
        InMemoryCoordinationTransport other = cluster.transport(topic);
        RoleEpoch epoch = other.initEpoch(fenced);
        long now = clock.millis();
        ProducerState granted = other.describeEpoch(fenced).orElseThrow();
        epoch.transact(List.of(otherLease(fenced, granted.producerId(), granted.producerEpoch(), now)));
        // Then a lease with the epoch its own commit leaves, as a real holder confirms its
        // grant: a standby takes an epoch no lease carries for a challenge in flight.
        ProducerState committed = other.describeEpoch(fenced).orElseThrow();
        short step = (short) (committed.producerEpoch() - granted.producerEpoch());
        epoch.transact(List.of(otherLease(fenced, committed.producerId(), (short) (committed.producerEpoch() + step), now)));
        awaitNotLeader(role);
    }

    private ProducerRecord<byte[], byte[]> otherLease(Role role, long producerId, short producerEpoch, long now) {
        return new ProducerRecord<>(topic.name(), RolePartitioner.partitionFor(role, topic.partitions()), now,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Lease(OTHER, producerId, producerEpoch, now,
                        now + lease.duration().toMillis())));
    }

    /**
     * This member's lease of {@code role} runs out: the clock moves past its deadline, as
     * if renewals had stopped reaching the cluster. The leadership ends as EXPIRED; with no
     * other member, this member takes the role again soon after.
     */
    public void expire(String role) {
        Role expired = Role.of(role);
        loop.leadership(expired).ifPresent(held -> clock.advance(Duration.between(clock.instant(), held.deadline())
                .plusMillis(1)));
    }

    /** This member releases {@code role} (a lease tombstone), as on shutdown or the endpoint's release. */
    public boolean release(String role) {
        return loop.release(Role.of(role));
    }

    /**
     * Writes a record to {@code topic} as a producer outside any transaction does, visible
     * at once: key and value serialized with {@code spring.kafka.producer.*}'s serializers,
     * as {@code KafkaTemplate} would, and partitioned as Kafka's default partitioner does.
     * A topic no {@code NewTopic} bean declared has one partition.
     */
    public void send(String topic, Object key, Object value) {
        cluster.produce(pipelines().serdes().serialize(new ProducerRecord<>(topic, key, value)));
    }

    /**
     * The records of {@code topic} a {@code read_committed} consumer reads, partition by
     * partition, keys and values deserialized with {@code spring.kafka.consumer.*}'s
     * deserializers; the fencing headers of guarded writes are among their headers.
     */
    public List<ConsumerRecord<Object, Object>> records(String topic) {
        return rawRecords(topic).stream().map(pipelines().serdes()::deserialize).toList();
    }

    /** The records of {@code topic} as written, bytes and headers: a dead-letter topic's records, say. */
    public List<ConsumerRecord<byte[], byte[]>> rawRecords(String topic) {
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (InMemoryConsumer consumer = cluster.consumer("coordination-test-reader")) {
            List<TopicPartition> partitions = cluster.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(info.topic(), info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            for (ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ZERO); !polled.isEmpty();
                    polled = consumer.poll(Duration.ZERO)) {
                polled.forEach(read::add);
            }
        }
        return read;
    }

    /**
     * Waits until the {@code @LeaderListener} methods of {@code role} committed every input
     * record written so far: this member must hold the role ({@link #awaitLeader}).
     */
    public void awaitProcessed(String role) {
        List<PipelineSettings> listeners = pipelines().entries(Role.of(role)).stream()
                .map(entry -> entry.pipeline().settings()).toList();
        if (listeners.isEmpty()) {
            throw new IllegalArgumentException("no @LeaderListener runs under role " + role);
        }
        try {
            if (!cluster.await(() -> listeners.stream().allMatch(this::committedAll), DEFAULT_WAIT)) {
                throw new AssertionError("timed out after " + DEFAULT_WAIT + " waiting for the listeners of " + role
                        + " to commit their input; " + state(role) + " here");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the listeners of " + role, e);
        }
    }

    /** Whether the group of {@code listener} committed past every record of its input topics. */
    private boolean committedAll(PipelineSettings listener) {
        Map<TopicPartition, OffsetAndMetadata> committed = cluster.committedOffsets(listener.groupId());
        for (String topic : listener.inputTopics()) {
            for (PartitionInfo info : cluster.partitionsFor(topic)) {
                TopicPartition partition = new TopicPartition(topic, info.partition());
                OffsetAndMetadata done = committed.get(partition);
                long from = done == null ? 0 : done.offset();
                if (cluster.records(partition).stream().mapToLong(RawRecord::offset).anyMatch(offset -> offset >= from)) {
                    return false;
                }
            }
        }
        return true;
    }

    private LeaderPipelines pipelines() {
        LeaderPipelines available = pipelines.getIfAvailable();
        if (available == null) {
            throw new IllegalStateException("no @LeaderListener pipelines here: they need one Spring Kafka ConsumerFactory "
                    + "and ProducerFactory (or a @Primary one of each)");
        }
        return available;
    }

    /** Waits, woken by the loop's grants and ends rather than polling, up to {@link #DEFAULT_WAIT}. */
    private void await(BooleanSupplier condition, String what) {
        try {
            if (!transitions.await(condition, DEFAULT_WAIT)) {
                throw new AssertionError("timed out after " + DEFAULT_WAIT + " waiting for " + what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, e);
        }
    }
}
