package io.krabka.streams.coordination.autoconfigure;

import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.Lifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@code Lifecycle} whose {@code start()} hands its work to a thread that {@code stop()} joins,
 * and that thread gives the role up: the planned move stopped the bean on the releasing thread
 * itself, so {@code stop()} waited for its own caller and the release never returned (an
 * outside review). The bean is stopped on a worker now, waited for within the bound.
 */
class LifecycleReleaseFromItsThreadTests {

    private final InMemoryCluster cluster = new InMemoryCluster();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class))
            .withBean(CoordinationTransport.class, () -> cluster.transport(TopicSpec.DEFAULTS.withPartitions(3)))
            .withPropertyValues(
                    "krabka.coordination.roles=controller",
                    "krabka.coordination.member-id=n1",
                    "krabka.coordination.work-stop-timeout=1s");

    @Configuration(proxyBeanMethods = false)
    static class SelfReleasingConfig {
        @Bean
        Poller poller(ObjectProvider<LeadershipLoop> loop) {
            return new Poller(loop);
        }
    }

    /** The usual Lifecycle: start() hands the work to a thread that stop() stops and joins; the thread gives the role up. */
    @OnLeadership(role = "controller")
    static class Poller implements Lifecycle {
        final ObjectProvider<LeadershipLoop> loop;
        final AtomicBoolean releaseReturned = new AtomicBoolean();
        private volatile boolean running;
        private volatile Thread thread;

        Poller(ObjectProvider<LeadershipLoop> loop) {
            this.loop = loop;
        }

        @Override
        public void start() {
            running = true;
            Thread t = new Thread(
                    () -> {
                        try {
                            Thread.sleep(500);
                        } catch (InterruptedException e) {
                            return;
                        }
                        // A local problem: let another member lead.
                        loop.getObject().release(Role.of("controller"));
                        releaseReturned.set(true);
                        while (running) {
                            try {
                                Thread.sleep(20);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    },
                    "poller");
            t.setDaemon(true);
            thread = t;
            t.start();
        }

        @Override
        public void stop() {
            running = false;
            Thread t = thread;
            if (t != null) {
                try {
                    t.join(20_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        boolean released() {
            return releaseReturned.get();
        }
    }

    @Test
    void aLifecycleWorkerThreadThatReleasesTheRoleIsNotDeadlocked() {
        runner.withUserConfiguration(SelfReleasingConfig.class).run(context -> {
            Poller bean = context.getBean(Poller.class);
            await().atMost(Duration.ofSeconds(20)).until(bean::isRunning);

            await().atMost(Duration.ofSeconds(12))
                    .alias(
                            "release() from the Lifecycle's own worker thread returns within work-stop-timeout and slack")
                    .until(bean::released);
        });
    }
}
