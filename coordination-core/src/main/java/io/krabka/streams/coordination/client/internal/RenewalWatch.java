package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The two timers around a holder's renewals: the expiry check at the lease's deadline,
 * which ends a leadership whose renewal still blocks, and the report to the runtime of a
 * renewal blocked longer than {@link #STUCK_RENEWAL}, so it runs other roles'
 * renewals beside it.
 */
final class RenewalWatch {

    /** A renewal that has not returned after this long is blocked: the runtime may run other roles' renewals beside it. */
    static final Duration STUCK_RENEWAL = Duration.ofMillis(500);

    private final CoordinationRuntime runtime;
    // The check that ends a leadership at its deadline while a renewal blocks; guarded by this.
    private CoordinationRuntime.@Nullable Scheduled expiryCheck;
    // The renewal in progress, if any, and whether the runtime was told it is blocked; guarded by renewalLock.
    private final Object renewalLock = new Object();
    private @Nullable Object renewing;
    private boolean renewalReportedBlocked;

    RenewalWatch(CoordinationRuntime runtime) {
        this.runtime = runtime;
    }

    /** Runs {@code check} on a worker thread (the pass threads may all be blocked) after {@code untilDeadline}, replacing the last. */
    synchronized void armExpiry(Duration untilDeadline, Runnable check) {
        if (expiryCheck != null) {
            expiryCheck.cancel();
        }
        expiryCheck = runtime.schedule(() -> runtime.workers().execute(check), untilDeadline);
    }

    synchronized void cancelExpiry() {
        if (expiryCheck != null) {
            expiryCheck.cancel();
            expiryCheck = null;
        }
    }

    /** A renewal begins: the runtime hears of it if it has not returned within {@link #STUCK_RENEWAL}. */
    Object renewalStarted() {
        Object renewal = new Object();
        synchronized (renewalLock) {
            renewing = renewal;
        }
        runtime.schedule(
                () -> {
                    synchronized (renewalLock) {
                        if (renewing != renewal || renewalReportedBlocked) {
                            return;
                        }
                        renewalReportedBlocked = true;
                    }
                    runtime.renewalBlocked();
                },
                STUCK_RENEWAL);
        return renewal;
    }

    /** Whether a renewal has been under way for longer than {@link #STUCK_RENEWAL} and still is. */
    boolean blocked() {
        synchronized (renewalLock) {
            return renewing != null && renewalReportedBlocked;
        }
    }

    void renewalEnded(Object renewal) {
        boolean unblock;
        synchronized (renewalLock) {
            if (renewing != renewal) {
                return;
            }
            renewing = null;
            unblock = renewalReportedBlocked;
            renewalReportedBlocked = false;
        }
        if (unblock) {
            runtime.renewalUnblocked();
        }
    }
}
