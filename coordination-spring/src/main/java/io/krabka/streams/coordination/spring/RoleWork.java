package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.concurrent.Future;

/**
 * Work that runs only while this member holds a role. A role's works are stopped
 * together: every one is {@linkplain #interrupt() interrupted} first, then each is
 * {@linkplain #awaitStopped awaited} within what is left of one bound.
 *
 * <p>A planned move of the role (a release, a handover, a stop) stops the work before
 * the role is let go: every work is {@linkplain #interruptBeforeMove() interrupted} and
 * {@linkplain #awaitBeforeMove awaited}, then the move is made, then each work hears
 * whether it {@linkplain #moved() happened} or the member still holds the role and the
 * work {@linkplain #resume() runs again}. Meanwhile a work that returned does not end
 * the leadership itself, which would let the role go before the move (to another member
 * than a handover's).
 */
interface RoleWork {

    /** What is left of {@code deadline} (a {@code runtime.nanoTime()} instant), never negative. */
    static Duration left(long deadline, CoordinationRuntime runtime) {
        return Duration.ofNanos(Math.max(0, deadline - runtime.nanoTime()));
    }

    /**
     * Waits at most {@code bound} for {@code done}: whether it is done. An interrupt ends the
     * wait early and stays set for the caller.
     */
    static boolean awaitDone(Future<?> done, Duration bound, CoordinationRuntime runtime) {
        try {
            return runtime.await(done, bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return done.isDone();
        }
    }

    /**
     * Starts the work for a fresh leadership. Must not block. Work that ends by itself
     * tells {@code contender}, so the leadership ends with it.
     *
     * @param runtime the runtime of {@code contender}, whose workers run the work
     * @param stopTimeout {@code work-stop-timeout}
     */
    void start(Leadership leadership, Contender contender, CoordinationRuntime runtime, Duration stopTimeout)
            throws Exception;

    /** Tells the work to stop, without waiting for it (a run is interrupted). Must not block. */
    void interrupt();

    /**
     * After {@link #interrupt()}: stops what the interrupt does not (a {@code Lifecycle}
     * bean) and waits at most {@code bound} for the work to end; work that does not is
     * reported with an ERROR that names it.
     *
     * @param runtime the runtime whose ticker {@code bound} runs on
     * @return whether it ended within {@code bound}
     */
    boolean awaitStopped(Duration bound, CoordinationRuntime runtime);

    /**
     * A planned move of the role begins: interrupts the work, whose return then waits for
     * {@link #moved()} or {@link #resume()} instead of ending the leadership. Must not block.
     */
    void interruptBeforeMove();

    /**
     * After {@link #interruptBeforeMove()}: stops what the interrupt does not and waits at
     * most {@code bound} for the work to return, without reporting it.
     *
     * @return whether it returned within {@code bound}
     */
    boolean awaitBeforeMove(Duration bound, CoordinationRuntime runtime);

    /** The move was made, or the leadership ended otherwise: a work held by the move may return. */
    void moved();

    /** The move was not made and the leadership lasts: the work runs again, for the same leadership. */
    void resume();
}
