package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.actuate.CoordinationHealthIndicator;
import io.krabka.streams.coordination.actuate.CoordinationMetrics;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;

/**
 * The auto-configuration on {@link ApplicationContextRunner}. A user-supplied in-memory
 * transport stands in for Kafka wherever the test is about wiring, not about the broker.
 */
@ExtendWith(OutputCaptureExtension.class)
class CoordinationAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    KafkaAutoConfiguration.class,
                    CoordinationAutoConfiguration.class,
                    CoordinationEndpointAutoConfiguration.class,
                    CoordinationHealthAutoConfiguration.class,
                    CoordinationMetricsAutoConfiguration.class));

    @Configuration(proxyBeanMethods = false)
    static class InMemoryTransport {
        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport() {
            return new InMemoryCluster().transport(TopicSpec.DEFAULTS.withPartitions(3));
        }
    }

    @Test
    void defaultsBuildTheTransportFromSpringKafkaAndMatchTheCore() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context)
                    .hasSingleBean(CoordinationTransport.class)
                    .hasSingleBean(CoordinationClient.class)
                    .hasSingleBean(LeadershipLoop.class);
            assertThat(context.getBean(LeaseConfig.class)).isEqualTo(LeaseConfig.DEFAULTS);
            assertThat(context.getBean(TopicSpec.class)).isEqualTo(TopicSpec.DEFAULTS);
            assertThat(context.getBean(CoordinationTransport.class).topic()).isEqualTo("__coordination_state");
            assertThat(context.getBean(LeadershipLoop.class).roles()).isEmpty();
        });
    }

    @Test
    void backsOffToAUserTransportAndClient() {
        runner.withUserConfiguration(InMemoryTransport.class).run(context -> {
            assertThat(context).hasSingleBean(CoordinationTransport.class);
            assertThat(context.getBean(CoordinationTransport.class).getClass().getSimpleName())
                    .isEqualTo("InMemoryCoordinationTransport");
        });
        runner.withUserConfiguration(InMemoryTransport.class, UserClient.class)
                .run(context ->
                        assertThat(context.getBean(CoordinationClient.class)).isSameAs(context.getBean("myClient")));
    }

    @Configuration(proxyBeanMethods = false)
    static class UserClient {
        @Bean
        CoordinationClient myClient(CoordinationTransport transport) {
            return new CoordinationClient(transport);
        }
    }

    @Test
    void anApplicationClockBeanDoesNotBecomeTheLeaseClock() {
        runner.withUserConfiguration(InMemoryTransport.class, FrozenClock.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(CoordinationClient.class).clock())
                    .isNotSameAs(context.getBean(Clock.class))
                    .isSameAs(context.getBean("coordinationClock"));
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class FrozenClock {
        @Bean
        Clock clock() {
            return Clock.fixed(Instant.parse("2020-01-01T00:00:00Z"), ZoneOffset.UTC);
        }
    }

    @Test
    void severalProducerFactoriesWithAPrimaryOneStillGiveTheKafkaTransport() {
        runner.withUserConfiguration(TwoProducerFactories.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(CoordinationTransport.class);
            assertThat(context.getBean(CoordinationTransport.class).getClass().getSimpleName())
                    .isEqualTo("KafkaCoordinationTransport");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoProducerFactories {
        @Bean
        @Primary
        ProducerFactory<Object, Object> objects() {
            return new DefaultKafkaProducerFactory<>(Map.of("bootstrap.servers", "127.0.0.1:9092"));
        }

        @Bean
        ProducerFactory<String, String> strings() {
            return new DefaultKafkaProducerFactory<>(Map.of("bootstrap.servers", "127.0.0.1:9092"));
        }
    }

    @Test
    void disabledMeansNoCoordinationBeans() {
        runner.withPropertyValues("krabka.coordination.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(CoordinationClient.class)
                        .doesNotHaveBean(LeadershipLoop.class)
                        .doesNotHaveBean(CoordinationTransport.class));
    }

    @Test
    void withoutSpringKafkaOnTheClasspathItBacksOff() {
        runner.withClassLoader(new FilteredClassLoader(ProducerFactory.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(CoordinationClient.class)
                        .doesNotHaveBean(LeadershipLoop.class));
    }

    @Test
    void everyPropertyBinds() {
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues(
                        "krabka.coordination.member-id=n1",
                        "krabka.coordination.roles=controller,scheduler",
                        "krabka.coordination.lease.duration=6s",
                        "krabka.coordination.lease.renew-interval=2s",
                        "krabka.coordination.lease.challenge-stagger=1s",
                        "krabka.coordination.operation-timeout=7s",
                        "krabka.coordination.work-stop-timeout=3s",
                        "krabka.coordination.topic.name=coordination",
                        "krabka.coordination.topic.partitions=7",
                        "krabka.coordination.topic.replication-factor=1",
                        "krabka.coordination.topic.create=false",
                        "krabka.coordination.topic.allow-unsafe=true",
                        "krabka.coordination.endpoint.release-enabled=true",
                        "krabka.coordination.send.max-batch-records=50",
                        "krabka.coordination.send.linger=5ms",
                        "krabka.coordination.send.max-queued-records=500",
                        "krabka.coordination.send.max-block=3s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(LeaseConfig.class))
                            .isEqualTo(new LeaseConfig(
                                    Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofSeconds(1)));
                    assertThat(context.getBean(MemberId.class)).isEqualTo(MemberId.of("n1"));
                    assertThat(context.getBean(LeadershipLoop.class).roles())
                            .containsExactly(Role.of("controller"), Role.of("scheduler"));
                    CoordinationProperties properties = context.getBean(CoordinationProperties.class);
                    assertThat(context.getBean(TopicSpec.class))
                            .isEqualTo(new TopicSpec("coordination", 7, (short) 1, false, true));
                    assertThat(properties.getOperationTimeout()).hasSeconds(7);
                    assertThat(properties.getWorkStopTimeout()).hasSeconds(3);
                    assertThat(properties.getEndpoint().isReleaseEnabled()).isTrue();
                    assertThat(context.getBean(CoordinationClient.class).sendBatching())
                            .isEqualTo(new SendBatching(50, Duration.ofMillis(5), 500, Duration.ofSeconds(3)));
                });
    }

    /** krabka.coordination.probe binds; on a transport that is not Kafka's there is nothing to probe, and it says so. */
    @Test
    void theStartupProbeBindsItsModeAndProbesOnlyKafka() {
        ApplicationContextRunner probing = runner.withConfiguration(
                        AutoConfigurations.of(CoordinationProbeAutoConfiguration.class))
                .withUserConfiguration(InMemoryTransport.class);
        probing.run(context -> {
            assertThat(context).hasNotFailed();
            StartupFencingProbe.Outcome outcome =
                    context.getBean(StartupFencingProbe.class).outcome();
            assertThat(outcome.mode()).isEqualTo("fail");
            assertThat(outcome.report()).isNull();
            assertThat(outcome.problem()).isEqualTo("the coordination transport is not Kafka's: nothing to probe");
        });
        probing.withPropertyValues("krabka.coordination.probe=off")
                .run(context -> assertThat(
                                context.getBean(StartupFencingProbe.class).outcome())
                        .isEqualTo(
                                new StartupFencingProbe.Outcome("off", null, "krabka.coordination.probe=off", null)));
        probing.withPropertyValues("krabka.coordination.probe=warn")
                .run(context -> assertThat(context.getBean(StartupFencingProbe.class)
                                .outcome()
                                .mode())
                        .isEqualTo("warn"));
        probing.withPropertyValues("krabka.coordination.probe=maybe")
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining("maybe"));
    }

    @Test
    void defaultMemberIdIsTheHostNameAndTheServerPortWhenOneIsSet() {
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues("server.port=8081")
                .run(context -> assertThat(context.getBean(MemberId.class).value())
                        .endsWith("-8081")
                        .hasSizeGreaterThan(5));
        runner.withUserConfiguration(InMemoryTransport.class)
                .run(context -> assertThat(context.getBean(MemberId.class).value())
                        .doesNotContain("-8081")
                        .isNotBlank());
    }

    @Test
    void aRandomServerPortGivesEachProcessItsOwnDefaultMemberId() {
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues("server.port=0")
                .run(context -> assertThat(context.getBean(MemberId.class).value())
                        .endsWith("-" + ProcessHandle.current().pid())
                        .doesNotEndWith("-0"));
    }

    @Test
    void aChallengeStaggerLongerThanTheLeaseFailsNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.lease.challenge-stagger",
                "must be at most krabka.coordination.lease.duration",
                "krabka.coordination.lease.duration=3s",
                "krabka.coordination.lease.renew-interval=1s",
                "krabka.coordination.lease.challenge-stagger=20s");
    }

    @Test
    void theDefaultChallengeStaggerIsCutToALeaseShorterThanIt() {
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues(
                        "krabka.coordination.lease.duration=3s", "krabka.coordination.lease.renew-interval=1s")
                .run(context -> assertThat(context.getBean(LeaseConfig.class).challengeStagger())
                        .isEqualTo(Duration.ofSeconds(3)));
    }

    @Test
    void renewIntervalAboveAThirdOfTheDurationFailsNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.lease.renew-interval",
                "must be at most a third of krabka.coordination.lease.duration",
                "krabka.coordination.lease.duration=6s",
                "krabka.coordination.lease.renew-interval=3s");
    }

    @Test
    void nonPositiveDurationsFailNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.lease.duration", "must be positive", "krabka.coordination.lease.duration=0s");
        assertFailsNaming(
                "krabka.coordination.lease.renew-interval",
                "must be positive",
                "krabka.coordination.lease.renew-interval=-1s");
        assertFailsNaming(
                "krabka.coordination.lease.challenge-stagger",
                "must not be negative",
                "krabka.coordination.lease.challenge-stagger=-1s");
    }

    @Test
    void invalidSendBoundsFailNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.send.max-queued-records",
                "must be at least 1",
                "krabka.coordination.send.max-queued-records=0");
        assertFailsNaming(
                "krabka.coordination.send.max-block", "must not be negative", "krabka.coordination.send.max-block=-1s");
    }

    @Test
    void invalidRolesAndMemberIdsFailNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.roles[1]",
                "at most 249 UTF-8 bytes",
                "krabka.coordination.roles[0]=controller",
                "krabka.coordination.roles[1]=" + "r".repeat(250));
        assertFailsNaming(
                "krabka.coordination.roles[1]",
                "names a role twice",
                "krabka.coordination.roles=controller,controller");
        assertFailsNaming(
                "krabka.coordination.member-id", "control character", "krabka.coordination.member-id=n\u00011");
        assertFailsNaming(
                "krabka.coordination.topic.partitions", "must be positive", "krabka.coordination.topic.partitions=0");
        assertFailsNaming(
                "krabka.coordination.roles[0]",
                "invisible format character U+200B",
                "krabka.coordination.roles=control\u200Bler");
    }

    @Test
    void valuesKafkaCannotTakeOrThatQuietlyWeakenDurabilityFailStartupNamingTheProperty() {
        assertFailsNaming(
                "krabka.coordination.topic.replication-factor",
                "krabka.coordination.topic.allow-unsafe=true",
                "krabka.coordination.topic.replication-factor=1");
        assertFailsNaming(
                "krabka.coordination.topic.replication-factor",
                "min.insync.replicas drops to 1",
                "krabka.coordination.topic.replication-factor=2");
        assertFailsNaming(
                "krabka.coordination.lease.duration",
                "transaction.timeout.ms",
                "krabka.coordination.lease.duration=30d",
                "krabka.coordination.lease.renew-interval=1d");
        // Used only by the Kafka transport, so checked where that is built.
        runner.withPropertyValues("krabka.coordination.operation-timeout=25d").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("krabka.coordination.operation-timeout")
                    .hasMessageContaining("an int of milliseconds");
        });
        // One replica is a development choice when stated as one.
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues(
                        "krabka.coordination.topic.replication-factor=1", "krabka.coordination.topic.allow-unsafe=true")
                .run(context -> assertThat(context).hasNotFailed());
    }

    private void assertFailsNaming(String property, String reason, String... properties) {
        runner.withUserConfiguration(InMemoryTransport.class)
                .withPropertyValues(properties)
                .run(context -> {
                    assertThat(context)
                            .as("%s with %s", property, String.join(", ", properties))
                            .hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining(property)
                            .hasMessageContaining(reason);
                });
    }

    @Test
    void endpointOnlyWhenExposed() {
        ApplicationContextRunner actuator = runner.withUserConfiguration(InMemoryTransport.class)
                .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class));
        actuator.run(context -> assertThat(context).doesNotHaveBean(CoordinationEndpoint.class));
        actuator.withPropertyValues("management.endpoints.web.exposure.include=coordination")
                .run(context -> assertThat(context).hasSingleBean(CoordinationEndpoint.class));
        actuator.withPropertyValues(
                        "management.endpoints.web.exposure.include=coordination",
                        "krabka.coordination.endpoint.cluster-view-max-age=-1s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("krabka.coordination.endpoint.cluster-view-max-age")
                            .hasMessageContaining("must not be negative");
                });
    }

    @Test
    void healthIndicatorUnlessDisabled() {
        ApplicationContextRunner health = runner.withUserConfiguration(InMemoryTransport.class)
                .withConfiguration(AutoConfigurations.of(HealthContributorAutoConfiguration.class));
        health.run(context -> assertThat(context).hasSingleBean(CoordinationHealthIndicator.class));
        health.withPropertyValues("management.health.coordination.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CoordinationHealthIndicator.class));
    }

    @Test
    void metricsWhenAMeterRegistryExists() {
        runner.withUserConfiguration(InMemoryTransport.class, Registry.class)
                .withPropertyValues("krabka.coordination.roles=controller", "krabka.coordination.member-id=n1")
                .run(context -> {
                    assertThat(context).hasSingleBean(CoordinationMetrics.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    context.getBean(CoordinationMetrics.class).bindTo(registry);
                    assertThat(registry.find("krabka.coordination.leader")
                                    .tag("role", "controller")
                                    .gauge())
                            .isNotNull();
                    assertThat(registry.find("krabka.coordination.records.suspicious")
                                    .functionCounter())
                            .isNotNull();
                    assertThat(registry.find("krabka.coordination.records.malformed")
                                    .functionCounter()
                                    .count())
                            .isZero();
                });
        runner.withUserConfiguration(InMemoryTransport.class)
                .run(context -> assertThat(context).doesNotHaveBean(CoordinationMetrics.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Test
    void onLeadershipForARoleThatIsNotConfiguredFailsStartup() {
        runner.withUserConfiguration(InMemoryTransport.class, WrongRole.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> assertThat(failure(context))
                        .contains("@OnLeadership(role = \"scheduler\")")
                        .contains("WrongRole")
                        .contains("not configured: add it to krabka.coordination.roles"));
    }

    /**
     * A blank role is not a role name at all: startup fails saying so, with the core's
     * reason, not "add it to krabka.coordination.roles", which only leads to a second
     * failure on the same name.
     */
    @Test
    void onLeadershipWithAnInvalidRoleNameFailsStartupSayingTheNameIsInvalid() {
        runner.withUserConfiguration(InMemoryTransport.class, BlankRole.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> assertThat(failure(context))
                        .contains("@OnLeadership(role = \" \")")
                        .contains("BlankRole")
                        .contains("does not name a valid role (invalid role \" \": must not be empty or blank)")
                        .contains("set role to one of krabka.coordination.roles [controller]")
                        .doesNotContain("not configured"));
    }

    @Test
    void onLeadershipWithAnUnsupportedParameterFailsStartup() {
        runner.withUserConfiguration(InMemoryTransport.class, BadSignature.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context ->
                        assertThat(failure(context)).contains("may take only a Leadership and a GuardedSender"));
    }

    @Test
    void onLeadershipLifecycleBeanThatStartsWithTheContextFailsStartup() {
        runner.withUserConfiguration(InMemoryTransport.class, AutoStarting.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> assertThat(failure(context)).contains("return false from isAutoStartup()"));
    }

    private static String failure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        StringBuilder messages = new StringBuilder();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class WrongRole {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "scheduler")
            void run() {}
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BlankRole {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = " ")
            void run() {}
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadSignature {
        @Bean
        Work work() {
            return new Work();
        }

        static class Work {
            @OnLeadership(role = "controller")
            void run(String notALeadership) {}

            void unrelated(Leadership leadership) {}
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AutoStarting {
        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher();
        }

        @OnLeadership(role = "controller")
        static class Dispatcher implements SmartLifecycle {
            private volatile boolean running;

            @Override
            public void start() {
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
    }

    @Test
    void grantsAndGuardedWritesAreObservedWithTheirRoleAndTerm() {
        runner.withUserConfiguration(InMemoryTransport.class, RecordingObservations.class, WritesOnce.class)
                .withPropertyValues("krabka.coordination.roles=controller")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RecordingObservations recorded = context.getBean(RecordingObservations.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() ->
                                    recorded.named("krabka.coordination.write").isPresent());
                    long term = context.getBean(WritesOnce.class).term;
                    assertThat(recorded.named("krabka.coordination.grant")).hasValueSatisfying(grant -> {
                        assertThat(grant.getLowCardinalityKeyValue("krabka.role")
                                        .getValue())
                                .isEqualTo("controller");
                        assertThat(grant.getHighCardinalityKeyValue("krabka.term")
                                        .getValue())
                                .isEqualTo(Long.toString(term));
                    });
                    assertThat(recorded.named("krabka.coordination.write")).hasValueSatisfying(write -> {
                        assertThat(write.getHighCardinalityKeyValue("krabka.records")
                                        .getValue())
                                .isEqualTo("1");
                        assertThat(write.getHighCardinalityKeyValue("krabka.term")
                                        .getValue())
                                .isEqualTo(Long.toString(term));
                        assertThat(write.getError()).isNull();
                    });
                });
    }

    /** An observation registry that keeps every observation that stopped. */
    @Configuration(proxyBeanMethods = false)
    static class RecordingObservations {
        final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

        @Bean
        ObservationRegistry observationRegistry() {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new ObservationHandler<>() {
                @Override
                public void onStop(Observation.Context context) {
                    stopped.add(context);
                }

                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }
            });
            return registry;
        }

        Optional<Observation.Context> named(String name) {
            return stopped.stream()
                    .filter(context -> context.getName().equals(name))
                    .findFirst();
        }
    }

    @Test
    void theClientRunsOnTheRuntimeBeanAndAUserRuntimeReplacesIt() {
        runner.withUserConfiguration(InMemoryTransport.class).run(context -> {
            assertThat(context).hasSingleBean(CoordinationRuntime.class);
            assertThat(context.getBean(CoordinationClient.class).runtime())
                    .isSameAs(context.getBean(CoordinationRuntime.class));
            assertThat(context.getBean(CoordinationRuntime.class).clock())
                    .isSameAs(context.getBean("coordinationClock"));
        });
        runner.withUserConfiguration(InMemoryTransport.class, UserRuntime.class).run(context -> {
            assertThat(context).hasSingleBean(CoordinationRuntime.class);
            assertThat(context.getBean(CoordinationClient.class).runtime()).isSameAs(context.getBean("myRuntime"));
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserRuntime {
        @Bean(destroyMethod = "close")
        CoordinationRuntime myRuntime() {
            return CoordinationRuntime.builder()
                    .name("my-runtime")
                    .passThreads(2)
                    .build();
        }
    }

    @Test
    void aRoleThatNothingWorksForIsNamedAtStartupAndFailsItWhenWorkIsRequired(CapturedOutput output) {
        runner.withUserConfiguration(InMemoryTransport.class, WritesOnce.class)
                .withPropertyValues(
                        "krabka.coordination.roles=controller,contoller", "krabka.coordination.member-id=n1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output)
                            .contains("contends for role [contoller] of krabka.coordination.roles, but no "
                                    + "@OnLeadership or @LeaderListener works for it");
                    assertThat(output).doesNotContain("role [controller]");
                });
        runner.withUserConfiguration(InMemoryTransport.class, WritesOnce.class)
                .withPropertyValues(
                        "krabka.coordination.roles=controller,contoller",
                        "krabka.coordination.member-id=n1",
                        "krabka.coordination.require-work=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("[contoller]")
                            .hasMessageContaining("krabka.coordination.require-work=true");
                });
    }

    /** Writes one guarded record, then holds the role. */
    @Configuration(proxyBeanMethods = false)
    static class WritesOnce {
        volatile long term = -1;

        @OnLeadership(role = "controller")
        void work(Leadership leadership) throws InterruptedException {
            term = leadership.term();
            leadership.write(new ProducerRecord<>("commands", 0, new byte[0], new byte[0]));
            new CountDownLatch(1).await();
        }
    }
}
