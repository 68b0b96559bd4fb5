package io.krabka.streams.coordination.test;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * What {@link AutoConfigureCoordinationTest} imports: runs before the starter's
 * auto-configuration, whose transport and lease clock then back off.
 */
@AutoConfiguration(before = CoordinationAutoConfiguration.class)
public final class CoordinationTestAutoConfiguration {

    CoordinationTestAutoConfiguration() {
    }

    /** The lease clock: the starter takes the bean of this name. */
    @Bean
    ManualClock coordinationClock() {
        return new ManualClock();
    }

    @Bean
    InMemoryCluster coordinationTestCluster(ManualClock coordinationClock) {
        return new InMemoryCluster(coordinationClock::millis);
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
    CoordinationTestSupport coordinationTestSupport(InMemoryCluster coordinationTestCluster, ManualClock coordinationClock,
            LeadershipLoop leadershipLoop, LeaseConfig leaseConfig, TopicSpec topic, RoleTransitions coordinationTestTransitions) {
        return new CoordinationTestSupport(coordinationTestCluster, coordinationClock, leadershipLoop, leaseConfig, topic,
                coordinationTestTransitions);
    }
}
