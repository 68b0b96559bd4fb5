package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * The succession rules: pure functions of a role's state, a member, the lease timings
 * and an explicit {@code now}. They hold no clock and do no I/O, so a test drives a
 * whole failover with a manual clock and no broker.
 *
 * <p>The rules decide only <em>when</em> a member asks for the role. Who may write is
 * decided by the transaction coordinator: a challenge that the rules allow too early
 * costs an extra epoch, never a second authoritative writer.
 *
 * <ul>
 *   <li>A holder renews at {@code (deadline - duration) + renewInterval}, i.e. one
 *       renew interval after it wrote its newest lease.</li>
 *   <li>A standby of rank {@code n} challenges at {@code anchor + n * challengeStagger},
 *       the stagger capped at one lease duration.
 *       The anchor is the current lease's deadline; with no lease, it is the later of
 *       the member's own registration time and the release of the last lease.</li>
 *   <li>A release ends the lease when its holder leaves the roster: the holder's
 *       registration tombstone after its newest lease, a plain append that readers see
 *       before the lease tombstone's transaction completes ({@link RoleStateBuilder}).</li>
 *   <li>The anchor always comes from the role state, never from {@code now}: an anchor
 *       of "now plus n staggers" would move on every evaluation, and a standby of rank
 *       1 or more would wait forever while rank 0 is dead.</li>
 * </ul>
 */
public final class Succession {

    private Succession() {
    }

    /**
     * Decides what {@code me} does next for the role of {@code state}.
     *
     * @param state the folded role state
     * @param me the member deciding
     * @param holding whether {@code me} holds a live leadership of this role (an epoch
     *     from its own producer); a member that restarted is not holding, even when the
     *     newest lease still names it
     * @param config the lease timings
     * @param now the instant to decide at
     */
    public static Decision evaluate(RoleState state, MemberId me, boolean holding, LeaseConfig config, Instant now) {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(me, "me");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(now, "now");
        if (holding) {
            return evaluateHolder(state, me, config, now);
        }
        OptionalInt rank = state.rankOf(me);
        if (rank.isEmpty()) {
            return new Decision.Register();
        }
        Instant challengeAt = anchor(state, me).plus(stagger(rank.getAsInt(), config));
        return now.isBefore(challengeAt)
                ? new Decision.Wait(rank.getAsInt(), challengeAt)
                : new Decision.Challenge(rank.getAsInt(), challengeAt);
    }

    private static Decision evaluateHolder(RoleState state, MemberId me, LeaseConfig config, Instant now) {
        if (state.lease().isEmpty()) {
            // Holding with no lease visible: write one now.
            return new Decision.Renew(now);
        }
        LeaseState lease = state.lease().get();
        if (!lease.member().equals(me)) {
            return new Decision.StepDown(lease.member());
        }
        // The lease was written one duration before its deadline.
        Instant renewAt = renewAt(lease.deadlineInstant().minus(config.duration()), config);
        return now.isBefore(renewAt) ? new Decision.Hold(renewAt) : new Decision.Renew(renewAt);
    }

    /**
     * When a holder renews: one renew interval after it wrote its newest lease. The one
     * place this rule lives; the holder's own schedule and the rules' decision use it.
     */
    public static Instant renewAt(Instant leaseWrittenAt, LeaseConfig config) {
        return leaseWrittenAt.plus(config.renewInterval());
    }

    /**
     * The wait of rank {@code rank} after its anchor: {@code rank * challengeStagger}, but
     * never more than one lease duration. A roster that grows without bound (member ids
     * that change on every restart, or registrations appended by anyone with Write on the
     * topic) would otherwise hold the first live standby off for ever; the ranks past the
     * cap challenge together, which costs epochs, never safety.
     */
    public static Duration stagger(int rank, LeaseConfig config) {
        Duration wait = config.challengeStagger().multipliedBy(rank);
        return wait.compareTo(config.duration()) > 0 ? config.duration() : wait;
    }

    /**
     * When rank {@code rank} challenges after a sign of a challenge in flight first seen
     * at {@code seenAt} (an epoch at the coordinator that no visible lease explains): as
     * after a lease first seen then, one lease duration and the rank's stagger later.
     */
    public static Instant challengeAfter(Instant seenAt, int rank, LeaseConfig config) {
        return seenAt.plus(config.duration()).plus(stagger(rank, config));
    }

    private static Instant anchor(RoleState state, MemberId me) {
        if (state.lease().isPresent()) {
            return state.lease().get().deadlineInstant();
        }
        long registeredAt = state.entryOf(me).orElseThrow().registeredAt();
        long anchor = Math.max(registeredAt, state.leaseReleasedAt().orElse(Long.MIN_VALUE));
        return Instant.ofEpochMilli(anchor);
    }
}
