package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.autoconfigure.CoordinationProperties;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.util.HashSet;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The startup check that {@link LeaderOnly} is only on request handlers
 * ({@link LeaderOnlyPlacement}), in every application that contends, web or not, routing
 * on or off: anywhere else it would silently do nothing.
 */
@AutoConfiguration(after = CoordinationAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "krabka.coordination.enabled", matchIfMissing = true)
@ConditionalOnBean(LeadershipLoop.class)
public final class LeaderOnlyPlacementAutoConfiguration {

    LeaderOnlyPlacementAutoConfiguration() {}

    @Bean
    static LeaderOnlyPlacement leaderOnlyPlacement(CoordinationProperties coordination, Environment environment) {
        return new LeaderOnlyPlacement(new LeaderOnlyHandlers(new HashSet<>(coordination.getRoles()), environment));
    }
}
