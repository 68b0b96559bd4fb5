package io.krabka.streams.coordination.runtime;

import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Time and threads for the library: the wall clock leases are written in, a monotonic
 * ticker for timeouts and pacing, a timer, and the executors every contender, leadership
 * and pipeline of a client runs on. Nothing in the client or pipeline packages reads
 * {@link System#nanoTime()}, sleeps, or creates a thread except through this (an
 * architecture test says so), so a test can replace all of it with a manual runtime
 * whose {@code advance()} runs what is due, deterministically.
 *
 * <p>{@link #shared()} is the JVM-wide default, built on first use from daemon threads and
 * never closed. {@link #builder()} builds one of your own (for example with callbacks
 * on virtual threads); its {@link #close()} shuts down only the executors it created.
 *
 * <h2>What may run on virtual threads</h2>
 * {@link #callbacks()} and {@link #workers()} may: they run listeners, a role's work and
 * guarded-send flushes, which block on I/O and locks the JDK unmounts from. Keep
 * {@link #passes()} and {@link #renewals()} on platform threads: a pass holds the
 * Kafka client's {@code synchronized} sections while it waits on the cluster, which on
 * Java 21 pins a virtual thread to its carrier, and a renewal must not wait for a carrier.
 */
public interface CoordinationRuntime extends AutoCloseable {

    /** The wall clock lease deadlines are written and compared in. */
    InstantSource clock();

    /** A monotonic ticker in nanoseconds, for timeouts and pacing; only differences mean anything. */
    long nanoTime();

    /** Runs standbys' passes and holders' reads of the topic: short tasks that may wait on the cluster. */
    Executor passes();

    /**
     * Runs a standby's pass that news says may take the role now (a release, a handover's
     * probe) ahead of the passes queued on {@link #passes()}, on the same threads: a member
     * contending for many roles queues their passes, and a handed-over role waited behind
     * them for tens of seconds. The default is {@link #passes()} itself.
     */
    default Executor urgentPasses() {
        return passes();
    }

    /**
     * Runs holders' passes, their renewals, in the order their timers fire. A renewal that
     * blocks is reported through {@link #renewalBlocked()}, so a runtime can run the next
     * role's renewal on another thread.
     */
    Executor renewals();

    /** Runs listener callbacks of contenders that were given no executor of their own. */
    Executor callbacks();

    /** Runs tasks that may block for long: guarded-send flushes, a role's work, closing a pipeline. */
    Executor workers();

    /**
     * Runs {@code task} once after {@code delay} on the runtime's timer. The task must not
     * block: it hands work to one of the executors.
     */
    Scheduled schedule(Runnable task, Duration delay);

    /** Blocks the calling thread for {@code duration}: a paced retry, never a synchronisation. */
    void sleep(Duration duration) throws InterruptedException;

    /**
     * Blocks the calling thread until {@code future} completes (normally, exceptionally or
     * by cancellation) or {@code timeout} passes on this runtime's ticker. Every wait of the
     * library for another of its tasks (a stop, a listener, a role's work) goes through
     * this, so a manual runtime can run what the wait depends on instead of blocking a
     * thread its simulation needs.
     *
     * @return whether the future completed
     */
    default boolean await(Future<?> future, Duration timeout) throws InterruptedException {
        try {
            future.get(Math.max(0, TimeUnit.NANOSECONDS.convert(timeout)), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException | CancellationException e) {
            return true;
        }
    }

    /**
     * A renewal has been blocked for a while (a frozen coordinator, a partition without a
     * leader): a runtime may give {@link #renewals()} a thread more until
     * {@link #renewalUnblocked()}, so stuck roles never delay another role's renewal.
     */
    default void renewalBlocked() {}

    /** A renewal reported by {@link #renewalBlocked()} returned. */
    default void renewalUnblocked() {}

    /** This runtime with {@code clock} as its wall clock; the executors are this one's, and closing it closes nothing. */
    default CoordinationRuntime withClock(InstantSource clock) {
        return new ClockedRuntime(this, clock);
    }

    /** Shuts down what this runtime created; executors given to its builder stay open. */
    @Override
    void close();

    /** The JVM-wide default: the system clock and daemon threads, created on first use, never closed. */
    static CoordinationRuntime shared() {
        return SystemCoordinationRuntime.SHARED;
    }

    /** A runtime of your own, on the system clock unless told otherwise. */
    static SystemCoordinationRuntime.Builder builder() {
        return new SystemCoordinationRuntime.Builder();
    }

    /** A task on the runtime's timer. */
    interface Scheduled {

        /** Cancels the task if it has not started. */
        void cancel();

        /** Whether its delay has passed (it runs now, or ran, or was cancelled after it was due). */
        boolean isDue();
    }
}
