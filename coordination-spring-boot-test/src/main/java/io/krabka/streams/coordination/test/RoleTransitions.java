package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.CoordinationObserver;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Wakes {@link CoordinationTestSupport}'s waits when one of this member's roles is granted,
 * renewed, fails a renewal or ends: the leadership loop calls it as it calls every
 * {@link CoordinationObserver}, after the contender's state changed, so a wait seldom
 * needs its slow look ({@link #await}). It counts each role's failed renewals and knows whether its last one failed,
 * so a wait can tell that a renewal due was attempted even when it did not move the lease.
 */
final class RoleTransitions implements CoordinationObserver {

    /** How often a wait looks at its condition even without a transition. */
    static final Duration LOOK_AGAIN = Duration.ofMillis(20);

    private final Map<Role, Long> failedRenewals = new HashMap<>();
    private final Set<Role> failing = new HashSet<>();

    @Override
    public synchronized void granted(Role role, Duration took) {
        failing.remove(role);
        notifyAll();
    }

    @Override
    public synchronized void ended(Role role, LeadershipEndCause cause) {
        notifyAll();
    }

    @Override
    public synchronized void renewed(Role role, Duration took) {
        failing.remove(role);
        notifyAll();
    }

    @Override
    public synchronized void renewFailed(Role role) {
        failedRenewals.merge(role, 1L, Long::sum);
        failing.add(role);
        notifyAll();
    }

    /** Whether the last renewal of {@code role}'s leadership failed. */
    synchronized boolean failing(Role role) {
        return failing.contains(role);
    }

    /** How many renewals of {@code role} failed so far. */
    synchronized long failedRenewals(Role role) {
        return failedRenewals.getOrDefault(role, 0L);
    }

    /**
     * Waits until {@code condition} holds, at most {@code timeout}; whether it does. It also
     * looks again every {@link #LOOK_AGAIN}: a condition can turn true without a transition
     * (seen: a wait for the renewals due after advance() sat out its whole 10 s timeout, then
     * found them done).
     */
    synchronized boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            long left = giveUpAt - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, LOOK_AGAIN.toNanos()));
        }
        return true;
    }
}
