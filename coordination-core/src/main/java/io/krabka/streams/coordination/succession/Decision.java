package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.MemberId;
import java.time.Instant;
import java.util.Objects;

/** What one member should do next for one role, as {@link Succession#evaluate} decides it. */
public sealed interface Decision
        permits Decision.Register, Decision.Hold, Decision.Renew, Decision.StepDown, Decision.Wait, Decision.Challenge {

    /** The member is not in the roster: it appends a registration before it can rank. */
    record Register() implements Decision {}

    /**
     * The member holds the role and its renewal is not yet due.
     *
     * @param renewAt when the next renewal is due
     */
    record Hold(Instant renewAt) implements Decision {
        public Hold {
            Objects.requireNonNull(renewAt, "renewAt");
        }
    }

    /**
     * The member holds the role and writes its next lease now.
     *
     * @param dueSince when the renewal became due
     */
    record Renew(Instant dueSince) implements Decision {
        public Renew {
            Objects.requireNonNull(dueSince, "dueSince");
        }
    }

    /**
     * The member believes it holds the role, but the log names a newer holder: it stops
     * the role's work now. The broker already rejects its writes.
     *
     * @param newHolder the member the newest lease names
     */
    record StepDown(MemberId newHolder) implements Decision {
        public StepDown {
            Objects.requireNonNull(newHolder, "newHolder");
        }
    }

    /**
     * The member is a standby and waits.
     *
     * @param rank its rank among the standbys, 0 first
     * @param challengeAt when it challenges unless the state changes first
     */
    record Wait(int rank, Instant challengeAt) implements Decision {
        public Wait {
            Objects.requireNonNull(challengeAt, "challengeAt");
        }
    }

    /**
     * The member is a standby whose challenge instant has passed: it asks the
     * coordinator for a new epoch now.
     *
     * @param rank its rank among the standbys, 0 first
     * @param challengeAt the instant that passed
     */
    record Challenge(int rank, Instant challengeAt) implements Decision {
        public Challenge {
            Objects.requireNonNull(challengeAt, "challengeAt");
        }
    }
}
