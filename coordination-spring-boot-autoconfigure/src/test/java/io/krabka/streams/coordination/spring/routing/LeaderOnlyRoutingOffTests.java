package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code krabka.coordination.routing.enabled=false}: no address book and nothing sent to
 * another member, but {@link LeaderOnly} still holds. Two members on one in-memory
 * cluster, asked through {@link MockMvc}: the holder handles the request, the standby
 * answers 503 as when there is no holder, naming routing off, and does not run the
 * handler; a role that is not configured still fails startup.
 */
class LeaderOnlyRoutingOffTests {

    private final InMemoryCluster cluster = new InMemoryCluster();

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    KafkaAutoConfiguration.class,
                    CoordinationAutoConfiguration.class,
                    CoordinationRoutingAutoConfiguration.class,
                    LeaderOnlyWebMvcAutoConfiguration.class,
                    LeaderOnlyWebFluxAutoConfiguration.class,
                    LeaderOnlyPlacementAutoConfiguration.class,
                    WebMvcAutoConfiguration.class))
            .withBean(CoordinationTransport.class, () -> cluster.transport(TopicSpec.DEFAULTS.withPartitions(3)))
            .withPropertyValues("krabka.coordination.roles=orders", "krabka.coordination.routing.enabled=false");

    @RestController
    static class Orders {
        final AtomicInteger handled = new AtomicInteger();

        @LeaderOnly(role = "orders")
        @PostMapping("/orders")
        String order() {
            handled.incrementAndGet();
            return "ordered";
        }
    }

    @Test
    void theHolderHandlesTheStandbyAnswers503NamingRoutingOffAndNoAddressBookIsBuilt() {
        runner.withUserConfiguration(Orders.class)
                .withPropertyValues("krabka.coordination.member-id=n1")
                .run(holder -> {
                    assertThat(holder)
                            .hasNotFailed()
                            .hasSingleBean(HolderRoutes.class)
                            .hasSingleBean(LeaderOnlyWebMvc.class)
                            .doesNotHaveBean(MemberAddresses.class);
                    assertThat(holder.getBean(HolderRoutes.class).routes()).isFalse();
                    LeadershipLoop held = holder.getBean(LeadershipLoop.class);
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> held.state(Role.of("orders")) == MemberRoleState.LEADER);
                    long term = held.leadership(Role.of("orders")).orElseThrow().term();
                    MockMvcBuilders.webAppContextSetup(holder)
                            .build()
                            .perform(post("/orders"))
                            .andExpect(status().isOk())
                            .andExpect(header().string(RoutingHeaders.HOLDER, "n1"))
                            .andExpect(header().string(RoutingHeaders.TERM, Long.toString(term)))
                            .andExpect(content().string("ordered"));
                    assertThat(holder.getBean(Orders.class).handled).hasValue(1);

                    runner.withUserConfiguration(Orders.class)
                            .withPropertyValues("krabka.coordination.member-id=n2")
                            .run(standby -> {
                                assertThat(standby).hasNotFailed().doesNotHaveBean(MemberAddresses.class);
                                LeadershipLoop loop = standby.getBean(LeadershipLoop.class);
                                await().atMost(Duration.ofSeconds(20))
                                        .until(() -> loop.state(Role.of("orders")) == MemberRoleState.STANDBY);
                                MockMvcBuilders.webAppContextSetup(standby)
                                        .build()
                                        .perform(post("/orders"))
                                        .andExpect(status().isServiceUnavailable())
                                        .andExpect(header().string("Retry-After", "1"))
                                        .andExpect(header().doesNotExist(RoutingHeaders.HOLDER))
                                        .andExpect(content().contentType("application/problem+json"))
                                        .andExpect(content()
                                                .string(org.hamcrest.Matchers.allOf(
                                                        org.hamcrest.Matchers.containsString(
                                                                "urn:krabka:routing:no-holder"),
                                                        org.hamcrest.Matchers.containsString("\"role\":\"orders\""),
                                                        org.hamcrest.Matchers.containsString(
                                                                "krabka.coordination.routing.enabled=false"))));
                                assertThat(standby.getBean(Orders.class).handled)
                                        .hasValue(0);
                            });
                });
    }

    @RestController
    static class Misspelled {
        @LeaderOnly(role = "ordrs")
        @PostMapping("/typo")
        String typo() {
            return "never";
        }
    }

    @Test
    void aRoleThatIsNotConfiguredStillFailsStartup() {
        runner.withUserConfiguration(Misspelled.class)
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasMessageContaining("@LeaderOnly(role = \"ordrs\")")
                        .hasMessageContaining(Misspelled.class.getName() + ".typo()")
                        .hasMessageContaining("krabka.coordination.roles"));
    }
}
