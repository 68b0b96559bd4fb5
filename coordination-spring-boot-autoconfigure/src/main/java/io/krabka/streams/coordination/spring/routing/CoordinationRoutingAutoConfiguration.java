package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.autoconfigure.CoordinationProperties;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.members.MemberAddressBook;
import io.krabka.streams.coordination.members.MemberAddressCodec;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.time.InstantSource;
import java.util.HashSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Routing of {@link LeaderOnly} requests to the holder of their role, in a web
 * application that contends for roles: the members' advertised addresses and the routes;
 * {@link LeaderOnlyWebMvcAutoConfiguration} adds Spring MVC's part and
 * {@link LeaderOnlyWebFluxAutoConfiguration} WebFlux's. With
 * {@code krabka.coordination.routing.enabled=false} no address is advertised or read and
 * nothing is sent to another member, but {@link LeaderOnly} still holds: the routes are
 * {@link HolderRoutes#local}, so a member that does not hold the role answers 503, and the
 * handlers' roles are still checked at startup.
 */
@AutoConfiguration(after = CoordinationAutoConfiguration.class)
@ConditionalOnClass({CoordinationClient.class, ProducerFactory.class, WebServerInitializedEvent.class})
@ConditionalOnWebApplication
@ConditionalOnBooleanProperty(name = "krabka.coordination.enabled", matchIfMissing = true)
@ConditionalOnBean({LeadershipLoop.class, CoordinationClient.class})
@EnableConfigurationProperties(RoutingProperties.class)
public final class CoordinationRoutingAutoConfiguration {

    static final String ROUTING_ENABLED = "krabka.coordination.routing.enabled";

    CoordinationRoutingAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    LeaderOnlyHandlers leaderOnlyHandlers(CoordinationProperties coordination, Environment environment) {
        return new LeaderOnlyHandlers(new HashSet<>(coordination.getRoles()), environment);
    }

    /**
     * The advertised addresses, on {@code <coordination topic>-members}, with the settings
     * of Spring Kafka's factories (as the coordination transport). Opened only when
     * something routes; not built with routing off, nor where routes are there already
     * (the test kit's).
     */
    @Bean
    @ConditionalOnMissingBean({MemberAddresses.class, HolderRoutes.class})
    @ConditionalOnBooleanProperty(name = ROUTING_ENABLED, matchIfMissing = true)
    @ConditionalOnSingleCandidate(ProducerFactory.class)
    MemberAddresses coordinationMemberAddresses(
            CoordinationProperties coordination,
            MemberId coordinationMemberId,
            Environment environment,
            LeaderOnlyHandlers handlers,
            KafkaAdmin kafkaAdmin,
            ProducerFactory<?, ?> producerFactory,
            ConsumerFactory<?, ?> consumerFactory,
            @Qualifier("coordinationClock") InstantSource coordinationClock) {
        CoordinationProperties.Topic topic = coordination.getTopic();
        return new MemberAddresses(
                coordinationMemberId,
                coordination.getAdvertisedUrl(),
                environment,
                () -> MemberAddressBook.open(
                        kafkaAdmin.getConfigurationProperties(),
                        producerFactory.getConfigurationProperties(),
                        consumerFactory.getConfigurationProperties(),
                        MemberAddressCodec.topicFor(topic.getName()),
                        topic.getReplicationFactor(),
                        topic.isCreate(),
                        coordination.getOperationTimeout()),
                handlers::any,
                coordinationClock);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = ROUTING_ENABLED, matchIfMissing = true)
    @ConditionalOnBean(MemberAddresses.class)
    HolderRoutes holderRoutes(
            LeadershipLoop loop,
            CoordinationClient client,
            MemberAddresses addresses,
            RoutingProperties routing,
            CoordinationProperties coordination,
            Environment environment) {
        return new HolderRoutes(
                loop,
                client,
                addresses,
                new TargetPolicy(ownScheme(coordination, environment), routing.getAllowedTargets()),
                routing.getViewMaxAge(),
                routing.getGrantWait());
    }

    /**
     * Routing on, but no address book (it takes its settings from Spring Kafka's one producer
     * factory, and there are several with none {@code @Primary}, beside a transport of the
     * application's own): requests are not forwarded, yet still refused where this member
     * does not hold the role. Before, no routes were built at all and every member, standbys
     * too, served {@link LeaderOnly} requests.
     */
    @Bean
    @ConditionalOnMissingBean({HolderRoutes.class, MemberAddresses.class})
    @ConditionalOnBooleanProperty(name = ROUTING_ENABLED, matchIfMissing = true)
    HolderRoutes unroutedHolderRoutes(LeadershipLoop loop) {
        return HolderRoutes.local(
                loop,
                "no address book to forward with: the application has several ProducerFactory beans and none"
                        + " @Primary (mark one @Primary to route, or send @LeaderOnly requests to the holder)");
    }

    /**
     * With routing off: a {@link LeaderOnly} request is handled where this member holds the
     * role and answered 503 elsewhere, never forwarded nor redirected, and no address is
     * advertised or read.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = ROUTING_ENABLED, havingValue = false)
    HolderRoutes localHolderRoutes(LeadershipLoop loop) {
        return HolderRoutes.local(
                loop, ROUTING_ENABLED + "=false (send @LeaderOnly requests to the holder, or turn routing on)");
    }

    /** The scheme of this member's advertised url: the only one it routes to. */
    private static String ownScheme(CoordinationProperties coordination, Environment environment) {
        String configured = coordination.getAdvertisedUrl();
        if (configured != null && !configured.isBlank()) {
            // Its port may be ${local.server.port}, unknown yet: only the scheme is read here.
            String trimmed = configured.trim();
            int colon = trimmed.indexOf("://");
            if (colon > 0) {
                return trimmed.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
            }
        }
        boolean ssl = environment.getProperty("server.ssl.enabled", Boolean.class, false)
                || environment.getProperty("server.ssl.bundle") != null;
        return ssl ? "https" : "http";
    }

    /** {@code /actuator/coordination} shows each holder's advertised URL, when actuator is there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    static class EndpointUrls {

        @Bean
        SmartInitializingSingleton coordinationEndpointHolderUrls(
                ObjectProvider<CoordinationEndpoint> endpoint, ObjectProvider<MemberAddresses> addresses) {
            return () -> {
                MemberAddresses found = addresses.getIfAvailable();
                if (found != null) {
                    endpoint.ifAvailable(
                            e -> e.showHolderUrls(member -> found.lookup(member).map(MemberAddress::url)));
                }
            };
        }
    }
}
