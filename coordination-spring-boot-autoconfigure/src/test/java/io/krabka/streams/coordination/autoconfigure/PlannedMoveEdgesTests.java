package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.HandoverResult;
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
 * Edges of the planned move and of a Lifecycle started on a worker (an outside review): a
 * start() that returns only after an unplanned end had started the bean after the stop, and
 * nothing stopped it; a handover that was not made while the work was still stopping (slower
 * than the bound) ended the leadership FAILED when the work returned; a release right after a
 * grant, and releases from the application's own callbacks (a grant's event listener, a
 * Lifecycle's stop()), let the work run beside the successor's or answered untruly.
 */
class PlannedMoveEdgesTests {

    private static final Role CONTROLLER = Role.of("controller");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class))
            .withUserConfiguration(OnLeadershipWorkTests.Cluster.class)
            .withPropertyValues("krabka.coordination.roles=controller", "krabka.coordination.member-id=n1");

    // ---- 1. A Lifecycle start() still running at an unplanned end, that returns within the bound, leaves the bean
    // running.

    @Configuration(proxyBeanMethods = false)
    static class SlowStartConfig {
        @Bean
        SlowStart slowStart(OnLeadershipWorkTests.Cluster cluster) {
            return new SlowStart(cluster.runtime);
        }

        @Bean
        EndWatch endWatch(SlowStart slowStart) {
            return new EndWatch(slowStart);
        }
    }

    /** Whether the bean runs when the leadership's ended event is published (the end is over). */
    static class EndWatch {
        final SlowStart bean;
        final java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

        EndWatch(SlowStart bean) {
            this.bean = bean;
        }

        @org.springframework.context.event.EventListener
        void on(io.krabka.streams.coordination.spring.LeadershipEndedEvent event) {
            seen.add("running=" + bean.isRunning() + ",stops=" + bean.stops() + ",returnedStarts="
                    + bean.returnedStarts());
        }
    }

    @OnLeadership(role = "controller")
    static class SlowStart implements Lifecycle {
        private final ManualRuntime runtime;
        private final AtomicInteger starts = new AtomicInteger();
        private final AtomicInteger returnedStarts = new AtomicInteger();
        private final AtomicInteger stops = new AtomicInteger();
        private volatile boolean running;

        SlowStart(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @Override
        public void start() {
            starts.incrementAndGet();
            // Connects for 3 s, not answering the interrupt (socket I/O), then runs.
            long end = runtime.nanoTime() + Duration.ofSeconds(3).toNanos();
            while (runtime.nanoTime() < end) {
                try {
                    runtime.sleep(Duration.ofMillis(10));
                } catch (InterruptedException ignored) {
                    // blocking I/O
                }
            }
            running = true;
            returnedStarts.incrementAndGet();
        }

        @Override
        public void stop() {
            stops.incrementAndGet();
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        int starts() {
            return starts.get();
        }

        int returnedStarts() {
            return returnedStarts.get();
        }

        int stops() {
            return stops.get();
        }
    }

    @Test
    void aLifecycleWhoseStartReturnsAfterAnUnplannedEndIsStopped() {
        runner.withUserConfiguration(SlowStartConfig.class).run(context -> {
            OnLeadershipWorkTests.Cluster cluster = context.getBean(OnLeadershipWorkTests.Cluster.class);
            SlowStart bean = context.getBean(SlowStart.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            cluster.until(() -> bean.starts() == 1);
            cluster.runtime.advance(Duration.ofMillis(500));
            // An end the core makes (as a fence or an expiry would): start() still runs.
            loop.leadership(CONTROLLER).orElseThrow().close();
            cluster.until(() -> cluster.ends.size() == 1, Duration.ofSeconds(15));
            EndWatch watch = context.getBean(EndWatch.class);
            assertThat(watch.seen)
                    .as("at the end of the leadership, the bean whose start() returned after the interrupt is stopped")
                    .containsExactly("running=false,stops=1,returnedStarts=1");
        });
    }

    // ---- 2. A handover that does not happen, with a work slower than work-stop-timeout to stop: the role is given up.

    @Configuration(proxyBeanMethods = false)
    static class DeviceWorks {
        @Bean
        OnLeadershipWorkTests.DeviceWork deviceWork(OnLeadershipWorkTests.Cluster cluster) {
            return new OnLeadershipWorkTests.DeviceWork(cluster.runtime);
        }
    }

    @Test
    void aFailedHandoverWithASlowToStopWorkKeepsTheRole() {
        runner.withUserConfiguration(DeviceWorks.class)
                .withPropertyValues("krabka.coordination.work-stop-timeout=2s")
                .run(context -> {
                    OnLeadershipWorkTests.Cluster cluster = context.getBean(OnLeadershipWorkTests.Cluster.class);
                    OnLeadershipWorkTests.DeviceWork work = context.getBean(OnLeadershipWorkTests.DeviceWork.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    cluster.until(() -> work.inDevice.get() == 1);
                    Leadership held = loop.leadership(CONTROLLER).orElseThrow();

                    HandoverResult result = loop.handOver(CONTROLLER, MemberId.of("nobody"));
                    assertThat(result).isNotEqualTo(HandoverResult.HANDED_OVER);
                    assertThat(held.isActive())
                            .as("still held right after the handover")
                            .isTrue();
                    cluster.runtime.advance(Duration.ofSeconds(6));
                    assertThat(cluster.ends)
                            .as(
                                    "a handover that did not happen ends the leadership (%s)",
                                    cluster.ends.stream()
                                            .map(e -> e.cause() + ":" + e.failure())
                                            .toList())
                            .isEmpty();
                    assertThat(held.isActive()).isTrue();
                });
    }

    // ---- 3. A release right after a grant, before the grant's callback and work ran: the work's run let the role go
    // itself (release() found nothing to release), or the work started only after the release had stopped it.

    @Configuration(proxyBeanMethods = false)
    static class TermWorks {
        @Bean
        TermWork termWork(OnLeadershipWorkTests.Cluster cluster) {
            return new TermWork(cluster.runtime);
        }
    }

    /** One call of the work: its leadership's term, and whether the leadership was still held when the call ended. */
    record Call(long term, boolean heldWhenItEnded) {}

    /** Runs until interrupted, and notes each call. */
    static class TermWork {
        final ManualRuntime runtime;
        final List<Call> calls = new CopyOnWriteArrayList<>();

        TermWork(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void run(Leadership leadership) throws InterruptedException {
            try {
                while (true) {
                    runtime.sleep(Duration.ofSeconds(10));
                }
            } finally {
                calls.add(new Call(leadership.term(), leadership.isActive()));
            }
        }
    }

    @Test
    void aReleaseRightAfterTheGrantStopsTheWorkBeforeTheRoleIsLetGo() {
        runner.withUserConfiguration(TermWorks.class).run(context -> {
            OnLeadershipWorkTests.Cluster cluster = context.getBean(OnLeadershipWorkTests.Cluster.class);
            TermWork work = context.getBean(TermWork.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            // The grant is visible, as CoordinationTestSupport.awaitLeader sees it; its callback, which starts the
            // work, and the work's run on a worker have not run yet.
            cluster.until(() -> loop.leadership(CONTROLLER).isPresent());
            Leadership granted = loop.leadership(CONTROLLER).orElseThrow();

            assertThat(loop.release(CONTROLLER))
                    .as(
                            "release() of the role held releases it (its work's run did not let it go first: %s)",
                            cluster.ends.stream()
                                    .map(LeadershipEndedEvent::cause)
                                    .toList())
                    .isTrue();
            assertThat(cluster.ends)
                    .extracting(LeadershipEndedEvent::cause)
                    .containsExactly(LeadershipEndCause.RELEASED);
            assertThat(work.calls)
                    .filteredOn(call -> call.term() == granted.term())
                    .as("a call of the work for the released leadership ended while the role was still held")
                    .allMatch(Call::heldWhenItEnded);
        });
    }

    // ---- 4. A release from the grant's event listener started the work of the released leadership beside the
    // successor's.

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

    // ---- 5. A release from a Lifecycle's stop() called stop() again through nested releases, and the outer
    // release, which let the role go, answered false.

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
