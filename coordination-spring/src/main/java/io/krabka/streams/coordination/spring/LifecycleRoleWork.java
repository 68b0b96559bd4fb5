package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * A {@link Lifecycle} bean annotated with {@link OnLeadership}: started on grant (after
 * {@link LeadershipAware#setLeadership}, if it implements that), stopped on loss. A
 * {@code start()} that throws ends the leadership as FAILED. Only this starts it: the
 * bean's other callers are refused by {@link OnLeadershipLifecycleGuard}. A
 * {@link SmartLifecycle} is stopped through {@link SmartLifecycle#stop(Runnable)} and
 * waited for within the role's stop bound, as the context waits for it on shutdown.
 *
 * <p>{@code start()} runs on one of the runtime's workers, not on the role's callback
 * thread: a {@code start()} that does its work in place, and returns only when stopped,
 * would otherwise hold up the end of the leadership behind it, and its {@code stop()}
 * would never be called. A {@code start()} still running after {@code work-stop-timeout}
 * is reported with a WARN; at the end it is interrupted and {@code stop()} is called
 * all the same.
 */
final class LifecycleRoleWork implements RoleWork {

    private static final Logger log = LoggerFactory.getLogger(LifecycleRoleWork.class);

    private final Lifecycle bean;
    private final String name;
    private final String description;
    // The start of the last leadership; named by the stop that follows it.
    private volatile @Nullable Start start;

    LifecycleRoleWork(Lifecycle bean, String name, String description) {
        this.bean = bean;
        this.name = name;
        this.description = description;
    }

    @Override
    public void start(Leadership leadership, Contender contender, CoordinationRuntime runtime, Duration stopTimeout) {
        Start next = new Start(leadership, contender, runtime, stopTimeout);
        start = next;
        next.begin();
    }

    /** Interrupts a {@code start()} that has not returned; the bean itself is stopped by {@link #awaitStopped}. */
    @Override
    public void interrupt() {
        Start current = start;
        if (current != null) {
            current.interrupt();
        }
    }

    @Override
    public boolean awaitStopped(Duration bound, CoordinationRuntime runtime) {
        Start current = start;
        long deadline = runtime.nanoTime() + bound.toNanos();
        if (current != null) {
            current.ended();
        }
        boolean stopped = stopBean(bound, runtime);
        if (current == null) {
            return stopped;
        }
        AfterStop after = awaitStart(current, deadline, runtime);
        if (!after.returned() && current.abandon()) {
            log.error(
                    "The work of role {} (term {}), {}, did not return from start() within {} of its interrupt and stop(): "
                            + "abandoned, it still runs on thread '{}', while this member no longer leads. start() must "
                            + "return promptly, handing its work to threads that stop() stops",
                    current.leadership.role(),
                    current.leadership.term(),
                    description,
                    bound.toMillis() + " ms",
                    current.threadName());
        }
        return stopped && after.done();
    }

    @Override
    public void interruptBeforeMove() {
        Start current = start;
        if (current != null && !current.onThisThread()) {
            current.moving = true;
            current.interrupt();
        }
    }

    @Override
    public boolean awaitBeforeMove(Duration bound, CoordinationRuntime runtime) {
        Start asked = start;
        if (asked != null && asked.onThisThread()) {
            // start() itself asks for the move: it cannot wait for itself; the end stops the bean.
            return true;
        }
        long deadline = runtime.nanoTime() + bound.toNanos();
        boolean stopped = stopBean(bound, runtime);
        Start current = start;
        if (current == null) {
            return stopped;
        }
        // Waited for whatever the first stop said: a start() under way must not outlive the move.
        AfterStop after = awaitStart(current, deadline, runtime);
        return stopped && after.done();
    }

    /** How a {@code start()} under way ended after the bean was stopped: whether it returned, and the bean then stopped. */
    private record AfterStop(boolean returned, boolean stopped) {
        boolean done() {
            return returned && stopped;
        }
    }

    /**
     * After the bean was stopped, waits until {@code deadline} for {@code current}'s
     * {@code start()}; one that returned only now started the bean after that stop, so it is
     * stopped again.
     */
    private AfterStop awaitStart(Start current, long deadline, CoordinationRuntime runtime) {
        boolean returned = current.await(RoleWork.left(deadline, runtime), runtime);
        return new AfterStop(returned, !returned || stopBean(RoleWork.left(deadline, runtime), runtime));
    }

    @Override
    public void moved() {}

    /** Starts the bean again for the same leadership, unless its last {@code start()} still runs. */
    @Override
    public void resume() {
        Start current = start;
        if (current != null && current.returned.isDone() && current.leadership.isActive()) {
            Start again = new Start(current.leadership, current.contender, current.runtime, current.stopTimeout);
            start = again;
            again.begin();
        }
    }

    /**
     * Stops the bean if it runs, on a worker, and waits for it within {@code bound}: the
     * caller may be a thread the bean's own {@code stop()} joins (one its {@code start()}
     * spawned, releasing the role), which would otherwise wait for itself for ever.
     */
    private boolean stopBean(Duration bound, CoordinationRuntime runtime) {
        if (!bean.isRunning()) {
            return true;
        }
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        runtime.workers().execute(() -> {
            try {
                if (bean instanceof SmartLifecycle smart) {
                    smart.stop(() -> stopped.complete(null));
                } else {
                    bean.stop();
                    stopped.complete(null);
                }
            } catch (Throwable failure) {
                log.error("The work of role {}, {}, failed in stop()", roleOf(start), description, failure);
                stopped.complete(null);
            }
        });
        boolean returned = RoleWork.awaitDone(stopped, bound, runtime);
        if (!returned) {
            Start last = start;
            log.error(
                    "The work of role {} (term {}), {}, did not finish stop() within {}: the loop goes "
                            + "on without it, while whatever it still does goes on while this member no longer leads",
                    last == null ? "?" : last.leadership.role(),
                    last == null ? "?" : last.leadership.term(),
                    description,
                    bound.toMillis() + " ms");
        }
        return returned;
    }

    private static Object roleOf(@Nullable Start start) {
        return start == null ? "?" : start.leadership.role();
    }

    @Override
    public String toString() {
        return description;
    }

    /** One call of {@code start()} for a leadership, on a worker. */
    private final class Start {
        final Leadership leadership;
        final Contender contender;
        final CoordinationRuntime runtime;
        final Duration stopTimeout;
        final CompletableFuture<Void> returned = new CompletableFuture<>();
        // Set before a planned move's interrupt: a start() that throws then does not end the leadership itself.
        volatile boolean moving;
        // Guarded by this: the worker while it runs start(); whether the leadership ended; whether it was given up on.
        private @Nullable Thread thread;
        private @Nullable String threadName;
        private boolean ended;
        private boolean abandoned;

        Start(Leadership leadership, Contender contender, CoordinationRuntime runtime, Duration stopTimeout) {
            this.leadership = leadership;
            this.contender = contender;
            this.runtime = runtime;
            this.stopTimeout = stopTimeout;
        }

        void begin() {
            CoordinationRuntime.Scheduled slow = runtime.schedule(this::warnIfRunning, stopTimeout);
            returned.whenComplete((done, failure) -> slow.cancel());
            runtime.workers().execute(this::run);
        }

        private void run() {
            Thread current = Thread.currentThread();
            String poolName = current.getName();
            synchronized (this) {
                if (ended) {
                    // The leadership ended before its start() began: it is not started at all.
                    returned.complete(null);
                    return;
                }
                thread = current;
                threadName = name;
            }
            current.setName(name);
            Throwable failure = null;
            try {
                if (bean instanceof LeadershipAware aware) {
                    aware.setLeadership(leadership);
                }
                OnLeadershipLifecycleGuard.startForTheLoop(bean);
            } catch (Throwable e) {
                failure = e;
            } finally {
                boolean late;
                synchronized (this) {
                    thread = null;
                    Thread.interrupted();
                    late = abandoned;
                }
                current.setName(poolName);
                returned.complete(null);
                if (late && bean.isRunning()) {
                    // Its end went by while start() still ran: stop what it started now.
                    bean.stop();
                }
            }
            boolean endedMeanwhile;
            synchronized (this) {
                endedMeanwhile = ended;
            }
            if (failure != null && !endedMeanwhile && !moving) {
                contender.relinquish(leadership, failure);
            }
        }

        synchronized void interrupt() {
            if (thread != null) {
                thread.interrupt();
            }
        }

        synchronized boolean onThisThread() {
            return thread == Thread.currentThread();
        }

        synchronized void ended() {
            ended = true;
        }

        synchronized boolean abandon() {
            if (returned.isDone() || abandoned) {
                return false;
            }
            abandoned = true;
            return true;
        }

        synchronized String threadName() {
            return threadName == null ? "(none yet)" : threadName;
        }

        boolean await(Duration bound, CoordinationRuntime runtime) {
            return RoleWork.awaitDone(returned, bound, runtime);
        }

        private void warnIfRunning() {
            boolean running;
            synchronized (this) {
                running = thread != null && !ended;
            }
            if (running) {
                log.warn(
                        "The work of role {} (term {}), {}, has not returned from start() within {} (work-stop-timeout) "
                                + "of the grant: start() must return promptly, handing its work to threads that stop() "
                                + "stops. It runs on a worker thread, so the end of the leadership still interrupts it "
                                + "and calls stop()",
                        leadership.role(),
                        leadership.term(),
                        description,
                        stopTimeout.toMillis() + " ms");
            }
        }
    }
}
