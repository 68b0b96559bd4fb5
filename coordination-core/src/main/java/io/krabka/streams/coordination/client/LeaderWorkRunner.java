package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.client.internal.DurationText;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link LeaderWork} for one leadership at a time on the runtime's worker threads,
 * under a name of its own: its end ends the leadership ({@link Contender#relinquish}), and
 * the leadership's end interrupts it. A role is never held without its work, and the work
 * never outlives its leadership unnoticed.
 *
 * <p>Each leadership gets a run of its own, never shared with the next: a run that does
 * not return within its stop bound is abandoned with an ERROR that names it (role, term,
 * what it runs, and the thread with its stack), and neither its later return nor anything
 * else of it touches the next leadership's run, which its own end interrupts in turn.
 */
public final class LeaderWorkRunner {

    private static final Logger log = LoggerFactory.getLogger(LeaderWorkRunner.class);

    private final String name;
    private final String description;
    private final LeaderWork work;
    // The run of the latest leadership, until it returned or was abandoned; guarded by this.
    private @Nullable Run current;

    /**
     * @param name the name its thread carries while the work runs (it shows in logs and thread dumps)
     */
    public LeaderWorkRunner(String name, LeaderWork work) {
        this(name, name, work);
    }

    /**
     * @param name the name its thread carries while the work runs (it shows in logs and thread dumps)
     * @param description what the work is, for the report of a run that does not stop (for example
     *     the bean and method it calls)
     */
    public LeaderWorkRunner(String name, String description, LeaderWork work) {
        this.name = Objects.requireNonNull(name, "name");
        this.description = Objects.requireNonNull(description, "description");
        this.work = Objects.requireNonNull(work, "work");
    }

    /**
     * Starts the work for a fresh leadership of {@code contender} on its runtime's workers;
     * never blocks. A run of an earlier leadership that was never stopped is interrupted and
     * abandoned first, with an ERROR that names it.
     */
    public void start(Leadership leadership, Contender contender) {
        Run run = new Run(leadership, contender.runtime());
        Run previous;
        synchronized (this) {
            previous = current;
            current = run;
        }
        if (previous != null && previous.abandonIfRunning()) {
            previous.interrupt();
            previous.report("was still running when the next leadership (term " + leadership.term() + ") started");
        }
        contender.runtime().workers().execute(() -> {
            Throwable failure = run.run();
            run.done.complete(null);
            contender.relinquish(leadership, failure);
        });
    }

    /** Interrupts the work of the current leadership, if it runs, without waiting for it. */
    public void interrupt() {
        Run run;
        synchronized (this) {
            run = current;
        }
        if (run != null) {
            run.interrupt();
        }
    }

    /**
     * Waits up to {@code bound} for the work of the current leadership, interrupted by
     * {@link #interrupt()}, to return. If it does not, it is abandoned: an ERROR names it
     * and where it is, it keeps its thread, and the next {@link #start} runs beside it.
     *
     * @return whether it returned within {@code bound}
     */
    public boolean awaitStopped(Duration bound) {
        Run run;
        synchronized (this) {
            run = current;
        }
        if (run == null) {
            return true;
        }
        boolean returned;
        boolean interrupted = false;
        try {
            returned = run.runtime.await(run.done, bound);
        } catch (InterruptedException e) {
            interrupted = true;
            returned = run.done.isDone();
        }
        if (!returned && run.abandonIfRunning()) {
            run.report(
                    interrupted
                            ? "was still running when the wait for it was interrupted"
                            : "did not return within " + DurationText.of(bound) + " of its interrupt");
        }
        synchronized (this) {
            if (current == run) {
                current = null;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return returned;
    }

    /**
     * Interrupts the work and waits up to {@code bound} for it to return.
     *
     * @return whether it returned within {@code bound}
     */
    public boolean stop(Duration bound) {
        interrupt();
        return awaitStopped(bound);
    }

    @Override
    public String toString() {
        return name;
    }

    /** One leadership's run of the work. */
    private final class Run {
        final Leadership leadership;
        final CoordinationRuntime runtime;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        // Guarded by this run: its thread while it runs the work, whether it was told to stop, and given up on.
        private @Nullable Thread thread;
        private boolean interrupted;
        private boolean abandoned;

        Run(Leadership leadership, CoordinationRuntime runtime) {
            this.leadership = leadership;
            this.runtime = runtime;
        }

        @Nullable
        Throwable run() {
            Thread current = Thread.currentThread();
            String poolName = current.getName();
            synchronized (this) {
                if (interrupted) {
                    // Stopped before it began: the leadership is over, so is its work.
                    return null;
                }
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
                    // After this, an interrupt of this run no longer reaches the pool thread, and one it sent stays
                    // here.
                    thread = null;
                    Thread.interrupted();
                }
                current.setName(poolName);
            }
        }

        synchronized void interrupt() {
            interrupted = true;
            if (thread != null) {
                thread.interrupt();
            }
        }

        /** Marks this run abandoned if it has not returned; whether it did so now. */
        synchronized boolean abandonIfRunning() {
            if (done.isDone() || abandoned) {
                return false;
            }
            abandoned = true;
            return true;
        }

        /** The ERROR of an abandoned run: the role, the term, what it runs, the thread, and the thread's stack. */
        void report(String what) {
            Thread on;
            synchronized (this) {
                on = thread;
            }
            String where = on == null
                    ? "no thread yet (queued for a worker)"
                    : "thread '" + on.getName() + "' (id " + on.getId() + ", " + on.getState() + ")";
            Throwable stack = null;
            if (on != null) {
                stack = new Throwable("where " + on.getName() + " is now");
                stack.setStackTrace(on.getStackTrace());
            }
            log.error(
                    "The work of role {} (term {}), {}, {}: abandoned, it still runs on {}. Its guarded writes are "
                            + "fenced, but whatever else it does goes on while this member no longer leads: make it return "
                            + "when interrupted",
                    leadership.role(),
                    leadership.term(),
                    description,
                    what,
                    where,
                    stack);
        }
    }
}
