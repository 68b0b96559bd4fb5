package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ProducerFactory;

/**
 * The fencing probe at startup ({@code krabka.coordination.probe}, {@code fail} by
 * default): on the settings of Spring Kafka's factories, the same the transport is built
 * from, when the transport is Kafka's.
 */
@AutoConfiguration(after = CoordinationAutoConfiguration.class)
@ConditionalOnBean(LeadershipLoop.class)
@ConditionalOnSingleCandidate(ConsumerFactory.class)
public final class CoordinationProbeAutoConfiguration {

    /**
     * How long the live checks that passed in this JVM on the same cluster are reused by
     * the next context's probe: how a cluster fences does not change with the member, and
     * a JVM that starts many contexts (tests) need not fence a scratch id for each.
     */
    static final Duration REUSE_LIVE_CHECKS = Duration.ofMinutes(10);

    CoordinationProbeAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(ProducerFactory.class)
    StartupFencingProbe startupFencingProbe(
            CoordinationProperties properties,
            ObjectProvider<CoordinationTransport> transport,
            LeaseConfig leaseConfig,
            TopicSpec topic,
            ProducerFactory<?, ?> producerFactory,
            ConsumerFactory<?, ?> consumerFactory,
            KafkaAdmin kafkaAdmin) {
        return new StartupFencingProbe(
                properties.getProbe(),
                () -> transport.getIfUnique() instanceof KafkaCoordinationTransport
                        ? FencingProbe.builder(
                                        kafkaAdmin.getConfigurationProperties(),
                                        producerFactory.getConfigurationProperties(),
                                        consumerFactory.getConfigurationProperties())
                                .topic(topic)
                                .timeout(CoordinationSettings.operationTimeout(properties))
                                .leaseDuration(leaseConfig.duration())
                                .roles(properties.getRoles().size())
                                .reuseLiveChecksFor(REUSE_LIVE_CHECKS)
                                .onNoAnswer(
                                        StartupFencingProbe.NO_ANSWER_WARNING_AFTER, StartupFencingProbe::noAnswerYet)
                                .build()
                        : null);
    }
}
