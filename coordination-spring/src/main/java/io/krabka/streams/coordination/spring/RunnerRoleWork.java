package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.LeaderWork;
import io.krabka.streams.coordination.client.LeaderWorkRunner;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;

/**
 * Work that runs for each leadership on the core's {@link LeaderWorkRunner} (the client
 * runtime's workers, under a thread name of its own): an {@link OnLeadership} method or
 * a {@link LeaderListener} pipeline. When it returns or throws while the leadership
 * lasts, the leadership ends with it; stopping interrupts it. Each leadership's run is
 * its own: one that outlives its stop is reported and abandoned, and the next is
 * interrupted at its own end all the same.
 */
final class RunnerRoleWork implements RoleWork {

    private final LeaderWorkRunner runner;

    RunnerRoleWork(String name, LeaderWork work) {
        this.runner = new LeaderWorkRunner(name, work);
    }

    /**
     * @param description what runs, for the report of a run that does not stop: the
     *     annotation, the method and the bean
     */
    RunnerRoleWork(String name, String description, LeaderWork work) {
        this.runner = new LeaderWorkRunner(name, description, work);
    }

    @Override
    public void start(Leadership leadership, Contender contender) {
        runner.start(leadership, contender);
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

    @Override
    public String toString() {
        return runner.toString();
    }
}
