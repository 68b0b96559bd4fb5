package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.LeaderWork;
import io.krabka.streams.coordination.client.LeaderWorkRunner;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Work that runs for each leadership on the core's {@link LeaderWorkRunner} (the client
 * runtime's workers, under a thread name of its own): an {@link OnLeadership} method or
 * a {@link LeaderListener} pipeline. When it returns or throws while the leadership
 * lasts, the leadership ends with it; stopping interrupts it. Each leadership's run is
 * its own: one that outlives its stop is reported and abandoned, and the next is
 * interrupted at its own end all the same.
 *
 * <p>Before a planned move the run is interrupted and its return held (the runner would
 * otherwise give the role up as soon as the work returns, before the move and to
 * whoever is next in line): it returns once the move was made, or runs the work again
 * when the move was not made and the leadership lasts.
 */
final class RunnerRoleWork implements RoleWork {

    /**
     * The longest a run held for a planned move waits for its outcome; the loop always
     * tells it long before (a handover's probe and release take about 15 s at most).
     */
    static final Duration HOLD_LIMIT = Duration.ofMinutes(1);

    private final LeaderWorkRunner runner;
    private final LeaderWork work;
    private volatile @Nullable Gate gate;

    RunnerRoleWork(String name, LeaderWork work) {
        this(name, name, work);
    }

    /**
     * @param description what runs, for the report of a run that does not stop: the
     *     annotation, the method and the bean
     */
    RunnerRoleWork(String name, String description, LeaderWork work) {
        this.work = work;
        this.runner = new LeaderWorkRunner(name, description, this::lead);
    }

    @Override
    public void start(Leadership leadership, Contender contender, CoordinationRuntime runtime, Duration stopTimeout) {
        gate = new Gate(leadership, runtime);
        runner.start(leadership, contender);
    }

    private void lead(Leadership leadership) throws Exception {
        Gate mine = gate;
        if (mine == null || mine.leadership != leadership) {
            work.lead(leadership);
            return;
        }
        while (true) {
            Throwable failure = null;
            // A move that began before this run reached the work holds the run before the work begins.
            if (mine.begin()) {
                try {
                    work.lead(leadership);
                } catch (Throwable e) {
                    failure = e;
                } finally {
                    mine.end();
                }
            }
            if (!mine.returned() || !mine.holdForMove()) {
                if (failure instanceof Exception exception) {
                    throw exception;
                }
                if (failure instanceof Error error) {
                    throw error;
                }
                if (failure != null) {
                    throw new IllegalStateException(failure);
                }
                return;
            }
            // The move was not made: the interrupt that stopped the work is spent, the work runs again.
            Thread.interrupted();
            if (!leadership.isActive()) {
                return;
            }
        }
    }

    @Override
    public void interrupt() {
        runner.interrupt();
    }

    @Override
    public boolean awaitStopped(Duration bound, CoordinationRuntime runtime) {
        // The run waits on the runtime it was started on.
        return runner.awaitStopped(bound);
    }

    /**
     * Nothing when the work itself asks for the move: it cannot wait for its own return, and
     * stops at the end. Only the work's thread is interrupted, not the runner's run: a run
     * the runner has not begun yet would take that interrupt for the leadership's end and
     * return at once, and its return would give the role up itself, before the move and to
     * whoever is next in line (so a release found nothing to release). Such a run instead
     * holds for the move without beginning the work.
     */
    @Override
    public void interruptBeforeMove() {
        Gate current = gate;
        if (current != null && current.thread != Thread.currentThread()) {
            current.moving();
        }
    }

    @Override
    public boolean awaitBeforeMove(Duration bound, CoordinationRuntime runtime) {
        Gate current = gate;
        if (current == null || current.thread == Thread.currentThread()) {
            return true;
        }
        return RoleWork.awaitDone(current.returnedFuture(), bound, runtime);
    }

    @Override
    public void moved() {
        Gate current = gate;
        if (current != null) {
            current.decide(false);
        }
    }

    @Override
    public void resume() {
        Gate current = gate;
        if (current != null) {
            current.decide(true);
        }
    }

    @Override
    public String toString() {
        return runner.toString();
    }

    /** What a planned move tells the run of one leadership. */
    private static final class Gate {
        final Leadership leadership;
        final CoordinationRuntime runtime;
        // The thread that runs the work now, if it does; written under this.
        volatile @Nullable Thread thread;
        // Guarded by this: whether a move waits for the work; the work's return; the move's outcome (true: resume).
        private boolean moving;
        // Guarded by this: the move was not made while the work was still stopping (slower than the bound): when
        // it returns, it runs again instead of its return ending the leadership.
        private boolean rerun;
        // Guarded by this: a move of this leadership was made; a run that has not begun the work does not begin it.
        private boolean moved;
        private CompletableFuture<Void> returned = new CompletableFuture<>();
        private CompletableFuture<Boolean> outcome = new CompletableFuture<>();

        Gate(Leadership leadership, CoordinationRuntime runtime) {
            this.leadership = leadership;
            this.runtime = runtime;
        }

        /**
         * Begins a call of the work on this thread, unless a move waits already (then the
         * work is not begun, and the run holds for the move's outcome as if it had returned)
         * or was made (the leadership is let go: the run returns).
         */
        synchronized boolean begin() {
            if (moving || moved) {
                return false;
            }
            thread = Thread.currentThread();
            return true;
        }

        /** The call of the work returned. */
        synchronized void end() {
            thread = null;
        }

        /**
         * A planned move begins: the work's call, if one runs, is interrupted, and its return
         * waited for; when none runs there is nothing to wait for.
         */
        synchronized void moving() {
            moving = true;
            Thread running = thread;
            if (running != null) {
                running.interrupt();
            } else {
                returned.complete(null);
            }
        }

        synchronized CompletableFuture<Void> returnedFuture() {
            return returned;
        }

        /** The work returned: whether a move waits for it (then the run holds its return). */
        synchronized boolean returned() {
            returned.complete(null);
            return moving || rerun;
        }

        synchronized void decide(boolean resume) {
            if (!moving) {
                return;
            }
            moving = false;
            moved = !resume;
            rerun = resume && !returned.isDone();
            outcome.complete(resume);
            outcome = new CompletableFuture<>();
            // A move that waits for a run that never began (it was stopped first) waits no longer.
            returned.complete(null);
            returned = new CompletableFuture<>();
        }

        /** Waits for the move's outcome: whether the work is to run again. */
        boolean holdForMove() {
            CompletableFuture<Boolean> decided;
            synchronized (this) {
                if (rerun) {
                    rerun = false;
                    return true;
                }
                if (!moving) {
                    return false;
                }
                decided = outcome;
            }
            long deadline = runtime.nanoTime() + HOLD_LIMIT.toNanos();
            boolean interrupted = false;
            while (!decided.isDone()) {
                long left = deadline - runtime.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    runtime.await(decided, Duration.ofNanos(left));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return decided.getNow(false);
        }
    }
}
