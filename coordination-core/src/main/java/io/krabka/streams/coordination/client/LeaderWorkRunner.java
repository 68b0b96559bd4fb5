package io.krabka.streams.coordination.client;

import java.time.Duration;
import java.util.Objects;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link LeaderWork} for one leadership at a time on the runtime's worker threads,
 * under a name of its own: its end ends the leadership ({@link Contender#relinquish}), and
 * the leadership's end interrupts it. A role is never held without its work, and the work
 * never outlives its leadership unnoticed.
 */
public final class LeaderWorkRunner {

    private static final Logger log = LoggerFactory.getLogger(LeaderWorkRunner.class);

    private final String name;
    private final LeaderWork work;
    // The run under way, guarded by this: its thread (while it runs the work) and when it is done.
    private Thread thread;
    private CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
    // The runtime of the last start: stop waits on its ticker.
    private CoordinationRuntime runtime;

    /**
     * @param name the name its thread carries while the work runs (it shows in logs and thread dumps)
     */
    public LeaderWorkRunner(String name, LeaderWork work) {
        this.name = Objects.requireNonNull(name, "name");
        this.work = Objects.requireNonNull(work, "work");
    }

    /** Starts the work for a fresh leadership of {@code contender} on its runtime's workers; never blocks. */
    public void start(Leadership leadership, Contender contender) {
        CompletableFuture<Void> finished = new CompletableFuture<>();
        synchronized (this) {
            done = finished;
            runtime = contender.runtime();
        }
        contender.runtime().workers().execute(() -> {
            Throwable failure = run(leadership);
            finished.complete(null);
            contender.relinquish(leadership, failure);
        });
    }

    private Throwable run(Leadership leadership) {
        Thread current = Thread.currentThread();
        String poolName = current.getName();
        synchronized (this) {
            thread = current;
        }
        current.setName(name);
        try {
            work.lead(leadership);
            return null;
        } catch (Throwable failure) {
            log.debug("{} ended with {}", name, failure.toString());
            return failure;
        } finally {
            synchronized (this) {
                // After this, stop() no longer interrupts the pool thread, and an interrupt it sent stays here.
                thread = null;
                Thread.interrupted();
            }
            current.setName(poolName);
        }
    }

    /**
     * Interrupts the work and waits up to {@code bound} for it to return.
     *
     * @return whether it returned within {@code bound}
     */
    public boolean stop(Duration bound) {
        CompletableFuture<Void> finished;
        CoordinationRuntime on;
        synchronized (this) {
            finished = done;
            on = runtime;
            if (thread != null) {
                thread.interrupt();
            }
        }
        boolean returned;
        try {
            returned = on == null || on.await(finished, bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return finished.isDone();
        }
        if (!returned) {
            log.warn("{} did not finish within {} of its interrupt; it keeps running, but its guarded writes are fenced",
                    name, DurationText.of(bound));
        }
        return returned;
    }

    @Override
    public String toString() {
        return name;
    }
}
