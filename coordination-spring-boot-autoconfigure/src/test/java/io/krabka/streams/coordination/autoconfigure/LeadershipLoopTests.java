package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.actuate.CoordinationEndpointWebExtension;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.LeadershipAware;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * The leadership loop inside a real application context, on the in-memory cluster and a
 * {@link ManualRuntime}: passes, renewals, expiry timers, listeners and the role's work all
 * run on simulated time, so each step is driven by advancing it, never by polling. Grants
 * start role-scoped work, a lease that expires without a successful renewal stops it, and
 * a release hands the role back.
 */
class LeadershipLoopTests {

    private static final Role CONTROLLER = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    KafkaAutoConfiguration.class,
                    CoordinationAutoConfiguration.class,
                    EndpointAutoConfiguration.class,
                    CoordinationEndpointAutoConfiguration.class))
            .withUserConfiguration(Member.class)
            .withPropertyValues(
                    "krabka.coordination.roles=controller",
                    "krabka.coordination.member-id=n1",
                    "management.endpoints.web.exposure.include=coordination");

    @Configuration(proxyBeanMethods = false)
    static class Member {

        /** Closed with the context, after the loop stopped. */
        final ManualRuntime runtime = new ManualRuntime();

        final ManualClock clock = runtime.wallClock();
        /** Outlives the context, so a test can read the roster after shutdown. */
        final InMemoryCluster cluster = new InMemoryCluster(runtime);

        final AtomicBoolean failWrites = new AtomicBoolean();
        final AtomicBoolean breakProducer = new AtomicBoolean();
        /** Hanging transactions wait for it on simulated time (they run on the runtime's tasks). */
        final CompletableFuture<Void> hangWrites = new CompletableFuture<>();
        /** Hanging describes wait for it in real time: the endpoint describes on threads of its own. */
        final CountDownLatch hangDescribes = new CountDownLatch(1);
        /** How many many-role describes (the endpoint's reads of the cluster) were started. */
        final AtomicInteger describeReads = new AtomicInteger();

        final AtomicBoolean hang = new AtomicBoolean();
        final List<Object> events = new CopyOnWriteArrayList<>();
        final AtomicInteger workStarted = new AtomicInteger();
        final AtomicInteger workInterrupted = new AtomicInteger();
        /** What the @OnLeadership method does: runs until interrupted, returns, or throws. */
        final AtomicReference<String> workMode = new AtomicReference<>("forever");

        /** The first grant's work mode comes from a property: set before the loop starts, so no race. */
        @org.springframework.beans.factory.annotation.Autowired
        void workMode(org.springframework.core.env.Environment environment) {
            workMode.set(environment.getProperty("test.work-mode", "forever"));
            failGrantListener.set(environment.getProperty("test.fail-grant-listener", Integer.class, 0));
            if (environment.getProperty("test.block-grant-listener", Boolean.class, false)) {
                blockGrantListener.set(new CompletableFuture<>());
            }
        }
        /** How many more grant events the listener fails on. */
        final AtomicInteger failGrantListener = new AtomicInteger();
        /** While set, the grant listener blocks until it completes. */
        final AtomicReference<CompletableFuture<Void>> blockGrantListener = new AtomicReference<>();
        /** Lets a hanging transaction go on to the cluster instead of failing. */
        final AtomicBoolean hangThenCommit = new AtomicBoolean();
        /** While set, describing a role's epoch hangs like an unresponsive coordinator. */
        final AtomicBoolean hangDescribe = new AtomicBoolean();

        @Bean
        InstantSource coordinationClock() {
            return clock;
        }

        /** Replaces the starter's runtime, as an application's own bean would. */
        @Bean
        CoordinationRuntime coordinationRuntime() {
            return runtime;
        }

        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport() {
            return new FailingTransport(
                    cluster.transport(TOPIC),
                    runtime,
                    failWrites,
                    breakProducer,
                    hang,
                    hangWrites,
                    hangThenCommit,
                    hangDescribe,
                    hangDescribes,
                    describeReads);
        }

        /** Runs the simulation until {@code condition} holds, at most {@code limit} of simulated time. */
        void until(BooleanSupplier condition, Duration limit) {
            assertThat(runtime.advanceUntil(condition, limit))
                    .as("within %s of simulated time", limit)
                    .isTrue();
        }

        /** As {@link #until(BooleanSupplier, Duration)} within a lease and a half: a grant, a start, an event. */
        void until(BooleanSupplier condition) {
            until(condition, LeaseConfig.DEFAULTS.duration().multipliedBy(3).dividedBy(2));
        }

        @Bean
        Worker worker() {
            return new Worker(this);
        }

        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher();
        }

        @EventListener
        void on(LeadershipGrantedEvent event) throws InterruptedException {
            events.add(event);
            CompletableFuture<Void> block = blockGrantListener.get();
            if (block != null) {
                runtime.await(block, Duration.ofMinutes(10));
            }
            if (failGrantListener.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("injected: a grant listener failed");
            }
        }

        @EventListener
        void on(LeadershipEndedEvent event) {
            events.add(event);
        }
    }

    static class Worker {
        private final Member member;

        Worker(Member member) {
            this.member = member;
        }

        @OnLeadership(role = "controller")
        void work(Leadership leadership) {
            member.workStarted.incrementAndGet();
            if (member.workMode.get().equals("returns")) {
                return;
            }
            if (member.workMode.get().equals("throws")) {
                throw new IllegalStateException("injected: the work failed");
            }
            try {
                while (true) {
                    member.runtime.sleep(Duration.ofSeconds(10));
                }
            } catch (InterruptedException e) {
                member.workInterrupted.incrementAndGet();
            }
        }
    }

    /**
     * A role-scoped lifecycle bean: it must not start with the context, only on grant. Read
     * through its methods: the bean the context hands out is a proxy that guards its start().
     */
    @OnLeadership(role = "controller")
    static class Dispatcher implements SmartLifecycle, LeadershipAware {
        private final AtomicInteger starts = new AtomicInteger();
        private volatile Leadership leadership;
        private volatile boolean running;

        int starts() {
            return starts.get();
        }

        Leadership leadership() {
            return leadership;
        }

        @Override
        public void setLeadership(Leadership leadership) {
            this.leadership = leadership;
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

        @Override
        public boolean isAutoStartup() {
            return false;
        }
    }

    @Test
    void grantStartsRoleScopedWorkAndAnExpiredLeaseStopsItThenTheMemberRejoins() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Dispatcher dispatcher = context.getBean(Dispatcher.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            member.until(() -> member.workStarted.get() == 1 && dispatcher.isRunning());
            assertThat(member.events.get(0)).isInstanceOf(LeadershipGrantedEvent.class);
            // A Lifecycle bean is handed its leadership before it starts.
            assertThat(dispatcher.leadership())
                    .isSameAs(loop.leadership(CONTROLLER).orElseThrow());

            // Every write now fails transiently; the renewal keeps retrying until the deadline.
            member.failWrites.set(true);
            Instant deadline = loop.leadership(CONTROLLER).orElseThrow().deadline();
            member.until(() -> member.events.size() >= 2);
            // At the deadline, give or take a pass (20 ms): not a renewal interval or a retry later.
            assertThat(member.clock.instant())
                    .as("ended at the lease deadline")
                    .isBetween(deadline, deadline.plusMillis(100));
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
                assertThat(ended.cause()).isEqualTo(LeadershipEndCause.EXPIRED);
                assertThat(ended.member()).isEqualTo(MemberId.of("n1"));
            });
            assertThat(member.workInterrupted).hasValue(1);
            assertThat(dispatcher.isRunning()).isFalse();

            // The cluster recovers: the member contends again and, alone, takes the role back.
            member.failWrites.set(false);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            member.until(() -> member.workStarted.get() == 2 && dispatcher.starts() == 2);
            LeadershipGrantedEvent first = (LeadershipGrantedEvent) member.events.get(0);
            LeadershipGrantedEvent second = (LeadershipGrantedEvent) member.events.get(2);
            assertThat(second.token().supersedes(first.token())).isTrue();
        });
    }

    @Test
    void theLeadershipEndsAtTheDeadlineWhileARenewalHangsAndTheEventSaysExpiredThen() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Dispatcher dispatcher = context.getBean(Dispatcher.class);
            member.until(() -> member.workStarted.get() == 1 && dispatcher.isRunning());

            // The next renewal blocks: the role's own thread is stuck inside it.
            member.hang.set(true);
            Instant deadline = loop.leadership(CONTROLLER).orElseThrow().deadline();
            // The end is reported at the deadline, while the renewal still hangs.
            member.until(() -> member.events.size() >= 2);
            // At the deadline, give or take a pass (20 ms): not a renewal interval or a retry later.
            assertThat(member.clock.instant())
                    .as("ended at the lease deadline")
                    .isBetween(deadline, deadline.plusMillis(100));
            assertThat(member.events.get(1))
                    .isInstanceOfSatisfying(
                            LeadershipEndedEvent.class,
                            ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.EXPIRED));
            assertThat(member.workInterrupted).hasValue(1);
            assertThat(dispatcher.isRunning()).isFalse();
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.STANDBY);
            // Health turns DOWN with the end, not when the blocked renewal gives up.
            assertThat(loop.problem(CONTROLLER))
                    .get()
                    .extracting(Throwable::getMessage)
                    .asString()
                    .contains("got no answer", "before the lease deadline");

            // The blocked renewal now reaches the cluster: it must not bring the leadership
            // back without its work. The member contends again and starts the work anew.
            member.hang.set(false);
            member.hangThenCommit.set(true);
            member.hangWrites.complete(null);
            member.until(() -> member.workStarted.get() == 2 && dispatcher.isRunning());
            assertThat(member.events).hasSize(3);
            assertThat(member.events.get(2)).isInstanceOf(LeadershipGrantedEvent.class);
            assertThat(loop.leadership(CONTROLLER).orElseThrow().term())
                    .isGreaterThan(((LeadershipGrantedEvent) member.events.get(0))
                            .token()
                            .term());
        });
    }

    @Test
    void anOnLeadershipMethodThatReturnsReleasesTheRoleAndTheMemberRejoins() {
        runner.withPropertyValues("test.work-mode=returns").run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
                assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED);
                assertThat(ended.failure()).isEmpty();
            });
            assertThat(context.getBean(Dispatcher.class).isRunning()).isFalse();
            // Released with a tombstone: granted again with the lease clock standing still.
            member.until(() -> member.workStarted.get() >= 2);
            assertThat(member.events.get(2)).isInstanceOf(LeadershipGrantedEvent.class);
            assertThat(loop.roles()).containsExactly(CONTROLLER);
        });
    }

    @Test
    void anOnLeadershipMethodThatThrowsEndsTheLeadershipAsFailedAndTheMemberRejoins() {
        runner.withPropertyValues("test.work-mode=throws").run(context -> {
            Member member = context.getBean(Member.class);
            member.until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
                assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED);
                assertThat(ended.failure())
                        .get()
                        .extracting(Throwable::getMessage)
                        .isEqualTo("injected: the work failed");
            });
            member.workMode.set("forever");
            member.until(() -> member.workStarted.get() == 2
                    && context.getBean(LeadershipLoop.class).state(CONTROLLER) == MemberRoleState.LEADER);
        });
    }

    @Test
    void aGrantListenerThatThrowsEndsTheLeadershipAsFailedAndStopsTheWorkThatStarted() {
        runner.withPropertyValues("test.fail-grant-listener=1").run(context -> {
            Member member = context.getBean(Member.class);
            Dispatcher dispatcher = context.getBean(Dispatcher.class);
            member.until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1))
                    .isInstanceOfSatisfying(
                            LeadershipEndedEvent.class,
                            ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED));
            // The failure came before any work started; the next grant starts it.
            member.until(() -> member.workStarted.get() == 1 && dispatcher.isRunning());
            assertThat(member.events.get(2)).isInstanceOf(LeadershipGrantedEvent.class);
        });
    }

    @Test
    void aListenerThatBlocksForTwoLeasesDoesNotStopTheRenewals() {
        runner.withPropertyValues("test.block-grant-listener=true").run(context -> {
            Member member = context.getBean(Member.class);
            CompletableFuture<Void> block = member.blockGrantListener.get();
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> member.events.size() == 1);
            Leadership held = loop.leadership(CONTROLLER).orElseThrow();
            // Two leases of renew intervals: each renewal must happen while the listener blocks.
            for (int renewal = 0; renewal < 6; renewal++) {
                Instant previous = held.deadline();
                member.until(
                        () -> held.deadline().isAfter(previous),
                        LeaseConfig.DEFAULTS.renewInterval().plusSeconds(1));
            }
            assertThat(held.isActive()).isTrue();
            assertThat(member.events).hasSize(1);
            block.complete(null);
            member.until(() -> member.workStarted.get() == 1);
        });
    }

    @Test
    void whenTheWorksOwnWriteOrCloseEndsTheLeadershipTheLoopSaysWhyAndContendsAgain() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Leadership first = breakTheProducerDuringAWriteOfTheWork(member, loop);
            member.until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1))
                    .isInstanceOfSatisfying(
                            LeadershipEndedEvent.class,
                            ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED));
            assertThat(member.workInterrupted).hasValue(1);

            // Its own lease still stands in the log: like any standby, it takes the role back
            // once that passes its deadline.
            member.breakProducer.set(false);
            member.until(() -> member.workStarted.get() == 2);
            Leadership second = loop.leadership(CONTROLLER).orElseThrow();
            assertThat(second.token().supersedes(first.token())).isTrue();

            // The work gives the role up itself.
            second.close();
            member.until(() -> member.events.size() >= 4);
            assertThat(member.events.get(3))
                    .isInstanceOfSatisfying(
                            LeadershipEndedEvent.class,
                            ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED));
            member.until(() -> member.workStarted.get() == 3);
        });
    }

    @Test
    void shutdownRightAfterTheWorksWriteFailedReportsTheFailureAndLeavesTheRoster() {
        Member[] started = new Member[1];
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            started[0] = member;
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            breakTheProducerDuringAWriteOfTheWork(member, loop);
            // The context closes now, whether or not the loop has seen the failure yet.
        });
        Member member = started[0];
        assertThat(member.events)
                .filteredOn(LeadershipEndedEvent.class::isInstance)
                .first()
                .isInstanceOfSatisfying(
                        LeadershipEndedEvent.class,
                        ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED));
        try (CoordinationClient reader =
                new CoordinationClient(member.cluster.transport(TOPIC), LeaseConfig.DEFAULTS, member.clock)) {
            assertThat(reader.observe(CONTROLLER, Duration.ZERO).roster())
                    .extracting(RankedMember::member)
                    .doesNotContain(MemberId.of("n1"));
        }
    }

    /**
     * Role-scoped work writes and the producer breaks beyond recovery: the write ends the
     * leadership on the work's thread, not on the loop's, and no renewal is due.
     */
    private static Leadership breakTheProducerDuringAWriteOfTheWork(Member member, LeadershipLoop loop) {
        member.until(() -> member.workStarted.get() == 1);
        Leadership held = loop.leadership(CONTROLLER).orElseThrow();
        member.breakProducer.set(true);
        assertThatThrownBy(() -> held.write(new ProducerRecord<>("commands", new byte[1])))
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.FAILED));
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        return held;
    }

    @Test
    void theEndpointReleasesAHeldRoleOnlyWhenEnabledAndAnswersWithTheHttpStatusThatSaysWhy() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            WebEndpointResponse<CoordinationEndpointWebExtension.ReleaseResult> refused =
                    context.getBean(CoordinationEndpointWebExtension.class).release("controller");
            assertThat(refused.getStatus()).isEqualTo(403);
            assertThat(refused.getBody().detail()).contains("krabka.coordination.endpoint.release-enabled=true");
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.LEADER);
        });
        runner.withPropertyValues("krabka.coordination.endpoint.release-enabled=true")
                .run(context -> {
                    Member member = context.getBean(Member.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    CoordinationEndpointWebExtension endpoint = context.getBean(CoordinationEndpointWebExtension.class);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
                    WebEndpointResponse<CoordinationEndpointWebExtension.ReleaseResult> released =
                            endpoint.release("controller");
                    assertThat(released.getStatus()).isEqualTo(200);
                    assertThat(released.getBody().released()).isTrue();
                    // Published before release() returns; the member, still contending and alone,
                    // may already have been granted the role again afterwards.
                    assertThat(member.events.get(1))
                            .isInstanceOfSatisfying(
                                    LeadershipEndedEvent.class,
                                    ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED));
                    assertThat(endpoint.release("scheduler").getStatus()).isEqualTo(404);
                    // A handover to a member that is no standby of the role is refused, whether or not it is held
                    // again.
                    WebEndpointResponse<CoordinationEndpointWebExtension.ReleaseResult> nobody =
                            endpoint.handOver("controller", "nobody");
                    assertThat(nobody.getStatus()).isEqualTo(409);
                    assertThat(nobody.getBody().released()).isFalse();
                    assertThat(endpoint.handOver("scheduler", "nobody").getStatus())
                            .isEqualTo(404);
                    // Not held: the lease runs out while every write fails, so it cannot be taken back.
                    member.failWrites.set(true);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.STANDBY);
                    assertThat(endpoint.release("controller").getStatus()).isEqualTo(409);
                });
    }

    @Test
    void theEndpointKeepsABoundedCacheOfOtherRolesAndReusesAFreshAnswer() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
            try (CoordinationClient elsewhere =
                    new CoordinationClient(member.cluster.transport(TOPIC), LeaseConfig.DEFAULTS, member.runtime)) {
                Leadership scheduler = elsewhere
                        .tryAcquire(Role.of("scheduler"), MemberId.of("n9"))
                        .orElseThrow();
                assertThat(endpoint.role(SecurityContext.NONE, "scheduler").holder())
                        .isEqualTo("n9");
                // Released since: within its freshness the endpoint answers from the cache, not the topic.
                scheduler.close();
                assertThat(endpoint.role(SecurityContext.NONE, "scheduler").holder())
                        .isEqualTo("n9");
            }
            for (int i = 0; i < CoordinationEndpoint.OTHER_ROLES_CACHED + 50; i++) {
                assertThat(endpoint.role(SecurityContext.NONE, "nobody-" + i)).isNull();
            }
            assertThat(endpoint.cachedOtherRoles()).isEqualTo(CoordinationEndpoint.OTHER_ROLES_CACHED);
        });
    }

    @Test
    void theEndpointDescribesAnyRoleOfTheTopicAndAnswers404ForOneNobodyKnows() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            // Another member, elsewhere, holds a role this one does not contend for.
            try (CoordinationClient elsewhere =
                    new CoordinationClient(member.cluster.transport(TOPIC), LeaseConfig.DEFAULTS, member.runtime)) {
                elsewhere.tryAcquire(Role.of("scheduler"), MemberId.of("n9")).orElseThrow();
                CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
                CoordinationEndpoint.RoleReport scheduler = endpoint.role(SecurityContext.NONE, "scheduler");
                assertThat(scheduler.holder()).isEqualTo("n9");
                assertThat(scheduler.current()).isTrue();
                assertThat(scheduler.state()).isEqualTo("not-configured");
                assertThat(endpoint.role(SecurityContext.NONE, "nobody-ever")).isNull();
                assertThat(endpoint.role(SecurityContext.NONE, "bad\u200Bname")).isNull();
            }
        });
    }

    @Test
    void theEndpointShowsTheRosterAndEpochsOnlyPerShowDetails() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            CoordinationEndpoint.RoleReport hidden = awaitClusterView(context.getBean(CoordinationEndpoint.class))
                    .roles()
                    .get("controller");
            assertThat(hidden.holder()).isEqualTo("n1");
            assertThat(hidden.current()).isTrue();
            assertThat(hidden.token().term()).isPositive();
            assertThat(hidden.token().producerId()).isNull();
            assertThat(hidden.roster()).isNull();
            assertThat(hidden.transactionState()).isNull();
        });
        runner.withPropertyValues("krabka.coordination.endpoint.show-details=always")
                .run(context -> {
                    Member member = context.getBean(Member.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
                    CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
                    awaitClusterView(endpoint);
                    CoordinationEndpoint.RoleReport shown = endpoint.role(SecurityContext.NONE, "controller");
                    assertThat(shown.token().producerId()).isNotNull();
                    assertThat(shown.roster())
                            .extracting(CoordinationEndpoint.RosterMember::member)
                            .containsExactly("n1");
                    assertThat(shown.transactionState()).isNotBlank();
                });
    }

    /**
     * The report once a read of the cluster returned. The endpoint reads on a thread of its
     * own, in real time; simulated time stands still meanwhile, so the view stays fresh.
     */
    private static CoordinationEndpoint.CoordinationReport awaitClusterView(CoordinationEndpoint endpoint) {
        AtomicReference<CoordinationEndpoint.CoordinationReport> seen = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            seen.set(endpoint.coordination(SecurityContext.NONE));
            return seen.get().clusterView().asOf() != null
                    && !seen.get().clusterView().refreshing();
        });
        return seen.get();
    }

    private static Duration took(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /**
     * Before any read of the cluster returned, and while none does: the report answers at
     * once with this member's own knowledge; from 2 s on (simulated) it says the cluster
     * did not answer.
     */
    @Test
    void theEndpointAnswersAtOnceBeforeTheClusterEverAnswered() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            member.hangDescribe.set(true);
            CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
            long start = System.nanoTime();
            CoordinationEndpoint.CoordinationReport report = endpoint.coordination(SecurityContext.NONE);
            assertThat(took(start)).isLessThan(Duration.ofSeconds(1));
            assertThat(report.clusterView())
                    .isEqualTo(new CoordinationEndpoint.ClusterViewReport(null, null, null, true, null));
            CoordinationEndpoint.RoleReport role = report.roles().get("controller");
            assertThat(role.problem())
                    .isEqualTo("no read of the cluster has returned yet; ask again shortly;"
                            + " holder, token and lease times are this member's own");
            assertThat(role.asOf()).isNull();

            member.runtime.advance(Duration.ofSeconds(2));
            start = System.nanoTime();
            report = endpoint.coordination(SecurityContext.NONE);
            assertThat(took(start)).isLessThan(Duration.ofSeconds(1));
            assertThat(report.clusterView().problem()).isEqualTo("the cluster did not answer within 2 s");
            role = report.roles().get("controller");
            assertThat(role.state()).isEqualTo("leader");
            assertThat(role.problem()).contains("did not answer within 2 s");
            // It holds the role: what its own leadership knows, without the coordinator's word.
            Leadership held = loop.leadership(CONTROLLER).orElseThrow();
            assertThat(role.holder()).isEqualTo("n1");
            assertThat(role.token().term()).isEqualTo(held.term());
            assertThat(role.deadline()).isEqualTo(held.deadline());
            assertThat(role.grantedAt()).isEqualTo(held.grantedAt());
            assertThat(role.current()).isFalse();
            assertThat(role.problem()).endsWith("; holder, token and lease times are this member's own");
            member.hangDescribe.set(false);
            member.hangDescribes.countDown();
            assertThat(awaitClusterView(endpoint).roles().get("controller").current())
                    .isTrue();
        });
    }

    /**
     * Once the view is a second old (simulated) a request starts one read and answers
     * without waiting for it, with the last view and its age; while that read hangs no
     * other starts, and from 2 s on every answer says the cluster did not answer.
     */
    @Test
    void theEndpointAnswersWithTheLastViewAndItsAgeWhileTheClusterDoesNotAnswer() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
            CoordinationEndpoint.CoordinationReport first = awaitClusterView(endpoint);
            Instant asOf = first.clusterView().asOf();
            assertThat(asOf).isEqualTo(member.clock.instant());
            assertThat(first.clusterView().ageMillis()).isZero();
            assertThat(first.clusterView().readMillis()).isZero();
            assertThat(first.roles().get("controller").asOf()).isEqualTo(asOf);
            int reads = member.describeReads.get();

            member.hangDescribe.set(true);
            member.runtime.advance(Duration.ofSeconds(1));
            long start = System.nanoTime();
            CoordinationEndpoint.CoordinationReport report = endpoint.coordination(SecurityContext.NONE);
            assertThat(took(start)).isLessThan(Duration.ofSeconds(1));
            assertThat(report.clusterView())
                    .isEqualTo(new CoordinationEndpoint.ClusterViewReport(asOf, 1_000L, 0L, true, null));
            CoordinationEndpoint.RoleReport role = report.roles().get("controller");
            assertThat(role.holder()).isEqualTo("n1");
            assertThat(role.current()).isTrue();
            assertThat(role.problem()).isNull();
            assertThat(role.ageMillis()).isEqualTo(1_000L);

            member.runtime.advance(Duration.ofSeconds(2));
            for (int i = 0; i < 20; i++) {
                start = System.nanoTime();
                report = endpoint.coordination(SecurityContext.NONE);
                assertThat(took(start)).isLessThan(Duration.ofSeconds(1));
            }
            assertThat(endpoint.role(SecurityContext.NONE, "controller").problem())
                    .contains("did not answer within 2 s");
            assertThat(report.clusterView())
                    .isEqualTo(new CoordinationEndpoint.ClusterViewReport(
                            asOf, 3_000L, 0L, true, "the cluster did not answer within 2 s"));
            role = report.roles().get("controller");
            assertThat(role.state()).isEqualTo("leader");
            assertThat(role.holder()).isEqualTo("n1");
            assertThat(role.current())
                    .as("unconfirmed while the cluster does not answer")
                    .isFalse();
            assertThat(role.problem()).isEqualTo("the cluster did not answer within 2 s");
            assertThat(role.asOf()).isEqualTo(asOf);
            await().atMost(Duration.ofSeconds(10)).until(() -> member.describeReads.get() == reads + 1);
            assertThat(member.describeReads.get())
                    .as("one read for all those requests")
                    .isEqualTo(reads + 1);

            member.hangDescribe.set(false);
            member.hangDescribes.countDown();
            CoordinationEndpoint.CoordinationReport after = awaitClusterView(endpoint);
            assertThat(after.clusterView().asOf())
                    .isEqualTo(member.clock.instant())
                    .isAfter(asOf);
            assertThat(after.clusterView().problem()).isNull();
            assertThat(after.roles().get("controller").current()).isTrue();
        });
    }

    /**
     * The first request after a quiet spell (nothing asked for longer than twice the max age,
     * 1 s, and the 2 s a read may take) finds an old view: a failover may have happened
     * since, so the view is not {@code current} and says why, until the read that request
     * started returns. A request before that spell was over saw no problem.
     */
    @Test
    void aViewLeftOldByAQuietSpellIsNotCurrentUntilItIsReadAgain() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
            Instant asOf = awaitClusterView(endpoint).clusterView().asOf();

            // Nobody asks for 5 s; the read the next request starts hangs, so that request sees the old view.
            member.hangDescribe.set(true);
            member.runtime.advance(Duration.ofSeconds(5));
            CoordinationEndpoint.CoordinationReport report = endpoint.coordination(SecurityContext.NONE);
            String old = "the cluster's view is 5000 ms old (nothing asked for it lately);"
                    + " a new read is under way: ask again shortly";
            assertThat(report.clusterView())
                    .isEqualTo(new CoordinationEndpoint.ClusterViewReport(asOf, 5_000L, 0L, true, old));
            CoordinationEndpoint.RoleReport role = report.roles().get("controller");
            assertThat(role.holder()).isEqualTo("n1");
            assertThat(role.current()).as("confirmed by a view 5 s old").isFalse();
            assertThat(role.problem()).isEqualTo(old);
            // Later requests get the same view while that read is under way, and the same problem.
            member.runtime.advance(Duration.ofMillis(500));
            assertThat(endpoint.coordination(SecurityContext.NONE).clusterView().problem())
                    .startsWith("the cluster's view is 5500 ms old");

            member.hangDescribe.set(false);
            member.hangDescribes.countDown();
            CoordinationEndpoint.CoordinationReport after = awaitClusterView(endpoint);
            assertThat(after.clusterView().asOf()).isAfter(asOf);
            assertThat(after.clusterView().problem()).isNull();
            assertThat(after.roles().get("controller").current()).isTrue();
        });
    }

    /**
     * What the member knows of itself is never older than the request: once its lease ran
     * out, an old view that names it holding is not {@code current}; granted again, under
     * a newer term, it reports its own lease.
     */
    @Test
    void theEndpointCorrectsAnOldViewWithWhatTheMemberKnowsOfItself() {
        runner.withPropertyValues("krabka.coordination.endpoint.cluster-view-max-age=1h")
                .run(context -> {
                    Member member = context.getBean(Member.class);
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    CoordinationEndpoint endpoint = context.getBean(CoordinationEndpoint.class);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
                    Leadership first = loop.leadership(CONTROLLER).orElseThrow();
                    assertThat(awaitClusterView(endpoint)
                                    .roles()
                                    .get("controller")
                                    .current())
                            .isTrue();

                    // The lease runs out while every write fails; the view (fresh for an hour) still names it.
                    member.failWrites.set(true);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.STANDBY);
                    CoordinationEndpoint.RoleReport lapsed = endpoint.role(SecurityContext.NONE, "controller");
                    assertThat(lapsed.state()).isEqualTo("standby");
                    assertThat(lapsed.holder()).isEqualTo("n1");
                    assertThat(lapsed.current()).isFalse();
                    assertThat(lapsed.problem())
                            .startsWith(
                                    "this member no longer holds the term " + first.term() + " the cluster's view of ")
                            .endsWith(" ms ago shows it holding");

                    // Granted again under a newer term: its own lease, not the view's.
                    member.failWrites.set(false);
                    member.until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER, Duration.ofMinutes(2));
                    Leadership second = loop.leadership(CONTROLLER).orElseThrow();
                    assertThat(second.term()).isGreaterThan(first.term());
                    CoordinationEndpoint.RoleReport granted = endpoint.role(SecurityContext.NONE, "controller");
                    assertThat(granted.holder()).isEqualTo("n1");
                    assertThat(granted.token().term()).isEqualTo(second.term());
                    assertThat(granted.grantedAt()).isEqualTo(second.grantedAt());
                    assertThat(granted.deadline()).isEqualTo(second.deadline());
                    assertThat(granted.current()).isFalse();
                    assertThat(granted.leaseToken()).isNull();
                    assertThat(granted.problem())
                            .startsWith("this member holds the role under term " + second.term()
                                    + ", newer than the cluster's view of ")
                            .endsWith(" ms ago shows; holder, token and lease times are its own");
                });
    }

    /**
     * The in-memory transport whose transactions fail (transiently, beyond recovery, or by
     * hanging) and whose describes hang, while a flag is set.
     */
    static final class FailingTransport extends ForwardingTransport {
        private final AtomicBoolean fail;
        private final AtomicBoolean broken;
        private final AtomicBoolean hang;
        private final CoordinationRuntime runtime;
        private final CompletableFuture<Void> released;
        private final AtomicBoolean commitAfterHang;
        private final AtomicBoolean hangDescribe;
        private final CountDownLatch describesAnswer;
        private final AtomicInteger describeReads;

        FailingTransport(
                CoordinationTransport delegate,
                CoordinationRuntime runtime,
                AtomicBoolean fail,
                AtomicBoolean broken,
                AtomicBoolean hang,
                CompletableFuture<Void> released,
                AtomicBoolean commitAfterHang,
                AtomicBoolean hangDescribe,
                CountDownLatch describesAnswer) {
            this(
                    delegate,
                    runtime,
                    fail,
                    broken,
                    hang,
                    released,
                    commitAfterHang,
                    hangDescribe,
                    describesAnswer,
                    new AtomicInteger());
        }

        FailingTransport(
                CoordinationTransport delegate,
                CoordinationRuntime runtime,
                AtomicBoolean fail,
                AtomicBoolean broken,
                AtomicBoolean hang,
                CompletableFuture<Void> released,
                AtomicBoolean commitAfterHang,
                AtomicBoolean hangDescribe,
                CountDownLatch describesAnswer,
                AtomicInteger describeReads) {
            super(delegate);
            this.describeReads = describeReads;
            this.runtime = runtime;
            this.describesAnswer = describesAnswer;
            this.fail = fail;
            this.broken = broken;
            this.hang = hang;
            this.released = released;
            this.commitAfterHang = commitAfterHang;
            this.hangDescribe = hangDescribe;
        }

        // No news: these tests drive every pass on the manual runtime's clock.
        @Override
        public boolean watches() {
            return false;
        }

        @Override
        public AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
            return () -> {};
        }

        /**
         * An unresponsive cluster: returns only when the test lets it (bounded, so a failing
         * test cannot hang shutdown), waiting on the runtime so the simulation goes on.
         */
        private void awaitRelease() {
            try {
                runtime.await(released, Duration.ofMinutes(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public RoleEpoch initEpoch(Role role) {
            RoleEpoch epoch = delegate.initEpoch(role);
            return new RoleEpoch() {
                @Override
                public Role role() {
                    return epoch.role();
                }

                @Override
                public List<RecordMetadata> transact(
                        List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
                    if (hang.get()) {
                        awaitRelease();
                        if (!commitAfterHang.get()) {
                            throw new CoordinationTimeoutException("injected: no answer in time");
                        }
                    }
                    if (fail.get()) {
                        throw new RetriableCoordinationException("injected: the partition's leader moved", null);
                    }
                    if (broken.get()) {
                        throw new CoordinationException("injected: the producer failed and could not abort");
                    }
                    return epoch.transact(records, consumed);
                }

                @Override
                public long featureGeneration() {
                    return epoch.featureGeneration();
                }

                @Override
                public boolean usable() {
                    return !broken.get() && epoch.usable();
                }

                @Override
                public void close() {
                    epoch.close();
                }
            };
        }

        /** The many-role describe: only the endpoint's reads of the cluster make it (contenders ask one role at a time). */
        @Override
        public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
            describeReads.incrementAndGet();
            if (hangDescribe.get()) {
                try {
                    describesAnswer.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.describeEpochs(roles);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
