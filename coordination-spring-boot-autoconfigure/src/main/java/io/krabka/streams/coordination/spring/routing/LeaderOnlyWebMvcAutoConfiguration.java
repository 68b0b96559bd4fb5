package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.spring.GuardedSenders;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/** {@link LeaderOnly} on Spring MVC: the interceptor, the argument resolver, the startup check of the handlers. */
@AutoConfiguration(after = CoordinationRoutingAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, WebMvcConfigurer.class})
@ConditionalOnBean(HolderRoutes.class)
public final class LeaderOnlyWebMvcAutoConfiguration {

    LeaderOnlyWebMvcAutoConfiguration() {}

    @Bean
    LeaderOnlyWebMvc leaderOnlyWebMvc(
            LeaderOnlyHandlers handlers,
            HolderRoutes routes,
            RoutingProperties routing,
            ObjectProvider<GuardedSenders> senders,
            ObjectProvider<RequestMappingHandlerMapping> mappings,
            OnLeadershipRegistry onLeadershipRegistry) {
        return new LeaderOnlyWebMvc(handlers, routes, routing, senders, mappings, onLeadershipRegistry);
    }
}
