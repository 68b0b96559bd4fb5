package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.actuate.CoordinationEndpointWebExtension;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code coordination} actuator endpoint, when actuator is present and the endpoint is exposed. */
@AutoConfiguration(after = CoordinationAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(LeadershipLoop.class)
@ConditionalOnAvailableEndpoint(CoordinationEndpoint.class)
public final class CoordinationEndpointAutoConfiguration {

    CoordinationEndpointAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    CoordinationEndpoint coordinationEndpoint(
            CoordinationClient client,
            LeadershipLoop loop,
            CoordinationProperties properties,
            ObjectProvider<StartupFencingProbe> probe) {
        CoordinationEndpoint endpoint = new CoordinationEndpoint(
                client,
                loop,
                Show.valueOf(properties.getEndpoint().getShowDetails().name()),
                properties.getEndpoint().getRoles(),
                CoordinationSettings.clusterViewMaxAge(properties));
        probe.ifAvailable(endpoint::withProbe);
        return endpoint;
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(CoordinationEndpoint.class)
    @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
    CoordinationEndpointWebExtension coordinationEndpointWebExtension(
            CoordinationEndpoint endpoint, LeadershipLoop loop, CoordinationProperties properties) {
        return new CoordinationEndpointWebExtension(
                endpoint, loop, properties.getEndpoint().isReleaseEnabled());
    }
}
