package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * What one member saw of a role, on its own clock, and what it may therefore believe: the
 * standby's turn as one pure function ({@link #turn}). Any member with Write on the topic
 * can append a lease naming anyone with any deadline, or a tombstone stamped with any
 * time; the one thing about a record nobody else can forge is when this member first saw
 * it. So a standby decides on the role state with
 * <ul>
 *   <li>the lease's deadline cut to one lease duration after this member first saw that
 *       lease record, and never earlier than the bound an earlier lease record of the
 *       role gave (a new record may extend the wait, never shorten it: only a tombstone
 *       ends a lease early);</li>
 *   <li>a later deadline that renewals of the same leadership, seen in the news since the
 *       last read, carried (each already cut at one lease after it arrived);</li>
 *   <li>the release instant cut to when this member first saw the tombstone.</li>
 * </ul>
 * The client remembers the sightings ({@code LeaseBounds} in the client's internals)
 * and judges suspicious records; the arithmetic is here, with the succession rules it
 * feeds, so that a test can state every case without a client.
 *
 * @param leaseSeenAt when this member first saw the newest lease record, in epoch
 *     milliseconds; {@link #NONE} when the state has no lease
 * @param earlierBound the bound an earlier lease record of the role gave; {@link #NONE} for none
 * @param releaseSeenAt when this member first saw the tombstone the state's release
 *     instant comes from; {@link #NONE} when the state has none
 * @param renewedUntil the latest deadline renewals of the newest lease's leadership
 *     carried in the news since the read, each cut at one lease after it arrived;
 *     {@link #NONE} for none
 */
public record Sighted(long leaseSeenAt, long earlierBound, long releaseSeenAt, long renewedUntil) {

    /** Nothing of that kind was seen. */
    public static final long NONE = Long.MIN_VALUE;

    /** Nothing seen: the state is believed as it reads. */
    public static final Sighted NOTHING = new Sighted(NONE, NONE, NONE, NONE);

    /** The same sightings, with renewals seen in the news up to {@code deadline} (never moving back). */
    public Sighted renewedUntil(long deadline) {
        return new Sighted(leaseSeenAt, earlierBound, releaseSeenAt, Math.max(renewedUntil, deadline));
    }

    /**
     * The deadline this member may believe of {@code lease}, first seen at {@link #leaseSeenAt}:
     * at most one lease duration after that sighting, never before the earlier bound, and
     * as late as renewals in the news carried it.
     */
    public long believedDeadline(LeaseState lease, LeaseConfig config) {
        long cut = leaseSeenAt == NONE
                ? lease.deadline()
                : saturatedAdd(leaseSeenAt, config.duration().toMillis());
        long bound = Math.max(earlierBound, Math.min(lease.deadline(), cut));
        return Math.max(bound, renewedUntil);
    }

    /** The role state this member may decide on: {@code state} with its lease deadline and release instant cut as above. */
    public RoleState believed(RoleState state, LeaseConfig config) {
        if (state.lease().isPresent()) {
            LeaseState lease = state.lease().get();
            long deadline = believedDeadline(lease, config);
            return deadline == lease.deadline()
                    ? state
                    : new RoleState(
                            state.role(),
                            state.roster(),
                            Optional.of(lease.withDeadline(deadline)),
                            state.leaseReleasedAt(),
                            state.nextOffset());
        }
        if (state.leaseReleasedAt().isEmpty()
                || releaseSeenAt == NONE
                || state.leaseReleasedAt().getAsLong() <= releaseSeenAt) {
            return state;
        }
        return new RoleState(
                state.role(), state.roster(), state.lease(), OptionalLong.of(releaseSeenAt), state.nextOffset());
    }

    /**
     * The standby's turn: what {@code me} does next for the role of {@code state}, as this
     * member may believe the state ({@link #believed}); the rules are {@link Succession#evaluate}'s.
     */
    public Decision turn(RoleState state, MemberId me, LeaseConfig config, Instant now, Shares shares) {
        return Succession.evaluate(believed(state, config), me, false, config, now, shares);
    }

    /**
     * How much later than {@code decidedOn} (the believed lease a standby's last decision
     * was anchored on) renewals of its leadership in the news, up to {@code renewedUntil},
     * moved its deadline: a wait decided on it ends that much later, and nothing else of
     * the decision changes, so the standby need not read again for them.
     */
    public static Duration renewalDelay(@Nullable LeaseState decidedOn, long renewedUntil) {
        return decidedOn != null && renewedUntil != NONE && renewedUntil > decidedOn.deadline()
                ? Duration.ofMillis(renewedUntil - decidedOn.deadline())
                : Duration.ZERO;
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
