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
 */
final class LifecycleRoleWork implements RoleWork {

    private static final Logger log = LoggerFactory.getLogger(LifecycleRoleWork.class);

    private final Lifecycle bean;
    private final String description;
    // The leadership of the last start; named by the stop that follows it.
    private volatile @Nullable Leadership leadership;

    LifecycleRoleWork(Lifecycle bean, String description) {
        this.bean = bean;
        this.description = description;
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        this.leadership = leadership;
        if (bean instanceof LeadershipAware aware) {
            aware.setLeadership(leadership);
        }
        OnLeadershipLifecycleGuard.startForTheLoop(bean);
    }

    /** Nothing: a Lifecycle bean is stopped by {@link #awaitStopped}, after the role's runs were all interrupted. */
    @Override
    public void interrupt() {}

    @Override
    public boolean awaitStopped(Duration bound, CoordinationRuntime runtime) {
        if (!bean.isRunning()) {
            return true;
        }
        if (!(bean instanceof SmartLifecycle smart)) {
            bean.stop();
            return true;
        }
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        smart.stop(() -> stopped.complete(null));
        boolean returned;
        try {
            returned = runtime.await(stopped, bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            returned = stopped.isDone();
        }
        if (!returned) {
            Leadership last = leadership;
            log.error(
                    "The work of role {} (term {}), {}, did not call back from stop(Runnable) within {}: the loop goes "
                            + "on without it, while whatever it still does goes on while this member no longer leads",
                    last == null ? "?" : last.role(),
                    last == null ? "?" : last.term(),
                    description,
                    bound.toMillis() + " ms");
        }
        return returned;
    }

    @Override
    public String toString() {
        return description;
    }
}
