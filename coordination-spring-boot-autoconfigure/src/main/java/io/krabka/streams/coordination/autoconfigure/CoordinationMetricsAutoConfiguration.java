package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.actuate.CoordinationMetrics;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** Micrometer meters for the leadership loop, when a {@link MeterRegistry} exists. */
@AutoConfiguration(
        after = {
            MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class,
            CoordinationAutoConfiguration.class
        })
@ConditionalOnClass({MeterRegistry.class, MetricsAutoConfiguration.class})
@ConditionalOnBean({MeterRegistry.class, LeadershipLoop.class})
public final class CoordinationMetricsAutoConfiguration {

    CoordinationMetricsAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    CoordinationMetrics coordinationMetrics(LeadershipLoop loop, CoordinationClient client) {
        return new CoordinationMetrics(loop, client);
    }
}
