package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.autoconfigure.CoordinationAutoConfiguration;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.support.RestClientAdapter;
import org.springframework.web.service.annotation.HttpExchange;
import org.springframework.web.service.annotation.PostExchange;
import org.springframework.web.service.invoker.HttpServiceProxyFactory;

/**
 * Cases an outside review found in the {@code @LeaderOnly} placement check and in routing:
 * a controller mapped through an {@code @HttpExchange} interface (with and without a web
 * layer) and an HTTP service client of the same interface are no misplaced annotations;
 * an application whose routing has no address book (several producer factories) still
 * refuses {@code @LeaderOnly} requests on a standby.
 */
class LeaderOnlyEdgesTests {

    private final InMemoryCluster cluster = new InMemoryCluster();

    // A. Two ProducerFactory beans (none @Primary) and the app's own CoordinationTransport: the app starts, and
    // @LeaderOnly was not enforced at all (no address book, so no routes, so no interceptor).

    @Configuration(proxyBeanMethods = false)
    static class TwoFactories {
        @Bean
        ProducerFactory<String, String> ordersProducerFactory() {
            return new DefaultKafkaProducerFactory<>(Map.of("bootstrap.servers", "localhost:1"));
        }

        @Bean
        ProducerFactory<String, byte[]> blobsProducerFactory() {
            return new DefaultKafkaProducerFactory<>(Map.of("bootstrap.servers", "localhost:1"));
        }

        @Bean
        KafkaTemplate<String, String> kafkaTemplate(ProducerFactory<String, String> ordersProducerFactory) {
            return new KafkaTemplate<>(ordersProducerFactory);
        }
    }

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

    private WebApplicationContextRunner web() {
        return new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        KafkaAutoConfiguration.class,
                        CoordinationAutoConfiguration.class,
                        CoordinationRoutingAutoConfiguration.class,
                        LeaderOnlyWebMvcAutoConfiguration.class,
                        LeaderOnlyWebFluxAutoConfiguration.class,
                        LeaderOnlyPlacementAutoConfiguration.class,
                        WebMvcAutoConfiguration.class))
                .withBean(CoordinationTransport.class, () -> cluster.transport(TopicSpec.DEFAULTS.withPartitions(3)))
                .withPropertyValues("krabka.coordination.roles=orders");
    }

    @Test
    void twoProducerFactoriesWithOwnTransportStillEnforceLeaderOnly() {
        web().withUserConfiguration(TwoFactories.class, Orders.class)
                .withPropertyValues("krabka.coordination.member-id=n1")
                .run(holder -> {
                    assertThat(holder).hasNotFailed();
                    LeadershipLoop held = holder.getBean(LeadershipLoop.class);
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> held.state(Role.of("orders")) == MemberRoleState.LEADER);
                    web().withUserConfiguration(TwoFactories.class, Orders.class)
                            .withPropertyValues("krabka.coordination.member-id=n2")
                            .run(standby -> {
                                assertThat(standby).hasNotFailed();
                                LeadershipLoop loop = standby.getBean(LeadershipLoop.class);
                                await().atMost(Duration.ofSeconds(20))
                                        .until(() -> loop.state(Role.of("orders")) == MemberRoleState.STANDBY);
                                MockMvc mvc = MockMvcBuilders.webAppContextSetup(standby)
                                        .build();
                                int status = mvc.perform(post("/orders"))
                                        .andReturn()
                                        .getResponse()
                                        .getStatus();
                                assertThat(status).as("the standby's answer").isEqualTo(503);
                                assertThat(standby.getBean(Orders.class).handled)
                                        .as("the standby ran the @LeaderOnly handler itself (status %d)", status)
                                        .hasValue(0);
                            });
                });
    }

    // B. @HttpExchange-mapped controller (Spring 6.1+ server side), @LeaderOnly on the interface.

    @HttpExchange("/api")
    interface CommandApi {
        @LeaderOnly(role = "orders")
        @PostExchange("/command")
        String command();
    }

    @RestController
    static class CommandController implements CommandApi {
        @Override
        public String command() {
            return "done";
        }
    }

    @Test
    void httpExchangeControllerInAContextWithoutWebLayerPassesPlacement() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        KafkaAutoConfiguration.class,
                        CoordinationAutoConfiguration.class,
                        LeaderOnlyPlacementAutoConfiguration.class))
                .withBean(CoordinationTransport.class, () -> cluster.transport(TopicSpec.DEFAULTS.withPartitions(3)))
                .withPropertyValues("krabka.coordination.roles=orders", "krabka.coordination.member-id=n1")
                .withUserConfiguration(CommandController.class)
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void httpExchangeControllerInAWebContextPassesPlacement() {
        web().withUserConfiguration(CommandController.class)
                .withPropertyValues("krabka.coordination.member-id=n1", "krabka.coordination.routing.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Configuration(proxyBeanMethods = false)
    static class Client {
        @Bean
        CommandApi commandClient() {
            return HttpServiceProxyFactory.builderFor(RestClientAdapter.create(RestClient.create("http://peer:8080")))
                    .build()
                    .createClient(CommandApi.class);
        }
    }

    @Test
    void anHttpExchangeClientOfTheSameInterfaceNextToTheControllerPassesPlacement() {
        web().withUserConfiguration(CommandController.class, Client.class)
                .withPropertyValues("krabka.coordination.member-id=n1", "krabka.coordination.routing.enabled=false")
                .run(context -> assertThat(context).hasNotFailed());
    }
}
