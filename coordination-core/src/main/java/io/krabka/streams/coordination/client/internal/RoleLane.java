package io.krabka.streams.coordination.client.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One contender's serial lane: every change to its state and its pass loop's bookkeeping
 * is an event run here, one at a time and in the order posted (as Kafka's
 * {@code CoordinatorRuntime} runs the events of one state machine), so that state needs no
 * lock. The thread that posts an event to an idle lane runs it, and whatever others post
 * meanwhile, before it returns; an event posted while another thread runs the lane waits in
 * the queue for that thread. An event posted from an event runs at once, inside it, so an
 * event sees its own changes (and what the inner one throws goes to the outer one).
 *
 * <p>Events are short and never wait: no call that can wait on the cluster, no listener
 * and no user code runs on a lane. Whatever an event throws, an {@link Error} included, is
 * handed to the lane's failure handler and the lane goes on with the next.
 */
final class RoleLane {

    private final Queue<Runnable> events = new ConcurrentLinkedQueue<>();
    // The thread running the lane's events now; null while it is idle.
    private final AtomicReference<@Nullable Thread> runner = new AtomicReference<>();
    private final Consumer<Throwable> failed;

    RoleLane(Consumer<Throwable> failed) {
        this.failed = failed;
    }

    /** Runs {@code event} on the lane: now, when it is idle or this is one of its events; after those queued otherwise. */
    void run(Runnable event) {
        if (runner.get() == Thread.currentThread()) {
            // Part of the event that posted it: what it throws goes to that event.
            event.run();
            return;
        }
        events.add(event);
        // Whoever finds the lane idle runs the queue; one that finds it taken leaves its event to the runner,
        // which looks at the queue again after it lets the lane go, so no event is left behind.
        while (!events.isEmpty() && runner.compareAndSet(null, Thread.currentThread())) {
            try {
                for (Runnable next = events.poll(); next != null; next = events.poll()) {
                    runSafely(next);
                }
            } finally {
                runner.set(null);
            }
        }
    }

    /**
     * Runs {@code event} on the lane, then what it returns (null for nothing) off the lane:
     * on this thread when the event ran here, on {@code elsewhere} when another thread ran
     * it. So a pass that a lane event lets begin runs at once on the thread that asked,
     * as it would have under a lock, and never on the lane.
     */
    void runThen(Supplier<@Nullable Runnable> event, Executor elsewhere) {
        // A handoff per call, not the thread's identity: the asking thread may have left
        // (and come back with another event) by the time another thread runs this one.
        AtomicReference<Object> handoff = new AtomicReference<>();
        run(() -> {
            Runnable next = event.get();
            if (next != null && !handoff.compareAndSet(null, next)) {
                elsewhere.execute(next);
            }
        });
        if (handoff.getAndSet(LEFT) instanceof Runnable next) {
            next.run();
        }
    }

    /** What the asking thread leaves in a handoff once it no longer waits for a continuation. */
    private static final Object LEFT = new Object();

    private void runSafely(Runnable event) {
        try {
            event.run();
        } catch (Throwable failure) {
            try {
                failed.accept(failure);
            } catch (Throwable reporting) {
                // Even a failure to report one must not strand the events queued behind it.
                reporting.addSuppressed(failure);
            }
        }
    }
}
