package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.env.Environment;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import reactor.core.publisher.Mono;

/**
 * {@link LeaderOnlyWebFluxAutoConfiguration} on context runners, with an in-memory
 * cluster: where it applies and where it backs off, the startup check of the handlers,
 * and, through a {@link WebTestClient} bound to the context (no server), what the holder
 * does with a request: it handles it with the leadership's arguments and names itself,
 * and a deposal the handler reports, thrown or emitted, is answered 503.
 */
class LeaderOnlyWebFluxAutoConfigurationTests {

    private static final AutoConfigurations ROUTING = AutoConfigurations.of(
            KafkaAutoConfiguration.class,
            CoordinationAutoConfiguration.class,
            CoordinationRoutingAutoConfiguration.class,
            LeaderOnlyWebMvcAutoConfiguration.class,
            LeaderOnlyWebFluxAutoConfiguration.class);

    private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
            .withConfiguration(ROUTING)
            .withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class))
            .withBean(CoordinationTransport.class, LeaderOnlyWebFluxAutoConfigurationTests::inMemory)
            .withPropertyValues("krabka.coordination.roles=orders", "krabka.coordination.member-id=n1");

    /** A transport of an in-memory cluster of its own, which the context closes. */
    private static CoordinationTransport inMemory() {
        return new InMemoryCluster().transport(TopicSpec.DEFAULTS.withPartitions(3));
    }

    @Test
    void onAReactiveApplicationTheRoutingAdapterComesFirstAndMvcsPartIsNotThere() {
        reactive.run(context -> {
            assertThat(context)
                    .hasNotFailed()
                    .hasSingleBean(LeaderOnlyWebFlux.class)
                    .hasSingleBean(LeaderOnlyHandlerAdapter.class)
                    .doesNotHaveBean(LeaderOnlyWebMvc.class);
            List<HandlerAdapter> adapters =
                    new ArrayList<>(context.getBeansOfType(HandlerAdapter.class).values());
            AnnotationAwareOrderComparator.sort(adapters);
            assertThat(adapters.get(0)).isInstanceOf(LeaderOnlyHandlerAdapter.class);
            assertThat(adapters).anyMatch(RequestMappingHandlerAdapter.class::isInstance);
        });
    }

    @Test
    void onAServletApplicationOnlyMvcsPartIsThere() {
        new WebApplicationContextRunner()
                .withConfiguration(ROUTING)
                .withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
                .withBean(CoordinationTransport.class, LeaderOnlyWebFluxAutoConfigurationTests::inMemory)
                .withPropertyValues("krabka.coordination.roles=orders")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(HolderRoutes.class)
                        .hasSingleBean(LeaderOnlyWebMvc.class)
                        .doesNotHaveBean(LeaderOnlyWebFluxAutoConfiguration.class)
                        .doesNotHaveBean(LeaderOnlyWebFlux.class)
                        .doesNotHaveBean(LeaderOnlyHandlerAdapter.class));
    }

    @Test
    void withoutWebFluxOnTheClasspathItBacksOff() {
        reactive.withClassLoader(new FilteredClassLoader("org.springframework.web.reactive"))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LeaderOnlyWebFluxAutoConfiguration.class)
                        .doesNotHaveBean(LeaderOnlyHandlerAdapter.class)
                        .doesNotHaveBean(LeaderOnlyWebMvc.class));
    }

    /** Routing off: no address book, routes that send nothing anywhere, and the handlers still checked and refused. */
    @Test
    void withRoutingOffTheRoutesAreLocalAndNoAddressBookIsBuilt() {
        reactive.withPropertyValues("krabka.coordination.routing.enabled=false").run(context -> {
            assertThat(context)
                    .hasNotFailed()
                    .doesNotHaveBean(MemberAddresses.class)
                    .hasSingleBean(HolderRoutes.class)
                    .hasSingleBean(LeaderOnlyHandlerAdapter.class)
                    .hasSingleBean(LeaderOnlyWebFlux.class);
            assertThat(context.getBean(HolderRoutes.class).routes()).isFalse();
        });
    }

    @RestController
    static class Misspelled {
        @LeaderOnly(role = "typo")
        @PostMapping("/typo")
        Mono<String> handle() {
            return Mono.just("never");
        }
    }

    @Test
    void aLeaderOnlyHandlerForARoleThatIsNotConfiguredFailsStartupNamingIt() {
        reactive.withUserConfiguration(Misspelled.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasMessageContaining("@LeaderOnly(role = \"typo\")")
                        .hasMessageContaining(Misspelled.class.getName() + ".handle()")
                        .hasMessageContaining("krabka.coordination.roles"));
    }

    @RestController
    static class Unrouted {
        @PostMapping("/unrouted")
        Mono<String> handle(Leadership leadership) {
            return Mono.just("never");
        }
    }

    @Test
    void aLeadershipParameterOnAHandlerWithoutLeaderOnlyFailsStartupNamingIt() {
        reactive.withUserConfiguration(Unrouted.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasMessageContaining(Unrouted.class.getName() + ".handle()")
                        .hasMessageContaining("only a @LeaderOnly handler gets"));
    }

    /** The holder's handlers; its address is never read (it holds the role), nor written. */
    @RestController
    static class HolderCommands {

        @LeaderOnly(role = "orders")
        @PostMapping("/held")
        Mono<String> held(Leadership leadership, GuardedSender<String, String> sender) {
            return Mono.just(leadership.member() + "@" + leadership.term() + " sender="
                    + sender.leadership().term());
        }

        @LeaderOnly(role = "orders")
        @PostMapping("/thrown")
        Mono<String> thrown() {
            throw new FencedException("refused", null, LeadershipEndCause.FENCED);
        }

        @LeaderOnly(role = "orders")
        @PostMapping("/emitted")
        Mono<String> emitted() {
            return Mono.error(new IllegalStateException(
                    "the write failed", new FencedException("refused", null, LeadershipEndCause.FENCED)));
        }

        @PostMapping("/open")
        Mono<String> open() {
            throw new FencedException("refused", null, LeadershipEndCause.FENCED);
        }

        @Bean
        MemberAddresses coordinationMemberAddresses(MemberId member, Environment environment) {
            return new MemberAddresses(
                    member,
                    null,
                    environment,
                    () -> {
                        throw new AssertionError("the holder opens no address book here");
                    },
                    () -> false,
                    InstantSource.system());
        }
    }

    @Test
    void theHolderHandlesWithItsLeadershipAndAnswersADeposalItsHandlerReportsWith503() {
        reactive.withUserConfiguration(HolderCommands.class).run(context -> {
            assertThat(context).hasNotFailed();
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(20)).until(() -> loop.state(Role.of("orders")) == MemberRoleState.LEADER);
            long term = loop.leadership(Role.of("orders")).orElseThrow().term();
            WebTestClient client =
                    WebTestClient.bindToApplicationContext(context).build();

            client.post()
                    .uri("/held")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectHeader()
                    .valueEquals(RoutingHeaders.HOLDER, "n1")
                    .expectHeader()
                    .valueEquals(RoutingHeaders.TERM, Long.toString(term))
                    .expectBody(String.class)
                    .isEqualTo("n1@" + term + " sender=" + term);
            for (String path : List.of("/thrown", "/emitted")) {
                client.post()
                        .uri(path)
                        .exchange()
                        .expectStatus()
                        .isEqualTo(503)
                        .expectHeader()
                        .valueEquals("Retry-After", "1")
                        .expectHeader()
                        .doesNotExist(RoutingHeaders.HOLDER)
                        .expectHeader()
                        .contentType("application/problem+json")
                        .expectBody(String.class)
                        .value(body -> assertThat(body)
                                .as(path)
                                .contains("urn:krabka:routing:deposed")
                                .contains("\"role\":\"orders\"")
                                .contains("FENCED"));
            }
            // A handler without @LeaderOnly is not routing's: its failure is the application's.
            client.post()
                    .uri("/open")
                    .exchange()
                    .expectStatus()
                    .is5xxServerError()
                    .expectHeader()
                    .doesNotExist("Retry-After");
        });
    }
}
