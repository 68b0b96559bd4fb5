package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The listener of a contender that runs its role's work itself ({@link Contender#running}):
 * starts the work on each grant and stops it on each end, then tells {@code events}, if any.
 */
final class WorkListener implements Contender.Listener {

    private final LeaderWorkRunner runner;
    private final Contender.@Nullable Listener events;
    // Set once, right after the contender is built and before it starts.
    private volatile @Nullable Contender contender;

    WorkListener(LeaderWorkRunner runner, Contender.@Nullable Listener events) {
        this.runner = runner;
        this.events = events;
    }

    /** The contender whose work this runs: the work's end relinquishes its leadership. */
    Contender bind(Contender contender) {
        this.contender = contender;
        return contender;
    }

    @Override
    public void granted(Leadership leadership) throws Exception {
        runner.start(leadership, Objects.requireNonNull(contender, "bound before the contender starts"));
        if (events != null) {
            events.granted(leadership);
        }
    }

    @Override
    public void ended(Leadership leadership, LeadershipEndCause cause, @Nullable Throwable failure) {
        runner.stop(Contender.DEFAULT_CLOSE_TIMEOUT);
        if (events != null) {
            events.ended(leadership, cause, failure);
        }
    }

    @Override
    public void renewed(Leadership leadership, Duration took) {
        if (events != null) {
            events.renewed(leadership, took);
        }
    }

    @Override
    public void renewFailed(Leadership leadership, CoordinationException failure) {
        if (events != null) {
            events.renewFailed(leadership, failure);
        }
    }
}
