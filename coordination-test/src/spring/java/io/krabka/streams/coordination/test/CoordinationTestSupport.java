package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Moves this member's roles on demand in a test with {@link AutoConfigureCoordinationTest}:
 * the starter's real leadership loop runs, on an in-memory cluster and a manual lease
 * clock, so what happens next (work started or stopped, events, health) is what happens
 * in production.
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

    CoordinationTestSupport(InMemoryCluster cluster, ManualClock clock, LeadershipLoop loop, LeaseConfig lease,
            TopicSpec topic, RoleTransitions transitions) {
        this.transitions = transitions;
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
