package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.Decision;
import java.time.Duration;

/**
 * A standby's side of a {@link Contender}: reads the role (unless nothing is new and it
 * is not yet its turn), waits for its turn, challenges when the succession rules say, and
 * hands a grant to the holder's side.
 */
final class StandbyPass {

    /** The longest a standby waits on the topic in one pass. */
    static final Duration MAX_STANDBY_WAIT = Duration.ofSeconds(1);

    private final CoordinationClient client;
    private final Role role;
    private final MemberId member;
    private final FailureReport failures;
    private final ReadFreshness freshness;
    private final HolderPass holder;
    // What the last read decided; owned by the pass that runs.
    private Decision lastDecision;

    StandbyPass(CoordinationClient client, Role role, MemberId member, FailureReport failures, ReadFreshness freshness,
            HolderPass holder) {
        this.client = client;
        this.role = role;
        this.member = member;
        this.failures = failures;
        this.freshness = freshness;
        this.holder = holder;
    }

    /**
     * One pass of the standby.
     *
     * @return how long to wait before the next pass; zero once the role was granted
     */
    Duration contend() {
        if (freshness.standbyMaySkip() && lastDecision instanceof Decision.Wait waiting && client.now().isBefore(waiting.challengeAt())) {
            // Nothing new for this role, and not yet its turn: the last pass's decision stands.
            return Contender.max(Contender.MIN_WAIT, Contender.min(MAX_STANDBY_WAIT, Duration.between(client.now(), waiting.challengeAt())));
        }
        CoordinationClient.Attempt attempt;
        try {
            freshness.reading();
            attempt = client.attempt(role, member, false);
            lastDecision = attempt.decision();
            failures.reachable();
        } catch (CoordinationAuthorizationException | CoordinationConfigurationException refusedForGood) {
            // Neither heals by itself: say it once, look again now and then.
            failures.refused(refusedForGood);
            return Contender.DENIAL_BACKOFF;
        } catch (CoordinationException failed) {
            failures.unreachable("contend for", failed);
            return Contender.ERROR_BACKOFF;
        }
        if (attempt.leadership() != null) {
            lastDecision = null;
            holder.grant(attempt.leadership());
            return Duration.ZERO;
        }
        Duration wait = MAX_STANDBY_WAIT;
        if (attempt.decision() instanceof Decision.Wait pending) {
            wait = Contender.min(wait, Duration.between(client.now(), pending.challengeAt()));
        }
        return Contender.max(Contender.MIN_WAIT, wait);
    }
}
