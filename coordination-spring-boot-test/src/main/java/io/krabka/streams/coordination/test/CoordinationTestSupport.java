package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryConsumer;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
    // Fires the runtime's timers that the clock passed (ClockTimersRuntime), after each step.
    private final Runnable clockMoved;

    CoordinationTestSupport(
            InMemoryCluster cluster,
            ManualClock clock,
            LeadershipLoop loop,
            LeaseConfig lease,
            TopicSpec topic,
            RoleTransitions transitions,
            ObjectProvider<LeaderPipelines> pipelines,
            Runnable clockMoved) {
        this.transitions = transitions;
        this.clockMoved = clockMoved;
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

    /**
     * Lets {@code duration} pass on the lease clock, as it would in real time: the clock
     * moves in steps of at most one renew interval, and after each step this waits until
     * every role this member holds has renewed at the new instant (or its renewal attempt
     * failed, or the leadership ended). So the roles this member holds stay held, with the
     * same terms, and only a lease that was made to run out changes hands: another
     * member's after {@link #fence}, this member's after {@link #expire}. A role whose
     * renewals fail is not waited for: its lease runs out as it would.
     *
     * @throws IllegalArgumentException when {@code duration} is negative
     * @throws AssertionError when a renewal due is not attempted within {@link #DEFAULT_WAIT}
     *     (under a {@code ManualRuntime} bean nothing runs unless that runtime is advanced:
     *     advance it instead)
     */
    public void advance(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("the lease clock only moves forward, not by " + duration);
        }
        advanceTo(clock.instant().plus(duration));
    }

    /** Moves the clock to {@code target} in {@link #step()}s, letting the renewals due at each instant happen first. */
    private void advanceTo(Instant target) {
        Duration step = step();
        awaitRenewals(held());
        while (clock.instant().isBefore(target)) {
            Map<Role, Held> held = held();
            Duration left = Duration.between(clock.instant(), target);
            clock.advance(left.compareTo(step) < 0 ? left : step);
            clockMoved.run();
            awaitRenewals(held);
        }
    }

    /**
     * How far {@link #advance} moves the clock at a time: one renew interval, so each held
     * role renews once a step, when its renewal falls due, as in real time. Never more than
     * a lease outlasts one interval (duration minus renew interval): a lease written up to
     * an interval before a step then still lasts past it. The starter requires the renew
     * interval to be at most a third of the duration, so this is the renew interval there.
     */
    private Duration step() {
        Duration renew = lease.renewInterval();
        Duration outlasts = lease.duration().minus(renew);
        return outlasts.isNegative() || outlasts.isZero() || outlasts.compareTo(renew) >= 0 ? renew : outlasts;
    }

    /**
     * A leadership this member holds, how many renewals of its role had failed when it was
     * seen, and whether the last one had: the holder then retries on its own schedule
     * (set after the failure, maybe on an instant this support already moved past), so
     * nothing is waited for.
     */
    private record Held(Leadership leadership, long failedRenewals, boolean failing) {}

    /** The leaderships this member holds now. */
    private Map<Role, Held> held() {
        Map<Role, Held> held = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            loop.leadership(role)
                    .filter(Leadership::isActive)
                    .ifPresent(leadership -> held.put(
                            role, new Held(leadership, transitions.failedRenewals(role), transitions.failing(role))));
        }
        return held;
    }

    /**
     * Waits until each of {@code held} is not due for a renewal at the clock's instant, failed
     * one since it was seen, or ended; a role whose renewals were failing already is not waited for.
     */
    private void awaitRenewals(Map<Role, Held> held) {
        if (held.isEmpty()) {
            return;
        }
        Instant at = clock.instant();
        await(
                () -> held.entrySet().stream().allMatch(each -> {
                    Held role = each.getValue();
                    return role.failing()
                            || !role.leadership().isActive()
                            || !role.leadership().renewDue()
                            || transitions.failedRenewals(each.getKey()) > role.failedRenewals();
                }),
                "the renewals due at " + at + " of " + held.keySet()
                        + " (with a ManualRuntime bean, advance that runtime instead)");
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
        epoch.transact(
                List.of(otherLease(fenced, committed.producerId(), (short) (committed.producerEpoch() + step), now)));
        awaitNotLeader(role);
    }

    private ProducerRecord<byte[], byte[]> otherLease(Role role, long producerId, short producerEpoch, long now) {
        return new ProducerRecord<>(
                topic.name(),
                RolePartitioner.partitionFor(role, topic.partitions()),
                now,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                        OTHER,
                        producerId,
                        producerEpoch,
                        now,
                        now + lease.duration().toMillis())));
    }

    /**
     * This member's lease of {@code role} runs out, as if its renewals had stopped reaching
     * the cluster: the role's transactions fail ({@link InMemoryCluster#cutOffHolder}) while
     * the clock moves past the lease's deadline as {@link #advance} moves it, so the other
     * roles this member holds renew meanwhile and stay held. The leadership ends as
     * EXPIRED; with no other member, this member takes the role again soon after. Returns
     * once the leadership ended; does nothing when this member does not hold the role.
     */
    public void expire(String role) {
        Role expiring = Role.of(role);
        Leadership held = loop.leadership(expiring).filter(Leadership::isActive).orElse(null);
        if (held == null) {
            return;
        }
        InMemoryCluster.Fault cutOff = cluster.cutOffHolder(expiring);
        try {
            // A renewal that committed just before the cut moved the deadline: go past the newest.
            while (held.isActive() && !clock.instant().isAfter(held.deadline())) {
                advanceTo(held.deadline().plusMillis(1));
            }
            await(() -> loop.leadership(expiring).orElse(null) != held, "the lease of " + role + " to run out");
        } finally {
            cutOff.close();
        }
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
                    .map(info -> new TopicPartition(info.topic(), info.partition()))
                    .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            for (ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ZERO);
                    !polled.isEmpty();
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
                .map(entry -> entry.pipeline().settings())
                .toList();
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
                if (cluster.records(partition).stream()
                        .mapToLong(RawRecord::offset)
                        .anyMatch(offset -> offset >= from)) {
                    return false;
                }
            }
        }
        return true;
    }

    private LeaderPipelines pipelines() {
        LeaderPipelines available = pipelines.getIfAvailable();
        if (available == null) {
            throw new IllegalStateException(
                    "no @LeaderListener pipelines here: they need one Spring Kafka ConsumerFactory "
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
