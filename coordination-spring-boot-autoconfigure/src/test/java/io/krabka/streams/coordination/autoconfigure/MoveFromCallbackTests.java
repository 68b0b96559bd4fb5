package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.Lifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * Planned moves started from the application's own callbacks (an outside review): a release
 * from a {@link LeadershipGrantedEvent} listener let the work of the released leadership start
 * beside the successor's; a release from a {@code Lifecycle}'s {@code stop()} called
 * {@code stop()} again through a nested release, fifty deep, and the outer release, which
 * let the role go, answered false.
 */
class MoveFromCallbackTests {

    private static final Role CONTROLLER = Role.of("controller");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class))
            .withUserConfiguration(OnLeadershipWorkTests.Cluster.class)
            .withPropertyValues("krabka.coordination.roles=controller", "krabka.coordination.member-id=n1");

    // ---- A release from the grant's event listener.

    @Configuration(proxyBeanMethods = false)
    static class ReleaseOnGrant {
        @Bean
        Calls calls(OnLeadershipWorkTests.Cluster cluster) {
            return new Calls(cluster.runtime);
        }

        @Bean
        GrantListener grantListener(ObjectProvider<LeadershipLoop> loop) {
            return new GrantListener(loop);
        }
    }

    /** Notes each call of the work: its term and whether its leadership was active when it began; runs until interrupted. */
    static class Calls {
        final ManualRuntime runtime;
        final List<String> calls = new CopyOnWriteArrayList<>();

        Calls(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void run(Leadership leadership) throws InterruptedException {
            calls.add(leadership.term() + ":" + leadership.isActive());
            while (true) {
                runtime.sleep(Duration.ofSeconds(10));
            }
        }
    }

    /** Releases the first leadership granted, from the event's own thread. */
    static class GrantListener {
        final ObjectProvider<LeadershipLoop> loop;
        final AtomicBoolean releasedOnce = new AtomicBoolean();
        final List<Boolean> answers = new CopyOnWriteArrayList<>();
        final List<Long> releasedTerms = new CopyOnWriteArrayList<>();

        GrantListener(ObjectProvider<LeadershipLoop> loop) {
            this.loop = loop;
        }

        @EventListener
        void on(LeadershipGrantedEvent event) {
            if (releasedOnce.compareAndSet(false, true)) {
                releasedTerms.add(event.leadership().term());
                answers.add(loop.getObject().release(CONTROLLER));
            }
        }
    }

    @Test
    void theWorkOfALeadershipReleasedByTheGrantListenerNeverStarts() {
        runner.withUserConfiguration(ReleaseOnGrant.class).run(context -> {
            OnLeadershipWorkTests.Cluster cluster = context.getBean(OnLeadershipWorkTests.Cluster.class);
            GrantListener listener = context.getBean(GrantListener.class);
            Calls calls = context.getBean(Calls.class);
            // Released on grant; the member rejoins and is granted again, and that leadership's work runs.
            cluster.until(() -> cluster.ends.size() == 1 && !calls.calls.isEmpty());
            assertThat(listener.answers).containsExactly(true);
            assertThat(cluster.ends)
                    .extracting(LeadershipEndedEvent::cause)
                    .containsExactly(LeadershipEndCause.RELEASED);
            long released = listener.releasedTerms.get(0);
            assertThat(context.getBean(LeadershipLoop.class).leadership(CONTROLLER))
                    .get()
                    .extracting(Leadership::term)
                    .isNotEqualTo(released);
            long now = context.getBean(LeadershipLoop.class)
                    .leadership(CONTROLLER)
                    .orElseThrow()
                    .term();
            assertThat(calls.calls)
                    .as("the work is called only for the leadership that followed the released one")
                    .containsExactly(now + ":true");
        });
    }

    // ---- A release from a Lifecycle's stop().

    @Configuration(proxyBeanMethods = false)
    static class ReleaseInStop {
        @Bean
        Releasing releasing(ObjectProvider<LeadershipLoop> loop) {
            return new Releasing(loop);
        }
    }

    /** Its stop() releases the role before it stops. A class proxy: the test reads it through its methods. */
    @OnLeadership(role = "controller")
    static class Releasing implements Lifecycle {
        final ObjectProvider<LeadershipLoop> loop;
        final AtomicInteger stops = new AtomicInteger();
        final List<Boolean> innerAnswers = new CopyOnWriteArrayList<>();
        private volatile boolean running;

        Releasing(ObjectProvider<LeadershipLoop> loop) {
            this.loop = loop;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            if (stops.incrementAndGet() < 5) {
                innerAnswers.add(loop.getObject().release(CONTROLLER));
            }
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        int stops() {
            return stops.get();
        }

        List<Boolean> innerAnswers() {
            return innerAnswers;
        }
    }

    @Test
    void aReleaseFromTheWorksStopIsTheReleaseUnderWay() {
        runner.withUserConfiguration(ReleaseInStop.class).run(context -> {
            OnLeadershipWorkTests.Cluster cluster = context.getBean(OnLeadershipWorkTests.Cluster.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Releasing bean = context.getBean(Releasing.class);
            cluster.until(() -> bean.isRunning());

            assertThat(loop.release(CONTROLLER))
                    .as("the release that let the role go")
                    .isTrue();
            assertThat(bean.stops()).as("stop() calls").isEqualTo(1);
            assertThat(bean.innerAnswers()).as("the release stop() made").containsExactly(false);
            assertThat(cluster.ends)
                    .extracting(LeadershipEndedEvent::cause)
                    .containsExactly(LeadershipEndCause.RELEASED);
        });
    }
}
