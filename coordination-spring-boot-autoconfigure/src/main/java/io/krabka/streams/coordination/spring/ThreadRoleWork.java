package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work that runs on its own named thread for each leadership: an {@link OnLeadership}
 * method or a {@link LeaderListener} pipeline. When it returns or throws while the
 * leadership lasts, the leadership ends with it ({@link Contender#relinquish}): a role is
 * never held without its work. Stopping interrupts the thread.
 */
final class ThreadRoleWork implements RoleWork {

    private static final Logger log = LoggerFactory.getLogger(ThreadRoleWork.class);

    /** The work's body for one leadership; returns normally when it ended by itself. */
    @FunctionalInterface
    interface Body {
        void run(Leadership leadership) throws Throwable;
    }

    private final String name;
    private final Body body;
    private volatile Thread thread;

    ThreadRoleWork(String name, Body body) {
        this.name = name;
        this.body = body;
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        Thread worker = new Thread(() -> contender.relinquish(leadership, invoke(leadership)), name);
        worker.setDaemon(true);
        thread = worker;
        worker.start();
    }

    /** Runs the body; returns what it threw, or null when it returned. */
    private Throwable invoke(Leadership leadership) {
        try {
            body.run(leadership);
            return null;
        } catch (Throwable e) {
            log.debug("{} ended with {}", name, e.toString());
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

    @Override
    public String toString() {
        return name;
    }
}
