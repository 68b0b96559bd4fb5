package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.Sighted;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A standby's side of a {@link Contender}: reads the role (unless nothing is new and it
 * is not yet its turn), waits for its turn, challenges when the succession rules say, and
 * hands a grant to the holder's side. What it decided lives in the contender's
 * {@link ContenderState.Standby} state, never here.
 */
final class StandbyPass {

    /** The longest a standby waits on the topic in one pass. */
    static final Duration MAX_STANDBY_WAIT = Duration.ofSeconds(1);

    private final Engine.Attempts attempts;
    private final InstantSource clock;
    private final Role role;
    private final MemberId member;
    private final FailureReport failures;
    private final ReadFreshness freshness;
    private final HolderPass holder;
    // The contender's state, which owns the standby's last decision, and the one way to change it.
    private final Supplier<ContenderState> state;
    private final Consumer<UnaryOperator<ContenderState>> transition;

    StandbyPass(
            Engine.Attempts attempts,
            InstantSource clock,
            Role role,
            MemberId member,
            FailureReport failures,
            ReadFreshness freshness,
            HolderPass holder,
            Supplier<ContenderState> state,
            Consumer<UnaryOperator<ContenderState>> transition) {
        this.attempts = attempts;
        this.clock = clock;
        this.role = role;
        this.member = member;
        this.failures = failures;
        this.freshness = freshness;
        this.holder = holder;
        this.state = state;
        this.transition = transition;
    }

    /**
     * One pass of the standby {@code now}.
     *
     * @return how long to wait before the next pass; zero once the role was granted
     */
    Duration contend(ContenderState.Standby now) {
        Instant at = clock.instant();
        if (freshness.standbyMaySkip() && now.decision() instanceof Decision.Wait waiting) {
            // Renewals seen in the news since the last read move the turn later by as much as they moved the deadline.
            Duration renewed = Sighted.renewalDelay(now.anchor(), now.renewedUntil());
            Instant turn = waiting.challengeAt().plus(renewed);
            Instant readAgain =
                    now.readAgainAt() == null ? null : now.readAgainAt().plus(renewed);
            if (at.isBefore(turn) && (readAgain == null || at.isBefore(readAgain))) {
                // Nothing else new for this role, and neither its turn nor the time to read it
                // again: the last pass's decision stands.
                return untilNext(at, turn, readAgain);
            }
        }
        Engine.Attempt attempt;
        try {
            freshness.reading();
            attempt = attempts.attempt(role, member, false);
            failures.reachable();
        } catch (CoordinationAuthorizationException | CoordinationConfigurationException refusedForGood) {
            // Neither heals by itself: say it once, look again now and then.
            failures.refused(refusedForGood);
            return RoleContender.DENIAL_BACKOFF;
        } catch (CoordinationException failed) {
            failures.unreachable("contend for", failed);
            return RoleContender.ERROR_BACKOFF;
        }
        if (attempt.leadership() != null) {
            holder.grant(attempt.leadership());
            return Duration.ZERO;
        }
        transition.accept(current -> current instanceof ContenderState.Standby standby
                ? standby.decided(attempt.decision(), attempt.readAgainAt(), attempt.lease())
                : current);
        if (attempt.decision() instanceof Decision.Wait pending) {
            return untilNext(clock.instant(), pending.challengeAt(), attempt.readAgainAt());
        }
        return RoleContender.max(RoleContender.MIN_WAIT, MAX_STANDBY_WAIT);
    }

    /**
     * A lease record of the role in the news: whether it renews the leadership this standby's
     * last decision was anchored on (holder and grant time). Its deadline, never past
     * {@code bound}, then moves this standby's turn later, and nothing else in it is new: no
     * read is needed. Runs on the watcher's thread.
     */
    boolean renewedInNews(RoleNews news, long bound) {
        if (!(state.get() instanceof ContenderState.Standby standby && standby.renewsAnchor(news))) {
            return false;
        }
        // The same check again on the lane: a pass may have decided anew since.
        transition.accept(current -> current instanceof ContenderState.Standby now && now.renewsAnchor(news)
                ? now.renewedTo(Math.min(news.deadline(), bound))
                : current);
        return true;
    }

    /**
     * Whether {@code news} may let this standby take the role now, so its pass should not
     * wait behind other roles' passes: a lease tombstone (a release or an abdication), the
     * holder its last decision was anchored on leaving the roster (a release's first act),
     * or this member's own registration removed (a handover's probe, which waits for it to
     * register again). Runs on the watcher's thread.
     */
    boolean mayTakeRoleOn(RoleNews news) {
        if (news.lease()) {
            return news.member() == null;
        }
        LeaseState decidedOn = state.get() instanceof ContenderState.Standby standby ? standby.anchor() : null;
        return news.member() != null
                && (news.member().equals(member)
                        || decidedOn != null && decidedOn.member().equals(news.member()));
    }

    /** The wait before the next pass: at most a second, and no later than the turn or the time to read again. */
    private static Duration untilNext(Instant now, Instant turn, @Nullable Instant readAgain) {
        Duration wait = RoleContender.min(MAX_STANDBY_WAIT, Duration.between(now, turn));
        if (readAgain != null) {
            wait = RoleContender.min(wait, Duration.between(now, readAgain));
        }
        return RoleContender.max(RoleContender.MIN_WAIT, wait);
    }
}
