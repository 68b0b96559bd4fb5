package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Succession;
import java.time.Duration;
import java.time.Instant;

/**
 * When a leadership's newest lease was written and how long it lasts, on two clocks: the
 * wall clock its deadline is written in, and the runtime's monotonic ticker from the
 * moment it was written.
 *
 * <p>Volatile, never locked: {@link #renewAt()} and {@link #untilExpired()} never wait
 * for the leadership's lock, which a write stuck on an unresponsive cluster may hold for
 * a whole timeout (the expiry watchdog and the contender read them meanwhile). Only the
 * leadership's lease transactions, one at a time, record a lease.
 */
final class LeaseClock {

    private final LeaseConfig config;
    private final CoordinationRuntime runtime;
    private volatile long lastLeaseAt;
    // Volatile, not guarded by the lock: a watchdog asks expired() while a renewal blocks.
    private volatile long deadline;
    // The same deadline on the runtime's monotonic ticker: a wall clock stepped back must
    // not keep a holder believing past the lease it measured when it wrote it.
    private volatile long deadlineNanos = Long.MAX_VALUE;
    // When the next renewal is due on the ticker: a wall clock stepped back must not hold a
    // renewal up past the deadline the ticker ends the lease at.
    private volatile long renewAtNanos = Long.MAX_VALUE;

    LeaseClock(LeaseConfig config, CoordinationRuntime runtime) {
        this.config = config;
        this.runtime = runtime;
    }

    /** A lease written at {@code now} (wall clock) and {@code nowNanos} (ticker) lasts until {@code leaseDeadline}. */
    void written(long now, long nowNanos, long leaseDeadline) {
        lastLeaseAt = now;
        deadline = leaseDeadline;
        deadlineNanos = nowNanos + config.duration().toNanos();
        renewAtNanos = nowNanos + config.renewInterval().toNanos();
    }

    /** The deadline of the newest lease written; the epoch itself before the first. */
    Instant deadline() {
        return Instant.ofEpochMilli(deadline);
    }

    /** When the next renewal is due: one renew interval after the newest lease. */
    Instant renewAt() {
        return Succession.renewAt(Instant.ofEpochMilli(lastLeaseAt), config);
    }

    /**
     * How long until the next renewal is due, by whichever clock says so first, as
     * {@link #untilExpired()}: the wall clock stepped forward renews early, which is safe,
     * and stepped back it does not delay the renewal.
     */
    Duration untilRenew() {
        return earlier(Duration.between(runtime.clock().instant(), renewAt()), renewAtNanos);
    }

    /** Whether the newest lease's deadline has passed without a renewal. */
    boolean expired() {
        // Whichever clock says so first: the wall clock the deadline was written in, or the
        // ticker measured from the moment the lease was written (a step back of the wall
        // clock cannot delay the end; a step forward ends it early, which is safe).
        return untilExpired().isNegative();
    }

    /** How long until {@link #expired()} turns true, by whichever clock says so first. */
    Duration untilExpired() {
        return earlier(Duration.between(runtime.clock().instant(), Instant.ofEpochMilli(deadline)), deadlineNanos);
    }

    /** The shorter of {@code byWall} and the time until {@code dueNanos} on the ticker (MAX_VALUE: none recorded). */
    private Duration earlier(Duration byWall, long dueNanos) {
        if (dueNanos == Long.MAX_VALUE) {
            return byWall;
        }
        Duration byTicker = Duration.ofNanos(dueNanos - runtime.nanoTime());
        return byTicker.compareTo(byWall) < 0 ? byTicker : byWall;
    }
}
