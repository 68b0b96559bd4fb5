package io.krabka.streams.coordination.test.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.krabka.streams.coordination.spring.routing.HolderRoutes;
import io.krabka.streams.coordination.spring.routing.LeaderOnly;
import io.krabka.streams.coordination.spring.routing.MemberAddresses;
import io.krabka.streams.coordination.test.AutoConfigureCoordinationTest;
import io.krabka.streams.coordination.test.CoordinationTestSupport;
import java.util.concurrent.atomic.AtomicInteger;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;

/**
 * A {@code @LeaderOnly} controller under {@link AutoConfigureCoordinationTest}, with a
 * bootstrap address nothing listens on: the starter builds no address book (no Kafka
 * client, no wait at startup), the test member handles the request while it holds the role
 * and answers 503 once another member took it ({@link CoordinationTestSupport#fence}).
 */
@SpringBootTest(
        properties = {
            "krabka.coordination.roles=controller",
            "krabka.coordination.member-id=n1",
            "spring.kafka.bootstrap-servers=localhost:1",
            "spring.main.web-application-type=servlet"
        })
@AutoConfigureCoordinationTest
class LeaderOnlyTestKitTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Rollouts.class)
    static class App {}

    @RestController
    static class Rollouts {
        final AtomicInteger started = new AtomicInteger();

        @LeaderOnly(role = "controller")
        @PostMapping("/rollouts/start")
        String start() {
            started.incrementAndGet();
            return "started";
        }
    }

    @Autowired
    CoordinationTestSupport coordination;

    @Autowired
    WebApplicationContext context;

    @Test
    void theTestMemberHandlesWhileItHoldsTheRoleAndRefusesOnceItDoesNotWithNoAddressBook() throws Exception {
        assertThat(context.getBeansOfType(MemberAddresses.class)).isEmpty();
        assertThat(context.getBean(HolderRoutes.class).routes()).isFalse();
        MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
        Rollouts rollouts = context.getBean(Rollouts.class);

        coordination.awaitLeader("controller");
        mvc.perform(post("/rollouts/start"))
                .andExpect(status().isOk())
                .andExpect(header().string("Krabka-Role-Holder", "n1"))
                .andExpect(content().string("started"));
        assertThat(rollouts.started).hasValue(1);

        coordination.fence("controller"); // another member takes the role
        mvc.perform(post("/rollouts/start"))
                .andExpect(status().isServiceUnavailable())
                .andExpect(header().string("Retry-After", "1"))
                .andExpect(content()
                        .string(Matchers.allOf(
                                Matchers.containsString("urn:krabka:routing:no-holder"),
                                Matchers.containsString("@AutoConfigureCoordinationTest"))));
        assertThat(rollouts.started).hasValue(1);
    }
}
