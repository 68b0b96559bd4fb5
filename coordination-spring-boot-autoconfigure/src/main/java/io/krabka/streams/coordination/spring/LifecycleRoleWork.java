package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import java.time.Duration;
import org.springframework.context.Lifecycle;

/**
 * A {@link Lifecycle} bean annotated with {@link OnLeadership}: started on grant (after
 * {@link LeadershipAware#setLeadership}, if it implements that), stopped on loss. A
 * {@code start()} that throws ends the leadership as FAILED.
 */
final class LifecycleRoleWork implements RoleWork {

    private final Lifecycle bean;

    LifecycleRoleWork(Lifecycle bean) {
        this.bean = bean;
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        if (bean instanceof LeadershipAware aware) {
            aware.setLeadership(leadership);
        }
        bean.start();
    }

    @Override
    public void stop(Duration bound) {
        if (bean.isRunning()) {
            bean.stop();
        }
    }
}
