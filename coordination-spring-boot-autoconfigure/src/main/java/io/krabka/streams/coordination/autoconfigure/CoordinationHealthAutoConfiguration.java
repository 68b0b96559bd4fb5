package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.actuate.CoordinationHealthIndicator;
import io.krabka.streams.coordination.actuate.CoordinationLeadershipHealth;
import io.krabka.streams.coordination.actuate.RoleWorkFailures;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.ClusterContact;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code coordination} health contributor (able to contend, for readiness), and on
 * request {@code coordinationLeadership} (holds the role, for routing), when Spring Boot's
 * health support is present.
 */
@AutoConfiguration(after = CoordinationAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LeadershipLoop.class)
@ConditionalOnEnabledHealthIndicator("coordination")
public final class CoordinationHealthAutoConfiguration {

    CoordinationHealthAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(name = "coordinationHealthIndicator")
    CoordinationHealthIndicator coordinationHealthIndicator(
            CoordinationTransport transport,
            LeadershipLoop loop,
            ObjectProvider<ClusterContact> contact,
            RoleWorkFailures coordinationWorkFailures,
            ObjectProvider<StartupFencingProbe> probe) {
        CoordinationHealthIndicator indicator = new CoordinationHealthIndicator(
                transport, loop, contact.getIfAvailable(ClusterContact::new), coordinationWorkFailures);
        probe.ifAvailable(indicator::withProbe);
        return indicator;
    }

    /** The roles whose work ends FAILED here, from the leadership events, for {@code coordination}'s WORK_FAILING. */
    @Bean
    @ConditionalOnMissingBean
    RoleWorkFailures coordinationWorkFailures(ObjectProvider<CoordinationClient> client) {
        CoordinationClient found = client.getIfUnique();
        return new RoleWorkFailures(found == null ? CoordinationRuntime.shared() : found.runtime());
    }

    /** Whether this member holds each role, for a routing health group; opt-in, never part of readiness. */
    @Bean
    @ConditionalOnBooleanProperty(name = "management.health.coordination-leadership.enabled")
    @ConditionalOnMissingBean(name = "coordinationLeadershipHealthContributor")
    CompositeHealthContributor coordinationLeadershipHealthContributor(LeadershipLoop loop) {
        return CoordinationLeadershipHealth.of(loop);
    }
}
