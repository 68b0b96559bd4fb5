package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@link LeaderOnlyPlacement}: {@link LeaderOnly} anywhere but on a request handler (a
 * {@code @Scheduled} job, a service) fails startup with a {@link LeaderOnlyMisplacedException}
 * naming the bean, the method and what to use instead; in a servlet, a reactive and a
 * non-web application, with routing on or off. On handlers, and on a controller class, it
 * is fine.
 */
class LeaderOnlyPlacementTests {

    private static final AutoConfigurations COORDINATION = AutoConfigurations.of(
            KafkaAutoConfiguration.class,
            CoordinationAutoConfiguration.class,
            CoordinationRoutingAutoConfiguration.class,
            LeaderOnlyWebMvcAutoConfiguration.class,
            LeaderOnlyWebFluxAutoConfiguration.class,
            LeaderOnlyPlacementAutoConfiguration.class);

    private static CoordinationTransport inMemory() {
        return new InMemoryCluster().transport(TopicSpec.DEFAULTS.withPartitions(3));
    }

    /** An address book that is never opened: these contexts have no web server to advertise. */
    @Configuration(proxyBeanMethods = false)
    static class NoAddressBook {
        @Bean
        MemberAddresses coordinationMemberAddresses(MemberId member, Environment environment) {
            return new MemberAddresses(
                    member,
                    null,
                    environment,
                    () -> {
                        throw new AssertionError("no address book here");
                    },
                    () -> false,
                    InstantSource.system());
        }
    }

    private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
            .withConfiguration(COORDINATION)
            .withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
            .withBean(CoordinationTransport.class, LeaderOnlyPlacementTests::inMemory)
            .withPropertyValues("krabka.coordination.roles=controller");

    /** The review's case: "only the leader runs this job", which every member would run. */
    static class Nightly {
        @LeaderOnly(role = "controller")
        @Scheduled(fixedDelay = 100)
        void purge() {}
    }

    @Test
    void onAScheduledJobItFailsStartupNamingTheBeanTheMethodAndOnLeadership() {
        servlet.withBean("nightly", Nightly.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .isInstanceOf(LeaderOnlyMisplacedException.class)
                        .hasMessageContaining("bean 'nightly'")
                        .hasMessageContaining(Nightly.class.getName() + ".purge()")
                        .hasMessageContaining(
                                "@LeaderOnly routes web requests to the holder; on a method that is no request "
                                        + "handler it does nothing: use @OnLeadership for leader-only work")
                        .hasMessageNotContaining("Its role is wrong too"));
    }

    static class Misspelled {
        @LeaderOnly(role = "no-such-role")
        void typo() {}
    }

    @Test
    void anUnconfiguredRoleOnAMethodThatIsNoHandlerIsNamedToo() {
        servlet.withBean("misspelled", Misspelled.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .isInstanceOf(LeaderOnlyMisplacedException.class)
                        .hasMessageContaining(Misspelled.class.getName() + ".typo()")
                        .hasMessageContaining("use @OnLeadership")
                        .hasMessageContaining("Its role is wrong too: @LeaderOnly(role = \"no-such-role\")")
                        .hasMessageContaining("krabka.coordination.roles"));
    }

    @LeaderOnly(role = "controller")
    @Service
    static class LeaderService {
        void work() {}
    }

    @Test
    void onAClassWithNoHandlerItFailsStartupNamingTheClass() {
        servlet.withBean("leaderService", LeaderService.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .isInstanceOf(LeaderOnlyMisplacedException.class)
                        .hasMessageContaining("class " + LeaderService.class.getName() + " (bean 'leaderService')")
                        .hasMessageContaining("use @OnLeadership"));
    }

    @RestController
    @LeaderOnly(role = "controller")
    static class Rollouts {
        @PostMapping("/rollouts")
        String start() {
            return "started";
        }

        @LeaderOnly(role = "controller")
        @PostMapping("/rollouts/stop")
        String stop() {
            return "stopped";
        }
    }

    @Test
    void onHandlersAndOnAControllerClassItIsFine() {
        servlet.withUserConfiguration(Rollouts.class, NoAddressBook.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LeaderOnlyPlacement.class));
    }

    /** A bean of a {@code @Configuration} class (a CGLIB subclass) is checked by its own class. */
    @Configuration
    static class Jobs {
        @LeaderOnly(role = "controller")
        @Bean
        String job() {
            return "job";
        }
    }

    @Test
    void aProxiedBeanIsCheckedByItsUserClass() {
        servlet.withUserConfiguration(Jobs.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .isInstanceOf(LeaderOnlyMisplacedException.class)
                        .hasMessageContaining(Jobs.class.getName() + ".job()")
                        .hasMessageNotContaining("$$"));
    }

    @Test
    void withRoutingOffItFailsStartupToo() {
        servlet.withPropertyValues("krabka.coordination.routing.enabled=false")
                .withBean("nightly", Nightly.class)
                .run(context ->
                        assertThat(context).hasFailed().getFailure().isInstanceOf(LeaderOnlyMisplacedException.class));
    }

    @Test
    void inAnApplicationThatIsNotAWebApplicationItFailsStartupToo() {
        new ApplicationContextRunner()
                .withConfiguration(COORDINATION)
                .withBean(CoordinationTransport.class, LeaderOnlyPlacementTests::inMemory)
                .withPropertyValues("krabka.coordination.roles=controller")
                .withBean("nightly", Nightly.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .isInstanceOf(LeaderOnlyMisplacedException.class)
                        .hasMessageContaining(Nightly.class.getName() + ".purge()"));
    }

    /** A controller in a context that runs no web layer (a test's, say) is still a controller. */
    @Test
    void onAControllerInAnApplicationThatIsNotAWebApplicationItIsFine() {
        new ApplicationContextRunner()
                .withConfiguration(COORDINATION)
                .withBean(CoordinationTransport.class, LeaderOnlyPlacementTests::inMemory)
                .withPropertyValues("krabka.coordination.roles=controller")
                .withUserConfiguration(Rollouts.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LeaderOnlyPlacement.class));
    }

    @RestController
    static class ReactiveRollouts {
        @LeaderOnly(role = "controller")
        @PostMapping("/rollouts")
        Mono<String> start() {
            return Mono.just("started");
        }
    }

    @Test
    void onWebFluxHandlersItIsFineAndElsewhereItFails() {
        ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
                .withConfiguration(COORDINATION)
                .withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class))
                .withBean(CoordinationTransport.class, LeaderOnlyPlacementTests::inMemory)
                .withPropertyValues("krabka.coordination.roles=controller")
                .withUserConfiguration(ReactiveRollouts.class, NoAddressBook.class);
        reactive.run(context -> assertThat(context).hasNotFailed());
        reactive.withBean("nightly", Nightly.class)
                .run(context ->
                        assertThat(context).hasFailed().getFailure().isInstanceOf(LeaderOnlyMisplacedException.class));
    }
}
