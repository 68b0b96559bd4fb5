package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.probe.FencingProbeException;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.probe.ProbeCheck;
import io.krabka.streams.coordination.probe.ProbeStatus;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.mock.env.MockEnvironment;

/** Startup failures that a setting caused name the property to fix. */
@ExtendWith(OutputCaptureExtension.class)
class CoordinationFailureAnalyzerTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(KafkaAutoConfiguration.class, CoordinationAutoConfiguration.class));

    @Test
    void anUnresolvableBootstrapHostNamesSpringKafkaBootstrapServers() {
        runner.withPropertyValues("spring.kafka.bootstrap-servers=no-such-broker.invalid:9092")
                .run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new CoordinationFailureAnalyzer(new MockEnvironment()
                                    .withProperty("spring.kafka.bootstrap-servers", "no-such-broker.invalid:9092"))
                            .analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription())
                            .contains("'no-such-broker.invalid:9092'")
                            .contains("resolves");
                    assertThat(analysis.getAction()).contains("spring.kafka.bootstrap-servers");
                });
    }

    @Test
    void aMalformedBootstrapAddressNamesSpringKafkaBootstrapServers() {
        runner.withPropertyValues("spring.kafka.bootstrap-servers=broker-without-port")
                .run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new CoordinationFailureAnalyzer(new MockEnvironment()
                                    .withProperty("spring.kafka.bootstrap-servers", "broker-without-port"))
                            .analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription())
                            .contains("'broker-without-port'")
                            .contains("cannot parse");
                    assertThat(analysis.getAction()).contains("spring.kafka.bootstrap-servers");
                });
    }

    @Test
    void twoProducerFactoriesWithNoneMarkedPrimaryAreNamedWithTheFix() {
        GenericApplicationContext beans = new GenericApplicationContext();
        beans.registerBean("stringProducerFactory", ProducerFactory.class, ProducerFactories::unreachable);
        beans.registerBean("bytesProducerFactory", ProducerFactory.class, ProducerFactories::unreachable);
        beans.refresh();

        Throwable failure = catchThrowable(() -> AmbiguousKafkaFactoriesException.unique(
                beans.getBeanProvider(ProducerFactory.class), ProducerFactory.class, beans));
        FailureAnalysis analysis = new CoordinationFailureAnalyzer(new MockEnvironment())
                .analyze(new BeanCreationException("coordinationTransport", "cannot build it", failure));

        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription())
                .contains("ProducerFactory")
                .contains("has 2 (stringProducerFactory, bytesProducerFactory) with none @Primary");
        assertThat(analysis.getAction()).contains("@Primary").contains("CoordinationTransport");
        beans.close();
    }

    @Test
    void aPrimaryProducerFactoryAmongSeveralIsTheOneTheCoordinationUses() {
        GenericApplicationContext beans = new GenericApplicationContext();
        beans.registerBean(
                "stringProducerFactory",
                ProducerFactory.class,
                ProducerFactories::unreachable,
                definition -> definition.setPrimary(true));
        beans.registerBean("bytesProducerFactory", ProducerFactory.class, ProducerFactories::unreachable);
        beans.refresh();

        assertThat(AmbiguousKafkaFactoriesException.unique(
                        beans.getBeanProvider(ProducerFactory.class), ProducerFactory.class, beans))
                .isSameAs(beans.getBean("stringProducerFactory"));
        beans.close();
    }

    @Test
    void noConsumerFactoryIsNamedWithTheFix() {
        GenericApplicationContext beans = new GenericApplicationContext();
        beans.refresh();

        Throwable failure = catchThrowable(() -> AmbiguousKafkaFactoriesException.unique(
                beans.getBeanProvider(ConsumerFactory.class), ConsumerFactory.class, beans));
        FailureAnalysis analysis = new CoordinationFailureAnalyzer(new MockEnvironment()).analyze(failure);

        assertThat(analysis.getDescription()).contains("ConsumerFactory, and the context has none");
        assertThat(analysis.getAction()).contains("KafkaAutoConfiguration");
        beans.close();
    }

    @Test
    void aTopicTheClusterRefusesIsToldByItsMessage() {
        MockEnvironment environment = new MockEnvironment();
        FailureAnalysis analysis = new CoordinationFailureAnalyzer(environment)
                .analyze(
                        new BeanCreationException(
                                "runner",
                                new TopicConfigurationException(
                                        "the cluster cannot create the coordination topic __coordination_state with"
                                                + " replication factor 3 (...). Lower krabka.coordination.topic.replication-factor")));
        assertThat(analysis.getDescription())
                .contains("replication factor 3")
                .contains("krabka.coordination.topic.replication-factor");
        assertThat(analysis.getAction()).contains("krabka.coordination.topic.*");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    /** What the user sees: Boot's failure report with the property, not the stack trace of the Kafka client. */
    @Test
    void aStartingApplicationReportsTheProperty(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(MemberApp.class)
                        .web(WebApplicationType.NONE)
                        .properties(Map.of(
                                "spring.kafka.bootstrap-servers",
                                "no-such-broker.invalid:9092",
                                "krabka.coordination.roles",
                                "controller"))
                        .run()
                        .close())
                .isInstanceOf(BeanCreationException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("The Kafka bootstrap servers 'no-such-broker.invalid:9092' cannot be used")
                .contains("Set spring.kafka.bootstrap-servers");
    }

    @Test
    void otherFailuresAreLeftToOtherAnalyzers() {
        assertThat(new CoordinationFailureAnalyzer(new MockEnvironment()).analyze(new IllegalStateException("x")))
                .isNull();
    }

    @Test
    void registeredWhereBootLooksForFailureAnalyzers() throws Exception {
        Properties factories = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring.factories")) {
            factories.load(in);
        }
        assertThat(factories.getProperty("org.springframework.boot.diagnostics.FailureAnalyzer"))
                .isEqualTo(CoordinationFailureAnalyzer.class.getName());
    }

    /** A probe FAIL is told as each failed check, what it means and its fix; warnings and passes are left out. */
    @Test
    void aFailedFencingProbeNamesEachFailedCheckAndItsFix() {
        FencingReport report = new FencingReport(
                "cluster-1",
                "broker:9092",
                "__coordination_state",
                null,
                null,
                true,
                java.time.Instant.EPOCH,
                12,
                java.util.List.of(
                        new ProbeCheck(
                                "transaction-version", ProbeStatus.PASS, "transaction.version=2", "KIP-890", null),
                        new ProbeCheck(
                                "topic.min-insync-replicas",
                                ProbeStatus.FAIL,
                                "t: effective min.insync.replicas=1",
                                "One broker acknowledges",
                                "set min.insync.replicas=2"),
                        new ProbeCheck("connections", ProbeStatus.WARN, "many", "slow", "spread")));
        FailureAnalysis analysis = new CoordinationFailureAnalyzer(new MockEnvironment())
                .analyze(new IllegalStateException("Failed to start bean", new FencingProbeException(report)));
        assertThat(analysis.getDescription())
                .startsWith("krabka coordination will not contend: the fencing probe of cluster"
                        + " cluster-1 (broker:9092) failed 1 check:")
                .contains("- topic.min-insync-replicas: t: effective min.insync.replicas=1. One broker acknowledges.")
                .doesNotContain("connections")
                .doesNotContain("transaction-version");
        assertThat(analysis.getAction())
                .startsWith("topic.min-insync-replicas: set min.insync.replicas=2.")
                .contains("krabka.coordination.probe=warn");
    }

    /** Producer factories of an application that defines several. */
    private static final class ProducerFactories {

        static ProducerFactory<Object, Object> unreachable() {
            return new DefaultKafkaProducerFactory<>(Map.of(
                    "bootstrap.servers", "127.0.0.1:1",
                    "key.serializer", "org.apache.kafka.common.serialization.StringSerializer",
                    "value.serializer", "org.apache.kafka.common.serialization.StringSerializer"));
        }
    }
}
