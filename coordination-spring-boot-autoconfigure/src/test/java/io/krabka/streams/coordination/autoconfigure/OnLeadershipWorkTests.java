package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.context.event.EventListener;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * Issue 41, "work stops when its leadership stops": each leadership's {@code @OnLeadership}
 * work is its own, is interrupted at its end (all of a role's work together), and starts
 * only when the loop starts it; work the loop cannot run as such fails startup. On the
 * in-memory cluster and a {@link ManualRuntime}, as {@link LeadershipLoopTests}.
 */
@ExtendWith(OutputCaptureExtension.class)
class OnLeadershipWorkTests {

    private static final Role CONTROLLER = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class))
            .withUserConfiguration(Cluster.class)
            .withPropertyValues("krabka.coordination.roles=controller", "krabka.coordination.member-id=n1");

    /** Simulated time and an in-memory cluster; the ended events, in order. */
    @Configuration(proxyBeanMethods = false)
    static class Cluster {
        final ManualRuntime runtime = new ManualRuntime();
        final InMemoryCluster cluster = new InMemoryCluster(runtime);
        final List<LeadershipEndedEvent> ends = new CopyOnWriteArrayList<>();

        @Bean
        InstantSource coordinationClock() {
            return runtime.wallClock();
        }

        @Bean
        CoordinationRuntime coordinationRuntime() {
            return runtime;
        }

        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport() {
            // Never failing; it only turns the watcher off, so every pass runs on the manual clock.
            return new LeadershipLoopTests.FailingTransport(
                    cluster.transport(TOPIC),
                    runtime,
                    new AtomicBoolean(),
                    new AtomicBoolean(),
                    new AtomicBoolean(),
                    new CompletableFuture<>(),
                    new AtomicBoolean(),
                    new AtomicBoolean(),
                    new CountDownLatch(0));
        }

        @EventListener
        void on(LeadershipEndedEvent event) {
            ends.add(event);
        }

        void until(BooleanSupplier condition, Duration limit) {
            assertThat(runtime.advanceUntil(condition, limit))
                    .as("within %s of simulated time", limit)
                    .isTrue();
        }

        void until(BooleanSupplier condition) {
            until(condition, Duration.ofSeconds(30));
        }

        Duration elapsed() {
            return runtime.elapsed();
        }
    }

    // ---- Finding 1: one run per leadership; a run that outlives its stop is named, and the next is still interrupted.

    @Configuration(proxyBeanMethods = false)
    static class StubbornWork {
        @Bean
        Stubborn stubborn(Cluster cluster) {
            return new Stubborn(cluster.runtime);
        }
    }

    /** The first run gives its role up and ignores the interrupt until let go; every later run stops when interrupted. */
    static class Stubborn {
        final ManualRuntime runtime;
        final List<Leadership> leaderships = new CopyOnWriteArrayList<>();
        final AtomicBoolean letTheFirstGo = new AtomicBoolean();
        final AtomicBoolean firstReturned = new AtomicBoolean();
        final AtomicInteger laterRunsInterrupted = new AtomicInteger();

        Stubborn(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void work(Leadership leadership) {
            leaderships.add(leadership);
            if (leaderships.size() == 1) {
                leadership.close();
                while (!letTheFirstGo.get()) {
                    try {
                        runtime.sleep(Duration.ofSeconds(1));
                    } catch (InterruptedException ignored) {
                        // It does not stop when told to.
                    }
                }
                firstReturned.set(true);
                return;
            }
            try {
                while (true) {
                    runtime.sleep(Duration.ofSeconds(10));
                }
            } catch (InterruptedException e) {
                laterRunsInterrupted.incrementAndGet();
            }
        }
    }

    @Test
    void aRunThatOutlivesTheStopTimeoutIsReportedByNameAndTheNextLeadershipsRunIsStillInterrupted(
            CapturedOutput output) {
        runner.withUserConfiguration(StubbornWork.class)
                .withPropertyValues("krabka.coordination.work-stop-timeout=1s")
                .run(context -> {
                    Cluster cluster = context.getBean(Cluster.class);
                    Stubborn stubborn = context.getBean(Stubborn.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    // The first run outlives its stop; the member takes the role again and the second run starts.
                    cluster.until(() -> stubborn.leaderships.size() == 2);
                    assertThat(output)
                            .contains("ERROR")
                            .contains("role controller")
                            .contains("bean 'stubborn'")
                            .contains(Stubborn.class.getName() + ".work()")
                            .contains("thread 'krabka-work-controller-Stubborn.work'");
                    stubborn.letTheFirstGo.set(true);
                    cluster.until(stubborn.firstReturned::get);

                    // The second leadership ends: its run is interrupted and returns, long before the stop timeout.
                    Duration endedAt = cluster.elapsed();
                    loop.leadership(CONTROLLER).orElseThrow().close();
                    cluster.until(() -> cluster.ends.size() == 2);
                    assertThat(stubborn.laterRunsInterrupted)
                            .as("the second run was interrupted at its leadership's end")
                            .hasValue(1);
                    assertThat(cluster.elapsed().minus(endedAt)).isLessThan(Duration.ofSeconds(1));
                });
    }

    // ---- Finding 3: a role's works are interrupted together and waited for within one bound.

    @Configuration(proxyBeanMethods = false)
    static class TwoSlowWorks {
        @Bean
        SlowToStop first(Cluster cluster) {
            return new SlowToStop(cluster.runtime);
        }

        @Bean
        SlowToStop second(Cluster cluster) {
            return new SlowToStop(cluster.runtime);
        }
    }

    /** Takes 4 s to wind down once interrupted. */
    static class SlowToStop {
        final ManualRuntime runtime;
        final AtomicBoolean started = new AtomicBoolean();
        volatile Duration interruptedAt;

        SlowToStop(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void work() throws InterruptedException {
            started.set(true);
            try {
                while (true) {
                    runtime.sleep(Duration.ofSeconds(10));
                }
            } catch (InterruptedException e) {
                interruptedAt = runtime.elapsed();
                runtime.sleep(Duration.ofSeconds(4));
            }
        }
    }

    @Test
    void aRolesWorksAreInterruptedTogetherAndWaitedForWithinOneBound() {
        runner.withUserConfiguration(TwoSlowWorks.class)
                .withPropertyValues("krabka.coordination.work-stop-timeout=10s")
                .run(context -> {
                    Cluster cluster = context.getBean(Cluster.class);
                    SlowToStop first = context.getBean("first", SlowToStop.class);
                    SlowToStop second = context.getBean("second", SlowToStop.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    cluster.until(() -> first.started.get() && second.started.get());

                    Duration endedAt = cluster.elapsed();
                    loop.leadership(CONTROLLER).orElseThrow().close();
                    cluster.until(() -> cluster.ends.size() == 1);
                    assertThat(first.interruptedAt).isNotNull();
                    assertThat(second.interruptedAt)
                            .as("interrupted with the first, not after it returned")
                            .isEqualTo(first.interruptedAt);
                    // Both wound down side by side: the end waited about 4 s, not 8.
                    assertThat(cluster.elapsed().minus(endedAt)).isLessThan(Duration.ofSeconds(6));
                });
    }

    // ---- Finding 4: only the loop starts a Lifecycle work, whatever else calls start().

    @Configuration(proxyBeanMethods = false)
    static class LifecycleWorks {
        @Bean
        Smart smart() {
            return new Smart();
        }

        @Bean
        Plain plain() {
            return new Plain();
        }
    }

    /** A Lifecycle that counts its starts; read through methods, as the bean may be a proxy. */
    abstract static class Switch implements Lifecycle {
        private final AtomicInteger starts = new AtomicInteger();
        private volatile boolean running;

        int starts() {
            return starts.get();
        }

        @Override
        public void start() {
            starts.incrementAndGet();
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    @OnLeadership(role = "controller")
    static class Smart extends Switch implements SmartLifecycle {
        @Override
        public boolean isAutoStartup() {
            return false;
        }
    }

    @OnLeadership(role = "controller")
    static class Plain extends Switch {}

    @Test
    void startingTheContextOnAStandbyDoesNotStartItsLifecycleWorkOnlyTheGrantDoes() {
        runner.withUserConfiguration(LifecycleWorks.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Smart smart = context.getBean(Smart.class);
            Plain plain = context.getBean(Plain.class);
            try (CoordinationClient elsewhere =
                    new CoordinationClient(cluster.cluster.transport(TOPIC), LeaseConfig.DEFAULTS, cluster.runtime)) {
                Leadership held =
                        elsewhere.tryAcquire(CONTROLLER, MemberId.of("n9")).orElseThrow();
                cluster.runtime.advance(Duration.ofSeconds(2));
                assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.STANDBY);

                // Spring Cloud's /actuator/resume, a CRaC restore: the context starts its Lifecycle beans.
                context.start();
                assertThat(smart.isRunning())
                        .as("a SmartLifecycle work on a standby")
                        .isFalse();
                assertThat(plain.isRunning())
                        .as("a Lifecycle work on a standby")
                        .isFalse();
                assertThat(smart.starts()).isZero();
                assertThat(plain.starts()).isZero();

                // The other member lets go: the grant starts both.
                held.close();
                cluster.until(() ->
                        loop.state(CONTROLLER) == MemberRoleState.LEADER && smart.isRunning() && plain.isRunning());
                assertThat(smart.starts()).isEqualTo(1);
                assertThat(plain.starts()).isEqualTo(1);
            }
        });
    }

    // ---- Finding 5: @Async work would return at once and run where nothing interrupts it.

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncWork {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @Async
            @OnLeadership(role = "controller")
            public void run() throws InterruptedException {
                new CountDownLatch(1).await();
            }
        }
    }

    @Test
    void anAsyncOnLeadershipMethodFailsStartupSayingWhy() {
        runner.withUserConfiguration(AsyncWork.class)
                .run(context -> assertThat(failure(context))
                        .contains("@OnLeadership method " + AsyncWork.Work.class.getName() + ".run()")
                        .contains("@Async")
                        .contains("interrupt"));
    }

    // ---- Review A: a method whose work goes on after it returns would give the role up at once, over and over.

    @Configuration(proxyBeanMethods = false)
    static class FutureWork {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "controller")
            CompletableFuture<Void> run() {
                return new CompletableFuture<>();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class StageWork {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "controller")
            java.util.concurrent.CompletionStage<Void> run() {
                return new CompletableFuture<>();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class MonoWork {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "controller")
            reactor.core.publisher.Mono<Void> run() {
                return reactor.core.publisher.Mono.never();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FluxWork {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "controller")
            reactor.core.publisher.Flux<String> run() {
                return reactor.core.publisher.Flux.never();
            }
        }
    }

    @Test
    void anOnLeadershipMethodReturningAFutureOrAReactiveTypeFailsStartupSayingWhy() {
        record Case(Class<?> configuration, Class<?> work, String returned) {}
        for (Case c : List.of(
                new Case(FutureWork.class, FutureWork.Work.class, CompletableFuture.class.getName()),
                new Case(StageWork.class, StageWork.Work.class, "java.util.concurrent.CompletionStage"),
                new Case(MonoWork.class, MonoWork.Work.class, "reactor.core.publisher.Mono"),
                new Case(FluxWork.class, FluxWork.Work.class, "reactor.core.publisher.Flux"))) {
            runner.withUserConfiguration(c.configuration())
                    .run(context -> assertThat(failure(context))
                            .contains("@OnLeadership method " + c.work().getName() + ".run()")
                            .contains("bean 'work'")
                            .contains("returns " + c.returned())
                            .contains("must block for as long as it leads"));
        }
    }

    // ---- Finding 6: a non-singleton bean would add the work once per instance, for good.

    @Configuration(proxyBeanMethods = false)
    static class PrototypeWork {
        @Bean
        @Scope("prototype")
        Work work() {
            return new Work();
        }

        /** Creates five instances, as injection points or getObject() calls would. */
        @Bean
        Object fiveWorks(ObjectProvider<Work> works) {
            for (int i = 0; i < 5; i++) {
                works.getObject();
            }
            return new Object();
        }

        static class Work {
            @OnLeadership(role = "controller")
            void run() throws InterruptedException {
                new CountDownLatch(1).await();
            }
        }
    }

    /** Declared only: refused at startup too, not when something first asks for an instance. */
    @Configuration(proxyBeanMethods = false)
    static class UnusedPrototypeWork {
        @Bean
        @Scope("prototype")
        PrototypeWork.Work work() {
            return new PrototypeWork.Work();
        }
    }

    @Test
    void aNonSingletonOnLeadershipBeanFailsStartupSayingWhy() {
        runner.withUserConfiguration(PrototypeWork.class)
                .run(context -> assertThat(failure(context))
                        .contains("bean 'work'")
                        .contains("prototype")
                        .contains("singleton"));
        runner.withUserConfiguration(UnusedPrototypeWork.class)
                .run(context -> assertThat(failure(context))
                        .contains("bean 'work'")
                        .contains("prototype")
                        .contains("singleton"));
    }

    // ---- Finding 13: the role of @OnLeadership takes a ${...} placeholder, as @LeaderListener's does.

    @Configuration(proxyBeanMethods = false)
    static class PlaceholderWorks {
        @Bean
        PlaceholderMethod placeholderMethod(Cluster cluster) {
            return new PlaceholderMethod(cluster.runtime);
        }

        @Bean
        PlaceholderLifecycle placeholderLifecycle() {
            return new PlaceholderLifecycle();
        }
    }

    static class PlaceholderMethod {
        final ManualRuntime runtime;
        final AtomicBoolean ran = new AtomicBoolean();

        PlaceholderMethod(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "${app.role}")
        void run() throws InterruptedException {
            ran.set(true);
            while (true) {
                runtime.sleep(Duration.ofSeconds(10));
            }
        }
    }

    @OnLeadership(role = "${app.role}")
    static class PlaceholderLifecycle extends Switch {}

    @Test
    void theRoleOfOnLeadershipMayBeAPlaceholder() {
        runner.withUserConfiguration(PlaceholderWorks.class)
                .withPropertyValues("app.role=controller")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Cluster cluster = context.getBean(Cluster.class);
                    PlaceholderMethod method = context.getBean(PlaceholderMethod.class);
                    PlaceholderLifecycle lifecycle = context.getBean(PlaceholderLifecycle.class);
                    cluster.until(() -> method.ran.get() && lifecycle.isRunning());
                });
    }

    // ---- Review B: a Lifecycle start() that does its work in place cannot hold the end of its leadership up.

    @Configuration(proxyBeanMethods = false)
    static class BlockingStartWork {
        @Bean
        Poller poller(Cluster cluster) {
            return new Poller(cluster.runtime);
        }
    }

    /** Polls in start() until stopped or interrupted; read through methods, as the bean is a proxy. */
    @OnLeadership(role = "controller")
    static class Poller implements Lifecycle {
        private final ManualRuntime runtime;
        private final AtomicInteger polling = new AtomicInteger();
        private final AtomicInteger stops = new AtomicInteger();
        private volatile boolean running;

        Poller(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @Override
        public void start() {
            running = true;
            polling.incrementAndGet();
            try {
                while (running) {
                    runtime.sleep(Duration.ofMillis(20));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                polling.decrementAndGet();
            }
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

        int polling() {
            return polling.get();
        }

        int stops() {
            return stops.get();
        }
    }

    @Test
    void aLifecycleStartThatBlocksIsWarnedAboutAndStillStoppedAtTheEnd(CapturedOutput output) {
        runner.withUserConfiguration(BlockingStartWork.class)
                .withPropertyValues("krabka.coordination.work-stop-timeout=2s")
                .run(context -> {
                    Cluster cluster = context.getBean(Cluster.class);
                    Poller poller = context.getBean(Poller.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    cluster.until(() -> poller.polling() == 1);
                    cluster.runtime.advance(Duration.ofSeconds(3));
                    assertThat(output)
                            .contains("WARN")
                            .contains("bean 'poller'")
                            .contains("has not returned from start() within 2000 ms");

                    // The member is deposed while start() still polls: the end is not queued behind it.
                    loop.leadership(CONTROLLER).orElseThrow().close();
                    cluster.until(() -> cluster.ends.size() == 1, Duration.ofSeconds(5));
                    assertThat(poller.polling()).as("start() returned").isZero();
                    assertThat(poller.stops()).as("stop() was called").isEqualTo(1);
                });
    }

    // ---- Review C: a planned move stops the work before the successor can be granted.

    @Configuration(proxyBeanMethods = false)
    static class DeviceWorks {
        @Bean
        DeviceWork deviceWork(Cluster cluster) {
            return new DeviceWork(cluster.runtime);
        }
    }

    /**
     * Drives a device in calls of 4 s that do not answer the interrupt (as blocking socket
     * I/O), answering it between calls; or, when told to, ignores it altogether.
     */
    static class DeviceWork {
        final ManualRuntime runtime;
        final AtomicInteger inDevice = new AtomicInteger();
        final AtomicInteger runs = new AtomicInteger();
        final List<Long> terms = new CopyOnWriteArrayList<>();
        final AtomicBoolean deaf = new AtomicBoolean();
        final AtomicBoolean letGo = new AtomicBoolean();

        DeviceWork(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void drive(Leadership leadership) throws InterruptedException {
            runs.incrementAndGet();
            terms.add(leadership.term());
            while (true) {
                inDevice.incrementAndGet();
                boolean interrupted = false;
                try {
                    long end = runtime.nanoTime() + Duration.ofSeconds(4).toNanos();
                    while (runtime.nanoTime() < end || (deaf.get() && !letGo.get())) {
                        try {
                            runtime.sleep(Duration.ofMillis(10));
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                } finally {
                    inDevice.decrementAndGet();
                }
                if (interrupted) {
                    throw new InterruptedException();
                }
                runtime.sleep(Duration.ofMillis(10));
            }
        }
    }

    /** A standby on a client of its own: whether the member's work was inside the device when it was granted. */
    static final class Successor implements AutoCloseable {
        final CoordinationClient client;
        final io.krabka.streams.coordination.client.Contender contender;
        final AtomicInteger grantedWhileWorkInDevice = new AtomicInteger(-1);

        Successor(Cluster cluster, DeviceWork work) {
            client = new CoordinationClient(cluster.cluster.transport(TOPIC), LeaseConfig.DEFAULTS, cluster.runtime);
            contender = new io.krabka.streams.coordination.client.Contender(
                    client,
                    CONTROLLER,
                    MemberId.of("n2"),
                    new io.krabka.streams.coordination.client.Contender.Listener() {
                        @Override
                        public void granted(Leadership leadership) {
                            grantedWhileWorkInDevice.set(work.inDevice.get());
                        }

                        @Override
                        public void ended(
                                Leadership leadership,
                                io.krabka.streams.coordination.LeadershipEndCause cause,
                                Throwable failure) {}
                    });
            contender.start();
        }

        boolean granted() {
            return grantedWhileWorkInDevice.get() >= 0;
        }

        @Override
        public void close() {
            contender.stop();
            client.close();
        }
    }

    @Test
    void aReleaseStopsTheWorkBeforeTheSuccessorIsGranted() {
        runner.withUserConfiguration(DeviceWorks.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            DeviceWork work = context.getBean(DeviceWork.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            cluster.until(() -> work.inDevice.get() == 1);
            try (Successor n2 = new Successor(cluster, work)) {
                cluster.runtime.advance(Duration.ofSeconds(1));
                int runs = work.runs.get();

                assertThat(loop.release(CONTROLLER)).isTrue();
                cluster.until(n2::granted);
                assertThat(n2.grantedWhileWorkInDevice)
                        .as("the released member's work had stopped when the successor was granted")
                        .hasValue(0);
                assertThat(cluster.ends).hasSize(1);
                assertThat(cluster.ends.get(0).cause())
                        .as("a release, not a failure of the interrupted work")
                        .isEqualTo(io.krabka.streams.coordination.LeadershipEndCause.RELEASED);
                assertThat(work.runs).hasValue(runs);
            }
        });
    }

    @Test
    void aShutdownStopsTheWorkBeforeTheSuccessorIsGranted() {
        runner.withUserConfiguration(DeviceWorks.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            DeviceWork work = context.getBean(DeviceWork.class);
            cluster.until(() -> work.inDevice.get() == 1);
            try (Successor n2 = new Successor(cluster, work)) {
                cluster.runtime.advance(Duration.ofSeconds(1));
                context.close();
                cluster.until(n2::granted);
                assertThat(n2.grantedWhileWorkInDevice)
                        .as("the stopped member's work had stopped when the successor was granted")
                        .hasValue(0);
            }
        });
    }

    @Test
    void aWorkThatIgnoresTheInterruptDelaysAPlannedReleaseByWorkStopTimeoutAtMost(CapturedOutput output) {
        runner.withUserConfiguration(DeviceWorks.class)
                .withPropertyValues("krabka.coordination.work-stop-timeout=2s")
                .run(context -> {
                    Cluster cluster = context.getBean(Cluster.class);
                    DeviceWork work = context.getBean(DeviceWork.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    work.deaf.set(true);
                    cluster.until(() -> work.inDevice.get() == 1);
                    Leadership held = loop.leadership(CONTROLLER).orElseThrow();
                    try (Successor n2 = new Successor(cluster, work)) {
                        cluster.runtime.advance(Duration.ofSeconds(1));

                        Duration asked = cluster.elapsed();
                        assertThat(loop.release(CONTROLLER)).isTrue();
                        assertThat(held.isActive()).isFalse();
                        cluster.until(n2::granted);
                        assertThat(cluster.elapsed().minus(asked))
                                .as("released at work-stop-timeout, not held up by the work")
                                .isLessThan(Duration.ofSeconds(4));
                        assertThat(output)
                                .contains("did not stop within 2000 ms (work-stop-timeout) of its interrupt before the "
                                        + "role was let go")
                                .contains("krabka-work-controller-DeviceWork.drive");
                        work.letGo.set(true);
                        cluster.until(() -> work.inDevice.get() == 0);
                    }
                });
    }

    @Test
    void aHandoverThatDoesNotHappenRunsTheWorkAgainForTheSameLeadership() {
        runner.withUserConfiguration(DeviceWorks.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            DeviceWork work = context.getBean(DeviceWork.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            cluster.until(() -> work.inDevice.get() == 1);
            Leadership held = loop.leadership(CONTROLLER).orElseThrow();

            assertThat(loop.handOver(CONTROLLER, MemberId.of("nobody")))
                    .isNotEqualTo(io.krabka.streams.coordination.client.HandoverResult.HANDED_OVER);
            cluster.until(() -> work.runs.get() == 2 && work.inDevice.get() == 1);
            assertThat(held.isActive()).isTrue();
            assertThat(work.terms).containsExactly(held.term(), held.term());
            cluster.runtime.advance(Duration.ofSeconds(5));
            assertThat(loop.leadership(CONTROLLER)).containsSame(held);
            assertThat(cluster.ends).isEmpty();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class SelfReleasingWork {
        @Bean
        SelfReleasing selfReleasing(Cluster cluster, ObjectProvider<LeadershipLoop> loop) {
            return new SelfReleasing(cluster.runtime, loop);
        }
    }

    /** Its first run releases the role through the loop, from the work's own thread. */
    static class SelfReleasing {
        final ManualRuntime runtime;
        final ObjectProvider<LeadershipLoop> loop;
        final AtomicInteger runs = new AtomicInteger();
        final AtomicBoolean released = new AtomicBoolean();
        volatile Duration took;

        SelfReleasing(ManualRuntime runtime, ObjectProvider<LeadershipLoop> loop) {
            this.runtime = runtime;
            this.loop = loop;
        }

        @OnLeadership(role = "controller")
        void run() throws InterruptedException {
            if (runs.incrementAndGet() == 1) {
                Duration asked = runtime.elapsed();
                released.set(loop.getObject().release(CONTROLLER));
                took = runtime.elapsed().minus(asked);
                return;
            }
            while (true) {
                runtime.sleep(Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void aWorkThatReleasesItsOwnRoleIsNotWaitedForBeforeTheRelease(CapturedOutput output) {
        runner.withUserConfiguration(SelfReleasingWork.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            SelfReleasing work = context.getBean(SelfReleasing.class);
            cluster.until(() -> work.took != null);
            assertThat(work.released).isTrue();
            assertThat(work.took).isLessThan(Duration.ofSeconds(2));
            assertThat(output).doesNotContain("did not stop within");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class LifecycleDevice {
        @Bean
        DeviceWork deviceWork(Cluster cluster) {
            return new DeviceWork(cluster.runtime);
        }

        @Bean
        Device device(DeviceWork work) {
            return new Device(work);
        }
    }

    /** A Lifecycle work: in the device from start() until stop(), which takes 2 s to let go. */
    @OnLeadership(role = "controller")
    static class Device implements Lifecycle {
        private final DeviceWork work;
        private volatile boolean running;

        Device(DeviceWork work) {
            this.work = work;
        }

        @Override
        public void start() {
            running = true;
            work.inDevice.incrementAndGet();
        }

        @Override
        public void stop() {
            try {
                work.runtime.sleep(Duration.ofSeconds(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            running = false;
            work.inDevice.decrementAndGet();
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    @Test
    void aReleaseStopsALifecycleWorkBeforeTheSuccessorIsGranted() {
        runner.withUserConfiguration(LifecycleDevice.class).run(context -> {
            Cluster cluster = context.getBean(Cluster.class);
            DeviceWork work = context.getBean(DeviceWork.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            // The method work and the bean are both in the device.
            cluster.until(() -> work.inDevice.get() == 2);
            try (Successor n2 = new Successor(cluster, work)) {
                cluster.runtime.advance(Duration.ofSeconds(1));
                assertThat(loop.release(CONTROLLER)).isTrue();
                cluster.until(n2::granted);
                assertThat(n2.grantedWhileWorkInDevice).hasValue(0);
            }
        });
    }

    // ---- Review D: work of a lazy bean runs; nothing else would create the bean.

    @Configuration(proxyBeanMethods = false)
    static class LazyWorks {
        @Bean
        @org.springframework.context.annotation.Lazy
        Counted lazyMethod(Cluster cluster) {
            return new Counted(cluster.runtime);
        }

        @Bean
        @org.springframework.context.annotation.Lazy
        Plain lazyLifecycle() {
            return new Plain();
        }
    }

    /** Counts its runs; runs until interrupted. */
    static class Counted {
        final ManualRuntime runtime;
        final AtomicInteger runs = new AtomicInteger();

        Counted(ManualRuntime runtime) {
            this.runtime = runtime;
        }

        @OnLeadership(role = "controller")
        void run() throws InterruptedException {
            runs.incrementAndGet();
            while (true) {
                runtime.sleep(Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void theWorkOfALazyBeanRunsOnGrant() {
        runner.withUserConfiguration(LazyWorks.class)
                .withPropertyValues("krabka.coordination.require-work=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Cluster cluster = context.getBean(Cluster.class);
                    Counted counted = context.getBean(Counted.class);
                    Plain plain = context.getBean(Plain.class);
                    cluster.until(() -> counted.runs.get() == 1 && plain.isRunning());
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class EagerlyDeclaredWork {
        @Bean
        Counted counted(Cluster cluster) {
            return new Counted(cluster.runtime);
        }
    }

    @Test
    void theWorkRunsWithLazyInitializationEverywhere() {
        runner.withUserConfiguration(EagerlyDeclaredWork.class)
                .withInitializer(context -> context.addBeanFactoryPostProcessor(
                        new org.springframework.boot.LazyInitializationBeanFactoryPostProcessor()))
                .withPropertyValues("krabka.coordination.require-work=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Cluster cluster = context.getBean(Cluster.class);
                    Counted counted = context.getBean(Counted.class);
                    cluster.until(() -> counted.runs.get() == 1);
                });
    }

    private static String failure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        StringBuilder messages = new StringBuilder();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }
}
