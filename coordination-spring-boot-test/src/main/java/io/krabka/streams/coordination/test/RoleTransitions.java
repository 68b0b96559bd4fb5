package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.CoordinationObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Wakes {@link CoordinationTestSupport}'s waits when one of this member's roles is granted
 * or ends: the leadership loop calls it as it calls every {@link CoordinationObserver},
 * after the contender's state changed, so a wait needs no polling.
 */
final class RoleTransitions implements CoordinationObserver {

    @Override
    public synchronized void granted(Role role, Duration took) {
        notifyAll();
    }

    @Override
    public synchronized void ended(Role role, LeadershipEndCause cause) {
        notifyAll();
    }

    /** Waits until {@code condition} holds, at most {@code timeout}; whether it does. */
    synchronized boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            long left = giveUpAt - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }
}
