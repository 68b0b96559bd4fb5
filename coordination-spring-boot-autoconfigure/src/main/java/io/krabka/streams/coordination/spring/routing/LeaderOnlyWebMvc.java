package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.spring.GuardedSenders;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Spring MVC's part of {@link LeaderOnly}: the routing interceptor and the leadership
 * argument resolver, and, once every singleton exists, the check of every handler method
 * (a role that is not configured, a leadership parameter without {@link LeaderOnly}),
 * so a mistake fails startup instead of the first request.
 */
public final class LeaderOnlyWebMvc implements WebMvcConfigurer, SmartInitializingSingleton {

    private final LeaderOnlyHandlers handlers;
    private final HolderRoutes routes;
    private final RoutingProperties properties;
    private final ObjectProvider<GuardedSenders> senders;
    private final ObjectProvider<RequestMappingHandlerMapping> mappings;
    private final OnLeadershipRegistry registry;
    private final LeaderOnlyRouter router;

    public LeaderOnlyWebMvc(
            LeaderOnlyHandlers handlers,
            HolderRoutes routes,
            RoutingProperties properties,
            ObjectProvider<GuardedSenders> senders,
            ObjectProvider<RequestMappingHandlerMapping> mappings,
            OnLeadershipRegistry registry) {
        this.registry = registry;
        this.handlers = handlers;
        this.routes = routes;
        this.properties = properties;
        this.senders = senders;
        this.mappings = mappings;
        this.router = new LeaderOnlyRouter(routes, properties.getMode());
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(new LeaderOnlyInterceptor(
                handlers,
                router,
                new ServletForwarder(
                        routes.member().value(), properties.getConnectTimeout(), properties.getResponseTimeout())));
    }

    @Override
    public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
        resolvers.add(new LeadershipArgumentResolver(new LeadershipArguments(handlers, senders)));
    }

    @Override
    public void extendHandlerExceptionResolvers(List<HandlerExceptionResolver> resolvers) {
        resolvers.add(0, new DeposedHolderResolver(handlers, router));
    }

    @Override
    public void afterSingletonsInstantiated() {
        mappings.orderedStream()
                .forEach(mapping ->
                        handlers.checkAtStartup(mapping.getHandlerMethods().values(), registry));
    }
}
