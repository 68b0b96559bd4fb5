package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeaderWork;
import io.krabka.streams.coordination.client.LeaderWorkRunner;
import java.time.Duration;

/**
 * Work that runs for each leadership on the core's {@link LeaderWorkRunner} (the client
 * runtime's workers, under a thread name of its own): an {@link OnLeadership} method or
 * a {@link LeaderListener} pipeline. When it returns or throws while the leadership
 * lasts, the leadership ends with it; stopping interrupts it.
 */
final class RunnerRoleWork implements RoleWork {

    private final LeaderWorkRunner runner;

    RunnerRoleWork(String name, LeaderWork work) {
        this.runner = new LeaderWorkRunner(name, work);
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        runner.start(leadership, contender);
    }

    @Override
    public void stop(Duration bound) {
        runner.stop(bound);
    }

    @Override
    public String toString() {
        return runner.toString();
    }
}
