package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.actuate.ObservationInstrumentation;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.ClusterContact;
import io.krabka.streams.coordination.spring.CompositeCoordinationObserver;
import io.krabka.streams.coordination.spring.CoordinationObserver;
import io.krabka.streams.coordination.spring.GuardedSenders;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.OnLeadershipLifecycleGuard;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Leader election with broker-enforced fencing: builds the transport from Spring
 * Kafka's factories (so {@code spring.kafka.*} connection and security settings apply
 * unchanged), the {@link CoordinationClient}, and the {@link LeadershipLoop} that
 * contends for {@code krabka.coordination.roles}.
 */
@AutoConfiguration(after = KafkaAutoConfiguration.class)
@ConditionalOnClass({CoordinationClient.class, ProducerFactory.class, KafkaAutoConfiguration.class})
@ConditionalOnBooleanProperty(name = "krabka.coordination.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoordinationProperties.class)
public final class CoordinationAutoConfiguration {

    CoordinationAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    LeaseConfig coordinationLeaseConfig(CoordinationProperties properties) {
        return CoordinationSettings.leaseConfig(properties);
    }

    @Bean
    @ConditionalOnMissingBean
    MemberId coordinationMemberId(CoordinationProperties properties, Environment environment) {
        return CoordinationSettings.memberId(properties, environment);
    }

    @Bean
    @ConditionalOnMissingBean
    TopicSpec coordinationTopicSpec(CoordinationProperties properties) {
        return CoordinationSettings.topic(properties);
    }

    /**
     * The lease clock. Looked up by name, not type: an application's own
     * {@code java.time.Clock} bean (a frozen one in a test, say) must not become the clock
     * that leases are written and compared in.
     */
    @Bean
    @ConditionalOnMissingBean(name = "coordinationClock")
    InstantSource coordinationClock() {
        return InstantSource.system();
    }

    /**
     * Time and threads of this application's contenders, leaderships and pipelines, on the
     * lease clock; closed with the context, after the leadership loop stopped. Define a
     * {@link CoordinationRuntime} bean of your own to choose the executors (callbacks and
     * workers may be virtual threads; passes and renewals should not), the way Boot's
     * Kafka module lets you supply a listener's task executor.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    CoordinationRuntime coordinationRuntime(@Qualifier("coordinationClock") InstantSource coordinationClock) {
        return CoordinationRuntime.builder().clock(coordinationClock).build();
    }

    /** Whether the client's transport has had an answer from the cluster yet: health is not up before. */
    @Bean
    @ConditionalOnMissingBean
    ClusterContact coordinationClusterContact() {
        return new ClusterContact();
    }

    @Bean
    @ConditionalOnMissingBean
    CoordinationClient coordinationClient(
            CoordinationTransport transport,
            LeaseConfig leaseConfig,
            CoordinationRuntime coordinationRuntime,
            CoordinationProperties properties,
            ObjectProvider<CoordinationInstrumentation> instrumentation,
            ClusterContact coordinationClusterContact) {
        CoordinationClient client = new CoordinationClient(
                coordinationClusterContact.track(transport),
                leaseConfig,
                coordinationRuntime,
                CoordinationSettings.sendBatching(properties));
        instrumentation.ifAvailable(client::instrument);
        return client.balance(properties.getBalance());
    }

    /** Grants, renewals and guarded writes as Micrometer observations, when an observation registry exists. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    static class ObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean(CoordinationInstrumentation.class)
        @ConditionalOnBean(ObservationRegistry.class)
        CoordinationInstrumentation coordinationObservations(ObservationRegistry registry) {
            return new ObservationInstrumentation(registry);
        }
    }

    /**
     * The Kafka transport, from Spring Kafka's factories: one of each, or a {@code @Primary}
     * one where an application defines several. Where they cannot be told apart, startup
     * fails saying so ({@link AmbiguousKafkaFactoriesException}).
     */
    @Configuration(proxyBeanMethods = false)
    static class KafkaTransportConfiguration {

        /**
         * The transport, from the settings of Spring Kafka's factories. Only their settings
         * are used, never the factories themselves, so a {@code transaction-id-prefix}
         * cannot reach a role producer: its {@code transactional.id} is the role name.
         */
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        CoordinationTransport coordinationTransport(
                CoordinationProperties properties,
                LeaseConfig leaseConfig,
                TopicSpec topic,
                ObjectProvider<ProducerFactory<?, ?>> producerFactories,
                ObjectProvider<ConsumerFactory<?, ?>> consumerFactories,
                ListableBeanFactory beans,
                KafkaAdmin kafkaAdmin) {
            ProducerFactory<?, ?> producerFactory =
                    AmbiguousKafkaFactoriesException.unique(producerFactories, ProducerFactory.class, beans);
            ConsumerFactory<?, ?> consumerFactory =
                    AmbiguousKafkaFactoriesException.unique(consumerFactories, ConsumerFactory.class, beans);
            Duration timeout = CoordinationSettings.operationTimeout(properties);
            return KafkaCoordinationTransport.create(
                    kafkaAdmin.getConfigurationProperties(),
                    producerFactory.getConfigurationProperties(),
                    consumerFactory.getConfigurationProperties(),
                    topic,
                    timeout,
                    leaseConfig.duration());
        }

        /** Typed guarded writes with the serializers of Spring Kafka's producer factory. */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(ProducerFactory.class)
        GuardedSenders guardedSenders(ProducerFactory<?, ?> producerFactory) {
            return GuardedSenders.of(producerFactory);
        }
    }

    /** What needs both of Spring Kafka's factories as beans, where each can be told apart. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(ConsumerFactory.class)
    static class KafkaPipelinesConfiguration {

        /** What {@code @LeaderListener} methods read and write with: Spring Kafka's factories. */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(ProducerFactory.class)
        LeaderPipelines leaderPipelines(
                ConsumerFactory<?, ?> consumerFactory,
                ProducerFactory<?, ?> producerFactory,
                CoordinationRuntime coordinationRuntime) {
            return new LeaderPipelines(consumerFactory, producerFactory, coordinationRuntime);
        }
    }

    /** Static: a post-processor must exist before the beans it inspects. */
    @Bean
    static OnLeadershipRegistry onLeadershipRegistry(
            Environment environment,
            ObjectProvider<LeaderPipelines> pipelines,
            ObjectProvider<GuardedSenders> senders) {
        List<String> roles = Binder.get(environment)
                .bind("krabka.coordination.roles", Bindable.listOf(String.class))
                .orElse(List.of());
        return new OnLeadershipRegistry(roles, environment, pipelines, senders);
    }

    /**
     * Static, as every post-processor: proxies each {@code @OnLeadership} {@code Lifecycle}
     * bean so that only the leadership loop starts it, not the context's {@code start()}.
     */
    @Bean
    static OnLeadershipLifecycleGuard onLeadershipLifecycleGuard() {
        return new OnLeadershipLifecycleGuard();
    }

    @Bean
    @ConditionalOnMissingBean
    LeadershipLoop leadershipLoop(
            CoordinationClient client,
            MemberId coordinationMemberId,
            CoordinationProperties properties,
            OnLeadershipRegistry onLeadershipRegistry,
            ApplicationEventPublisher events,
            ObjectProvider<CoordinationObserver> observers) {
        return new LeadershipLoop(
                client,
                coordinationMemberId,
                CoordinationSettings.roles(properties),
                onLeadershipRegistry,
                events,
                new CompositeCoordinationObserver(observers),
                CoordinationSettings.workStopTimeout(properties),
                properties.isRequireWork());
    }
}
