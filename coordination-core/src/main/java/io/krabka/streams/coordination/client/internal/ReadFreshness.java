package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Whether a contender's pass must read the topic: with news from the transport, only
 * after news for its role, or as a fallback for a missed wake-up now and then
 * ({@link #QUIET_READ}, {@link #QUIET_HOLD_READ}) unless the transport
 * vouches that none was missed. A member with many roles would otherwise read every role
 * every second through its one consumer, and its holders would wait for those reads.
 */
public final class ReadFreshness {

    /**
     * With news from the transport, a standby's pass reads the topic only after news for
     * its role, when it must decide on time (a challenge), or at least this often in case
     * a wake-up was missed; a holder's only after another member's lease or a tombstone (a
     * missed one costs nothing but time: its next renewal is fenced). A member with many
     * roles would otherwise read every role every second through its one consumer, and its
     * holders would wait for those reads.
     */
    public static final Duration QUIET_READ = Duration.ofSeconds(5);
    /** A holder's fallback read: a missed wake-up, and the topic's identity check, which rides on reads. */
    static final Duration QUIET_HOLD_READ = Duration.ofSeconds(10);

    // Whether a read of the role now could find nothing its watchers were not told of.
    private final BooleanSupplier quietSinceRead;
    private final CoordinationRuntime runtime;
    private final Role role;
    // Whether the transport wakes this contender on news, whether news came since the
    // last read, and when this contender last read.
    private volatile boolean watching;
    private volatile boolean newsSinceRead = true;
    private long lastReadNanos;

    ReadFreshness(CoordinationRuntime runtime, Role role, BooleanSupplier quietSinceRead) {
        this.quietSinceRead = quietSinceRead;
        this.runtime = runtime;
        this.role = role;
    }

    /** Whether the transport wakes this contender on news (a subscription exists). */
    void watching(boolean watched) {
        watching = watched;
    }

    /** News for the role came: the next pass reads. */
    void news() {
        newsSinceRead = true;
    }

    /** Whether the transport wakes this contender and no news came since the last read. */
    boolean noNewsSinceRead() {
        return watching && !newsSinceRead;
    }

    /**
     * Whether a standby may skip reading: no news came, and it read recently or the
     * transport vouches that no wake-up was missed since.
     */
    boolean standbyMaySkip() {
        if (!noNewsSinceRead()) {
            return false;
        }
        if (runtime.nanoTime() - lastReadNanos < QUIET_READ.toNanos()) {
            return true;
        }
        try {
            return quietSinceRead.getAsBoolean();
        } catch (CoordinationException e) {
            // The pass's own read reports it.
            return false;
        }
    }

    /** Whether a holder should look at the topic now: after news, or its fallback read is due. */
    boolean holderShouldLook() {
        return !noNewsSinceRead() || runtime.nanoTime() - lastReadNanos >= QUIET_HOLD_READ.toNanos();
    }

    /** The transport vouched for the role's news: that counts as a read. */
    void vouched() {
        lastReadNanos = runtime.nanoTime();
    }

    /** A read begins. Cleared before it: news that arrives during it makes the next pass read again. */
    void reading() {
        newsSinceRead = false;
        lastReadNanos = runtime.nanoTime();
    }
}
