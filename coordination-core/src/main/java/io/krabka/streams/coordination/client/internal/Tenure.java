package io.krabka.streams.coordination.client.internal;

import java.util.concurrent.atomic.AtomicBoolean;

/** One leadership of a contender, from the grant until it is reported ended. */
final class Tenure {

    final LeadershipTerm leadership;
    /** Whether its end was reported: set once, by whichever thread ends it first. */
    final AtomicBoolean finished = new AtomicBoolean();
    /**
     * When a failed renewal is tried again, on the runtime's ticker (a wall clock stepped
     * back must not hold it up); 0 while none failed. Owned by the holder's pass.
     */
    volatile long retryAtNanos;
    /** When the member contends again after this tenure because its work gave it up; 0 for at once. */
    volatile long rejoinAtNanos;

    Tenure(LeadershipTerm leadership) {
        this.leadership = leadership;
    }
}
