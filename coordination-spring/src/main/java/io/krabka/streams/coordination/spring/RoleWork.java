package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;

/**
 * Work that runs only while this member holds a role. A role's works are stopped
 * together: every one is {@linkplain #interrupt() interrupted} first, then each is
 * {@linkplain #awaitStopped awaited} within what is left of one bound.
 */
interface RoleWork {

    /**
     * Starts the work for a fresh leadership. Must not block. Work that ends by itself
     * tells {@code contender}, so the leadership ends with it.
     */
    void start(Leadership leadership, Contender contender) throws Exception;

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
}
