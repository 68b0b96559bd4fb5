package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.Leadership;
import java.time.Duration;
import org.springframework.context.Lifecycle;

/** A {@link Lifecycle} bean annotated with {@link OnLeadership}: started on grant, stopped on loss. */
final class LifecycleRoleWork implements RoleWork {

    private final Lifecycle bean;
    private final String name;

    LifecycleRoleWork(Lifecycle bean, String beanName) {
        this.bean = bean;
        this.name = beanName;
    }

    @Override
    public void start(Leadership leadership) {
        bean.start();
    }

    @Override
    public void stop(Duration bound) {
        if (bean.isRunning()) {
            bean.stop();
        }
    }

    @Override
    public String describe() {
        return "lifecycle bean " + name;
    }
}
