package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationClient;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Leadership;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.spring.LeadershipEndCause;
import io.krabka.streams.coordination.spring.LeadershipFencedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.ProducerState;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * The leadership loop inside a real application context, on the in-memory cluster
 * with a manual clock: grants start role-scoped work, a lease that expires without a
 * successful renewal stops it, and a release hands the role back.
 */
class LeadershipLoopTests {

    private static final Role CONTROLLER = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class,
                    EndpointAutoConfiguration.class, CoordinationEndpointAutoConfiguration.class))
            .withUserConfiguration(Member.class)
            .withPropertyValues("krabka.coordination.roles=controller", "krabka.coordination.member-id=n1",
                    "management.endpoints.web.exposure.include=coordination");

    @Configuration(proxyBeanMethods = false)
    static class Member {

        final ManualClock clock = new ManualClock();
        /** Outlives the context, so a test can read the roster after shutdown. */
        final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
        final AtomicBoolean failWrites = new AtomicBoolean();
        final AtomicBoolean breakProducer = new AtomicBoolean();
        final java.util.concurrent.CountDownLatch hangWrites = new java.util.concurrent.CountDownLatch(1);
        final AtomicBoolean hang = new AtomicBoolean();
        final List<Object> events = new CopyOnWriteArrayList<>();
        final AtomicInteger workStarted = new AtomicInteger();
        final AtomicInteger workInterrupted = new AtomicInteger();

        @Bean
        InstantSource coordinationClock() {
            return clock;
        }

        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport() {
            return new FailingTransport(cluster.transport(TOPIC), failWrites,
                    breakProducer, hang, hangWrites);
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
        void on(LeadershipGrantedEvent event) {
            events.add(event);
        }

        @EventListener
        void on(LeadershipFencedEvent event) {
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
            try {
                while (true) {
                    Thread.sleep(10_000);
                }
            } catch (InterruptedException e) {
                member.workInterrupted.incrementAndGet();
            }
        }
    }

    /** A role-scoped lifecycle bean: it must not start with the context, only on grant. */
    @OnLeadership(role = "controller")
    static class Dispatcher implements SmartLifecycle {
        final AtomicInteger starts = new AtomicInteger();
        private volatile boolean running;

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
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 1 && dispatcher.isRunning());
            assertThat(member.events.get(0)).isInstanceOf(LeadershipGrantedEvent.class);

            // Every write now fails transiently; the renewal keeps retrying until the deadline.
            member.failWrites.set(true);
            member.clock.advance(Duration.ofSeconds(10));
            member.clock.advance(Duration.ofSeconds(21));
            await().atMost(Duration.ofSeconds(10)).until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipFencedEvent.class, ended -> {
                assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.EXPIRED);
                assertThat(ended.getMember()).isEqualTo(MemberId.of("n1"));
            });
            assertThat(member.workInterrupted).hasValue(1);
            assertThat(dispatcher.isRunning()).isFalse();

            // The cluster recovers: the member contends again and, alone, takes the role back.
            member.failWrites.set(false);
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 2 && dispatcher.starts.get() == 2);
            LeadershipGrantedEvent first = (LeadershipGrantedEvent) member.events.get(0);
            LeadershipGrantedEvent second = (LeadershipGrantedEvent) member.events.get(2);
            assertThat(second.getToken().supersedes(first.getToken())).isTrue();
        });
    }

    @Test
    void roleScopedWorkStopsAtTheDeadlineEvenWhileARenewalHangs() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Dispatcher dispatcher = context.getBean(Dispatcher.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 1 && dispatcher.isRunning());

            // The next renewal blocks: the role's own thread is stuck inside it.
            member.hang.set(true);
            member.clock.advance(Duration.ofSeconds(10));
            member.clock.advance(Duration.ofSeconds(21));
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workInterrupted.get() == 1 && !dispatcher.isRunning());
            assertThat(member.events).hasSize(1);
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.LEADER);

            // The renewal finally fails: the loop ends the leadership as expired.
            member.hang.set(false);
            member.failWrites.set(true);
            member.hangWrites.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipFencedEvent.class,
                    ended -> assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.EXPIRED));
            assertThat(member.workStarted).hasValue(1);
        });
    }

    @Test
    void whenTheWorksOwnWriteOrCloseEndsTheLeadershipTheLoopSaysWhyAndContendsAgain() {
        runner.run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            Leadership first = breakTheProducerDuringAWriteOfTheWork(member, loop);
            await().atMost(Duration.ofSeconds(10)).until(() -> member.events.size() >= 2);
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipFencedEvent.class,
                    ended -> assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.FAILED));
            assertThat(member.workInterrupted).hasValue(1);

            // Its own lease still stands in the log: like any standby, it takes the role back
            // once that passes its deadline.
            member.breakProducer.set(false);
            member.clock.advance(LeaseConfig.DEFAULTS.duration().plusSeconds(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 2);
            Leadership second = loop.leadership(CONTROLLER).orElseThrow();
            assertThat(second.token().supersedes(first.token())).isTrue();

            // The work gives the role up itself.
            second.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> member.events.size() >= 4);
            assertThat(member.events.get(3)).isInstanceOfSatisfying(LeadershipFencedEvent.class,
                    ended -> assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.RELEASED));
            await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 3);
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
        assertThat(member.events).filteredOn(LeadershipFencedEvent.class::isInstance).first()
                .isInstanceOfSatisfying(LeadershipFencedEvent.class,
                        ended -> assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.FAILED));
        try (CoordinationClient reader = new CoordinationClient(member.cluster.transport(TOPIC),
                LeaseConfig.DEFAULTS, member.clock)) {
            assertThat(reader.roleState(CONTROLLER).entryOf(MemberId.of("n1"))).isEmpty();
        }
    }

    /**
     * Role-scoped work writes and the producer breaks beyond recovery: the write ends the
     * leadership on the work's thread, not on the loop's, and no renewal is due.
     */
    private static Leadership breakTheProducerDuringAWriteOfTheWork(Member member, LeadershipLoop loop) {
        await().atMost(Duration.ofSeconds(10)).until(() -> member.workStarted.get() == 1);
        Leadership held = loop.leadership(CONTROLLER).orElseThrow();
        member.breakProducer.set(true);
        assertThatThrownBy(() -> held.write(new ProducerRecord<>("commands", new byte[1])))
                .isInstanceOf(CoordinationException.class).isNotInstanceOf(FencedException.class);
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        return held;
    }

    @Test
    void theEndpointReleasesAHeldRoleOnlyWhenEnabled() {
        runner.run(context -> {
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            CoordinationEndpoint.ReleaseResult refused = context.getBean(CoordinationEndpoint.class).release("controller");
            assertThat(refused.released()).isFalse();
            assertThat(refused.detail()).contains("krabka.coordination.endpoint.release-enabled=true");
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.LEADER);
        });
        runner.withPropertyValues("krabka.coordination.endpoint.release-enabled=true").run(context -> {
            Member member = context.getBean(Member.class);
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> loop.state(CONTROLLER) == MemberRoleState.LEADER);
            CoordinationEndpoint.ReleaseResult released = context.getBean(CoordinationEndpoint.class).release("controller");
            assertThat(released.released()).isTrue();
            // Published before release() returns; the member, still contending and alone,
            // may already have been granted the role again afterwards.
            assertThat(member.events.get(1)).isInstanceOfSatisfying(LeadershipFencedEvent.class,
                    ended -> assertThat(ended.getCause()).isEqualTo(LeadershipEndCause.RELEASED));
            assertThat(context.getBean(CoordinationEndpoint.class).release("scheduler").detail()).contains("not configured");
        });
    }

    /** The in-memory transport whose transactions fail (transiently, beyond recovery, or by hanging) while a flag is set. */
    static final class FailingTransport implements CoordinationTransport {
        private final CoordinationTransport delegate;
        private final AtomicBoolean fail;
        private final AtomicBoolean broken;
        private final AtomicBoolean hang;
        private final java.util.concurrent.CountDownLatch released;

        FailingTransport(CoordinationTransport delegate, AtomicBoolean fail, AtomicBoolean broken, AtomicBoolean hang,
                java.util.concurrent.CountDownLatch released) {
            this.delegate = delegate;
            this.fail = fail;
            this.broken = broken;
            this.hang = hang;
            this.released = released;
        }

        @Override
        public String topic() {
            return delegate.topic();
        }

        @Override
        public int partitionCount() {
            return delegate.partitionCount();
        }

        @Override
        public long register(Role role, MemberId member, long registeredAt) {
            return delegate.register(role, member, registeredAt);
        }

        @Override
        public void deregister(Role role, MemberId member) {
            delegate.deregister(role, member);
        }

        @Override
        public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            return delegate.read(role, fromOffset, maxWait);
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
                public List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records) {
                    if (hang.get()) {
                        // An unresponsive cluster: the call returns only when the test lets it, then times out.
                        try {
                            // Bounded, so a failing test cannot hang the context's shutdown.
                            released.await(20, java.util.concurrent.TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        throw new io.krabka.streams.coordination.CoordinationTimeoutException("injected: no answer in time");
                    }
                    if (fail.get()) {
                        throw new RetriableCoordinationException("injected: the partition's leader moved", null);
                    }
                    if (broken.get()) {
                        throw new CoordinationException("injected: the producer failed and could not abort");
                    }
                    return epoch.transact(records);
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

        @Override
        public Optional<ProducerState> describeEpoch(Role role) {
            return delegate.describeEpoch(role);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
