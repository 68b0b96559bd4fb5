package io.krabka.streams.coordination.client.internal;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/** One leadership of a contender, from the grant until it is reported ended. */
final class Tenure {

    final LeadershipTerm leadership;
    /** Whether its end was reported: set once, by whichever thread ends it first. */
    final AtomicBoolean finished = new AtomicBoolean();
    /** When a failed renewal is tried again; null while none failed. Owned by the holder's pass. */
    volatile @Nullable Instant retryAt;
    /** When the member contends again after this tenure because its work gave it up; 0 for at once. */
    volatile long rejoinAtNanos;

    Tenure(LeadershipTerm leadership) {
        this.leadership = leadership;
    }
}
