package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.spring.GuardedSenders;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Spring WebFlux's part of {@link LeaderOnly}, besides the routing handler adapter: the
 * leadership argument resolver, and, once every singleton exists, the check of every
 * handler method (a role that is not configured, a leadership parameter without
 * {@link LeaderOnly}), so a mistake fails startup instead of the first request.
 */
public final class LeaderOnlyWebFlux implements WebFluxConfigurer, SmartInitializingSingleton {

    private final LeaderOnlyHandlers handlers;
    private final ObjectProvider<GuardedSenders> senders;
    private final ObjectProvider<RequestMappingHandlerMapping> mappings;
    private final OnLeadershipRegistry registry;

    public LeaderOnlyWebFlux(
            LeaderOnlyHandlers handlers,
            ObjectProvider<GuardedSenders> senders,
            ObjectProvider<RequestMappingHandlerMapping> mappings,
            OnLeadershipRegistry registry) {
        this.handlers = handlers;
        this.senders = senders;
        this.mappings = mappings;
        this.registry = registry;
    }

    @Override
    public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
        configurer.addCustomResolver(
                new ReactiveLeadershipArgumentResolver(new LeadershipArguments(handlers, senders)));
    }

    @Override
    public void afterSingletonsInstantiated() {
        mappings.orderedStream()
                .forEach(mapping ->
                        handlers.checkAtStartup(mapping.getHandlerMethods().values(), registry));
    }
}
