package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A contender's listener callbacks: one at a time and in order, on the given executor
 * even when it has many threads, never on the contender's lane (a listener that calls
 * back into the contender, or blocks, must not stall its passes). A failing listener is
 * logged, never propagated.
 */
final class OrderedCallbacks {

    // The contender's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    private final Role role;
    private final Executor callbacks;
    private final CoordinationRuntime runtime;
    // Completes when the last callback issued so far ran; guarded by this.
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    // The thread running a callback now, if any: one at a time, so one field is enough.
    private volatile @Nullable Thread running;

    OrderedCallbacks(Role role, Executor callbacks, CoordinationRuntime runtime) {
        this.role = role;
        this.callbacks = callbacks;
        this.runtime = runtime;
    }

    /** Runs {@code task} after every earlier callback. */
    void run(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable guarded = () -> {
            running = Thread.currentThread();
            try {
                task.run();
            } catch (Throwable failure) {
                log.error("A listener of role {} failed", role, failure);
            } finally {
                running = null;
                done.complete(null);
            }
        };
        // Chained, so callbacks stay in order even on an executor with many threads.
        CompletableFuture<Void> previous;
        synchronized (this) {
            previous = last;
            last = done;
        }
        previous.whenComplete((ignored, error) -> {
            try {
                callbacks.execute(guarded);
            } catch (RuntimeException rejected) {
                log.warn("The listener of role {} could not be called: {}", role, rejected.toString());
                done.complete(null);
            }
        });
    }

    /**
     * Whether the calling thread is running one of these callbacks: a wait for the callbacks
     * issued so far would then wait for the one it is in, which cannot end before the wait does.
     */
    boolean inCallback() {
        return running == Thread.currentThread();
    }

    /**
     * Waits until every callback issued so far ran; whether they did within {@code timeout}.
     * From one of the callbacks it does not wait: false at once (see {@link #inCallback}).
     */
    boolean await(Duration timeout) {
        if (inCallback()) {
            return false;
        }
        CompletableFuture<Void> awaited;
        synchronized (this) {
            awaited = last;
        }
        try {
            return runtime.await(awaited, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
