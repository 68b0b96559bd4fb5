package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.spring.GuardedSenders;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import reactor.core.scheduler.Schedulers;

/**
 * {@link LeaderOnly} on Spring WebFlux: the routing handler adapter, the argument
 * resolver, the startup check of the handlers. The WebFlux twin of
 * {@link LeaderOnlyWebMvcAutoConfiguration}; both route through {@link LeaderOnlyRouter}.
 */
@AutoConfiguration(after = CoordinationRoutingAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({DispatcherHandler.class, WebFluxConfigurer.class, WebClient.class})
@ConditionalOnBean(HolderRoutes.class)
public final class LeaderOnlyWebFluxAutoConfiguration {

    LeaderOnlyWebFluxAutoConfiguration() {}

    @Bean
    LeaderOnlyWebFlux leaderOnlyWebFlux(
            LeaderOnlyHandlers handlers,
            ObjectProvider<GuardedSenders> senders,
            ObjectProvider<RequestMappingHandlerMapping> mappings,
            OnLeadershipRegistry onLeadershipRegistry) {
        return new LeaderOnlyWebFlux(handlers, senders, mappings, onLeadershipRegistry);
    }

    /** A {@link HandlerAdapter} bean: the {@code DispatcherHandler} finds it, first of all adapters. */
    @Bean
    LeaderOnlyHandlerAdapter leaderOnlyHandlerAdapter(
            LeaderOnlyHandlers handlers,
            HolderRoutes routes,
            RoutingProperties routing,
            ObjectProvider<HandlerAdapter> adapters) {
        return new LeaderOnlyHandlerAdapter(
                handlers,
                new LeaderOnlyRouter(routes, routing.getMode()),
                new ReactiveForwarder(
                        routes.member().value(), routing.getConnectTimeout(), routing.getResponseTimeout()),
                adapters,
                Schedulers.boundedElastic());
    }
}
