package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.actuate.CoordinationHealthIndicator;
import io.krabka.streams.coordination.actuate.CoordinationLeadershipHealth;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.spring.ClusterContact;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code coordination} health contributor is never up before the cluster answered,
 * and names a failure as what it is. In memory, with a transport whose answers a test
 * holds back.
 */
class CoordinationHealthTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    KafkaAutoConfiguration.class,
                    CoordinationAutoConfiguration.class,
                    HealthContributorAutoConfiguration.class,
                    CoordinationHealthAutoConfiguration.class))
            .withPropertyValues("krabka.coordination.member-id=n1", "krabka.coordination.work-stop-timeout=1s");

    /** An in-memory cluster that does not answer until the test lets it, or that refuses the topic. */
    static final class HeldBackTransport implements CoordinationTransport {
        final CountDownLatch answer = new CountDownLatch(1);
        final CoordinationTransport delegate = new InMemoryCluster().transport(TopicSpec.DEFAULTS.withPartitions(3));
        volatile TopicConfigurationException refusal;

        private <T> T afterAnswer(Supplier<T> operation) {
            try {
                if (!answer.await(30, TimeUnit.SECONDS)) {
                    throw new CoordinationTimeoutException("held back");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CoordinationTimeoutException("interrupted while held back");
            }
            if (refusal != null) {
                throw refusal;
            }
            return operation.get();
        }

        @Override
        public String topic() {
            return delegate.topic();
        }

        @Override
        public int partitionCount() {
            return afterAnswer(delegate::partitionCount);
        }

        @Override
        public long register(Role role, MemberId member, long registeredAt) {
            return afterAnswer(() -> delegate.register(role, member, registeredAt));
        }

        @Override
        public void deregister(Role role, MemberId member) {
            afterAnswer(() -> {
                delegate.deregister(role, member);
                return null;
            });
        }

        @Override
        public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            return afterAnswer(() -> delegate.read(role, fromOffset, maxWait));
        }

        @Override
        public RoleEpoch initEpoch(Role role) {
            return afterAnswer(() -> delegate.initEpoch(role));
        }

        @Override
        public Optional<ProducerState> describeEpoch(Role role) {
            return afterAnswer(() -> delegate.describeEpoch(role));
        }

        @Override
        public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
            return afterAnswer(() -> delegate.describeEpochs(roles));
        }

        @Override
        public void close() {
            answer.countDown();
            delegate.close();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HeldBack {
        @Bean(destroyMethod = "close")
        HeldBackTransport coordinationTransport() {
            return new HeldBackTransport();
        }
    }

    private static Health health(org.springframework.context.ApplicationContext context) {
        return context.getBean(CoordinationHealthIndicator.class).health(true);
    }

    @Test
    void beforeTheFirstAnswerItIsOutOfServiceAndUpOnceTheClusterAnswers() {
        runner.withUserConfiguration(HeldBack.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    HeldBackTransport transport = context.getBean(HeldBackTransport.class);
                    try {
                        Health before = health(context);
                        assertThat(before.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                        assertThat((String) before.getDetails().get("waiting"))
                                .startsWith("no answer yet from topic __coordination_state");
                        assertThat(context.getBean(ClusterContact.class).made()).isFalse();

                        transport.answer.countDown();
                        LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                        await().atMost(Duration.ofSeconds(10))
                                .until(() -> loop.state(Role.of("controller")) == MemberRoleState.LEADER);
                        assertThat(health(context).getStatus()).isEqualTo(Status.UP);
                        assertThat(context.getBean(ClusterContact.class).made()).isTrue();
                    } finally {
                        transport.answer.countDown();
                    }
                });
    }

    @Test
    void aTopicTheClusterRefusesIsDownAsMisconfiguredNamingTheProperty() {
        runner.withUserConfiguration(HeldBack.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    HeldBackTransport transport = context.getBean(HeldBackTransport.class);
                    transport.refusal = new TopicConfigurationException(
                            "the cluster cannot create the coordination topic"
                                    + " __coordination_state with replication factor 3. Lower krabka.coordination.topic.replication-factor");
                    transport.answer.countDown();
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> health(context).getStatus().equals(Status.DOWN));
                    Health down = health(context);
                    assertThat(down.getDetails())
                            .containsKey("misconfigured")
                            .doesNotContainKeys("unreachable", "waiting");
                    assertThat(down.getDetails().get("misconfigured").toString())
                            .contains("krabka.coordination.topic.replication-factor");
                });
    }

    @Test
    void withoutRolesItIsUpAndStoppedItIsOutOfService() {
        runner.withUserConfiguration(HeldBack.class).run(context -> {
            assertThat(health(context).getStatus()).isEqualTo(Status.UP);
            context.getBean(HeldBackTransport.class).answer.countDown();
        });
        runner.withUserConfiguration(HeldBack.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    context.getBean(HeldBackTransport.class).answer.countDown();
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> health(context).getStatus().equals(Status.UP));
                    loop.stop();
                    Health stopped = health(context);
                    assertThat(stopped.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat(stopped.getDetails()).containsEntry("contending", false);
                });
    }

    @Test
    void aClientTheApplicationBuiltItselfIsNotWaitedFor() {
        runner.withUserConfiguration(HeldBack.class, OwnClient.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    try {
                        assertThat(context.getBean(ClusterContact.class).tracking())
                                .isFalse();
                        assertThat(health(context).getStatus()).isEqualTo(Status.UP);
                    } finally {
                        context.getBean(HeldBackTransport.class).answer.countDown();
                    }
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean
        CoordinationClient myClient(CoordinationTransport transport) {
            return new CoordinationClient(transport);
        }
    }

    @Test
    void leadershipHealthIsOptInAndSaysUpOnlyWhileThisMemberHoldsTheRole() {
        ApplicationContextRunner roles = runner.withUserConfiguration(HeldBack.class)
                .withPropertyValues("krabka.coordination.roles=controller,scheduler");
        roles.run(context -> {
            assertThat(context).doesNotHaveBean("coordinationLeadershipHealthContributor");
            context.getBean(HeldBackTransport.class).answer.countDown();
        });
        roles.withPropertyValues("management.health.coordination-leadership.enabled=true")
                .run(context -> {
                    CompositeHealthContributor leadership = context.getBean(
                            "coordinationLeadershipHealthContributor", CompositeHealthContributor.class);
                    HealthIndicator controller = (HealthIndicator) leadership.getContributor("controller");
                    assertThat(controller.health().getStatus()).isEqualTo(CoordinationLeadershipHealth.STANDBY);
                    context.getBean(HeldBackTransport.class).answer.countDown();
                    LeadershipLoop loop = context.getBean(LeadershipLoop.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> loop.state(Role.of("controller")) == MemberRoleState.LEADER);
                    assertThat(controller.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(controller.health().getDetails())
                            .containsEntry("state", "leader")
                            .containsKey("term");
                    Object releasedTerm = controller.health().getDetails().get("term");
                    loop.release(Role.of("controller"));
                    // The only member takes the role again right after its release, and its pass may
                    // already have: UP then names a later term, never the released one.
                    Health afterRelease = controller.health();
                    if (afterRelease.getStatus().equals(Status.UP)) {
                        assertThat(afterRelease.getDetails().get("term"))
                                .isNotNull()
                                .isNotEqualTo(releasedTerm);
                    } else {
                        assertThat(afterRelease.getStatus()).isEqualTo(CoordinationLeadershipHealth.STANDBY);
                    }
                    assertThat(leadership.getContributor("scheduler")).isNotNull();
                });
    }

    /** Work that throws at every grant. */
    static class FailingWorker {
        @OnLeadership(role = "controller")
        void lead() {
            throw new IllegalStateException("the device registry is empty");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FailingWork {
        @Bean
        FailingWorker failingWorker() {
            return new FailingWorker();
        }
    }

    /**
     * Issue 41, finding 11: a role whose work fails at every grant is not UP, but a status
     * of its own that readiness does not count (Boot's default order leaves it out).
     */
    @Test
    void workThatFailsAtEveryGrantIsWorkFailingNamingTheFailure() {
        runner.withUserConfiguration(HeldBack.class, FailingWork.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    context.getBean(HeldBackTransport.class).answer.countDown();
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> health(context).getStatus().getCode().equals("WORK_FAILING"));
                    Health failing = health(context);
                    assertThat(failing.getDetails())
                            .containsKey("workFailing")
                            .doesNotContainKeys("failing", "misconfigured");
                    assertThat(failing.getDetails().get("workFailing").toString())
                            .contains("controller")
                            .contains("the device registry is empty");
                });
    }

    /** The recording transport must pass every call on as the delegate would answer it, defaults included. */
    @Test
    void theRecordingTransportOverridesEveryMethodOfTheTransport() throws Exception {
        CoordinationTransport recording = new ClusterContact().track(new HeldBackTransport());
        for (Method method : CoordinationTransport.class.getMethods()) {
            Method implementation = recording.getClass().getMethod(method.getName(), method.getParameterTypes());
            assertThat(implementation.getDeclaringClass())
                    .as(method + " " + Arrays.toString(method.getParameterTypes()))
                    .isEqualTo(recording.getClass());
        }
    }
}
