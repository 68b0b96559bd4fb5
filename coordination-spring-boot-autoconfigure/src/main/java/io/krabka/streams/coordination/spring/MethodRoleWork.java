package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ReflectionUtils;

/**
 * An {@link OnLeadership} method, run on its own named thread for each leadership. When
 * it returns or throws while the leadership lasts, the leadership ends with it
 * ({@link Contender#relinquish}): a role is never held without its work.
 */
final class MethodRoleWork implements RoleWork {

    private static final Logger log = LoggerFactory.getLogger(MethodRoleWork.class);

    private final Object bean;
    private final Method method;
    private final boolean takesLeadership;
    private final String name;
    private volatile Thread thread;

    MethodRoleWork(Object bean, Method method, String role) {
        this.bean = bean;
        this.method = method;
        this.takesLeadership = method.getParameterCount() == 1;
        this.name = "krabka-work-" + role + "-" + method.getDeclaringClass().getSimpleName() + "." + method.getName();
        ReflectionUtils.makeAccessible(method);
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        Thread worker = new Thread(() -> contender.relinquish(leadership, invoke(leadership)), name);
        worker.setDaemon(true);
        thread = worker;
        worker.start();
    }

    /** Runs the method; returns what it threw, or null when it returned. */
    private Throwable invoke(Leadership leadership) {
        try {
            if (takesLeadership) {
                method.invoke(bean, leadership);
            } else {
                method.invoke(bean);
            }
            return null;
        } catch (InvocationTargetException e) {
            log.debug("{} ended with {}", name, e.getCause().toString());
            return e.getCause();
        } catch (IllegalAccessException e) {
            return e;
        }
    }

    @Override
    public void stop(Duration bound) {
        Thread worker = thread;
        if (worker == null) {
            return;
        }
        worker.interrupt();
        try {
            worker.join(TimeUnit.NANOSECONDS.toMillis(bound.toNanos()) + 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            log.warn("{} did not finish within {} of its interrupt; it keeps running, but its guarded writes are fenced",
                    name, bound);
        }
        thread = null;
    }
}
