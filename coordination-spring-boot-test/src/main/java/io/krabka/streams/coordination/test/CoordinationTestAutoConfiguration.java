package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.routing.HolderRoutes;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ProducerFactory;

/**
 * What {@link AutoConfigureCoordinationTest} imports: runs before the starter's
 * auto-configuration, whose transport, lease clock, pipelines and {@code @LeaderOnly}
 * routes then back off. No Kafka client is built: the pipelines read the in-memory
 * cluster, Spring Kafka's {@link KafkaAdmin} creates the {@link NewTopic} beans there
 * instead of on a broker, and {@code @LeaderOnly} requests are handled or refused by the
 * test member's own leadership, with no address book.
 */
@AutoConfiguration(after = KafkaAutoConfiguration.class, before = CoordinationAutoConfiguration.class)
public final class CoordinationTestAutoConfiguration {

    CoordinationTestAutoConfiguration() {}

    /**
     * The lease clock: the starter takes the bean of this name. It starts at the instant the
     * context starts, to the second, so the deadlines the member logs are today's, and moves
     * only when the test moves it ({@link CoordinationTestSupport#advance}).
     */
    @Bean
    ManualClock coordinationClock() {
        return new ManualClock(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    }

    /**
     * The starter's runtime on the lease clock, whose timers also fire when
     * {@link CoordinationTestSupport#advance} moves the clock past them. An application's
     * own runtime bean (a {@code ManualRuntime}, say) takes its place.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    CoordinationRuntime coordinationRuntime(ManualClock coordinationClock) {
        return new ClockTimersRuntime(
                CoordinationRuntime.builder().clock(coordinationClock).build(), coordinationClock);
    }

    /** The cluster, with the topics of the application's {@link NewTopic} beans. */
    @Bean
    InMemoryCluster coordinationTestCluster(ManualClock coordinationClock, ObjectProvider<NewTopic> topics) {
        InMemoryCluster cluster = new InMemoryCluster(coordinationClock::millis);
        topics.orderedStream()
                .forEach(topic ->
                        cluster.createTopic(topic.name(), topic.numPartitions() > 0 ? topic.numPartitions() : 1));
        return cluster;
    }

    /** Spring Kafka's admin would connect to create the {@link NewTopic} beans: the cluster has them already. */
    @Bean
    static BeanPostProcessor coordinationTestKafkaAdmin() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof KafkaAdmin admin) {
                    admin.setAutoCreate(false);
                }
                return bean;
            }
        };
    }

    /** {@code @LeaderListener} pipelines that read the in-memory cluster, with Spring Kafka's (de)serializers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(ConsumerFactory.class)
    static class PipelineConfiguration {

        @Bean
        @ConditionalOnSingleCandidate(ProducerFactory.class)
        LeaderPipelines leaderPipelines(
                ConsumerFactory<?, ?> consumerFactory,
                ProducerFactory<?, ?> producerFactory,
                CoordinationRuntime coordinationRuntime,
                InMemoryCluster coordinationTestCluster) {
            return new LeaderPipelines(
                    consumerFactory,
                    producerFactory,
                    coordinationRuntime,
                    settings -> coordinationTestCluster.consumer(settings.groupId()));
        }
    }

    /**
     * {@code @LeaderOnly} on the test member: routes that send nothing anywhere, so the
     * starter builds no address book (no Kafka client, no {@code <topic>-members} topic, no
     * wait at startup). The test member handles a {@code @LeaderOnly} request while it
     * holds the role and answers 503 while it does not (after {@link
     * CoordinationTestSupport#fence}, say).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication
    static class RoutingConfiguration {

        @Bean
        @ConditionalOnMissingBean
        HolderRoutes holderRoutes(LeadershipLoop leadershipLoop) {
            return HolderRoutes.local(
                    leadershipLoop, "the test kit's member (@AutoConfigureCoordinationTest) routes to no other member");
        }
    }

    @Bean(destroyMethod = "close")
    CoordinationTransport coordinationTransport(InMemoryCluster coordinationTestCluster, TopicSpec topic) {
        return coordinationTestCluster.transport(topic);
    }

    /** Tells the support's waits when a role changes hands; the loop calls every observer bean. */
    @Bean
    RoleTransitions coordinationTestTransitions() {
        return new RoleTransitions();
    }

    @Bean
    CoordinationTestSupport coordinationTestSupport(
            InMemoryCluster coordinationTestCluster,
            ManualClock coordinationClock,
            LeadershipLoop leadershipLoop,
            LeaseConfig leaseConfig,
            TopicSpec topic,
            RoleTransitions coordinationTestTransitions,
            ObjectProvider<LeaderPipelines> leaderPipelines,
            CoordinationRuntime coordinationRuntime) {
        // Tells the runtime's timers when advance() moved the clock, unless the application chose its own runtime.
        Runnable clockMoved = coordinationRuntime instanceof ClockTimersRuntime timers ? timers::clockMoved : () -> {};
        return new CoordinationTestSupport(
                coordinationTestCluster,
                coordinationClock,
                leadershipLoop,
                leaseConfig,
                topic,
                coordinationTestTransitions,
                leaderPipelines,
                clockMoved);
    }
}
