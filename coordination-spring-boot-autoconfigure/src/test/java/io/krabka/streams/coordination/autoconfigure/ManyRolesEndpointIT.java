package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One Spring Boot member holding a few hundred roles on a real KRaft broker: its
 * {@code /actuator/coordination} answers at once, and its background read of the cluster
 * describes every one of them within the endpoint's 2 s budget.
 * {@code -Dkrabka.it.endpoint-roles=N} runs it with N roles (100 by default, to keep the default build within its budget).
 */
// A hundred roles on a real broker, about 45 s: run with -Plong (CoordinationEndpointHttpTests keeps the
// endpoint's answer-at-once and single-read rules in the default build).
@Tag("long")
class ManyRolesEndpointIT {

    private static final Logger log = LoggerFactory.getLogger(ManyRolesEndpointIT.class);
    private static final int ROLES = Integer.getInteger("krabka.it.endpoint-roles", 100);
    /** The endpoint answers from what it has, without waiting for the cluster: HTTP and JSON of every role on a busy machine. */
    private static final Duration ANSWERED_WITHIN = Duration.ofSeconds(2);
    /** The endpoint's budget for a read of the cluster. */
    private static final Duration READ_WITHIN = Duration.ofSeconds(2);

    private static KafkaTestCluster cluster;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    @Test
    void theEndpointDescribesEveryHeldRoleWithinItsBudget() throws Exception {
        Map<String, Object> properties = new HashMap<>(Map.of(
                "spring.kafka.bootstrap-servers", cluster.bootstrapServers(),
                "server.port", "0",
                "management.endpoints.web.exposure.include", "coordination",
                "krabka.coordination.member-id", "many",
                "krabka.coordination.topic.name",
                        "coordination-" + UUID.randomUUID().toString().substring(0, 8),
                "krabka.coordination.topic.replication-factor", "1",
                "krabka.coordination.topic.allow-unsafe", "true",
                // Long enough that no lease lapses while the member takes its roles.
                "krabka.coordination.lease.duration", "60s",
                "krabka.coordination.lease.renew-interval", "5s"));
        List<Role> roles = new ArrayList<>();
        for (int i = 0; i < ROLES; i++) {
            properties.put("krabka.coordination.roles[" + i + "]", "many-" + i);
            roles.add(Role.of("many-" + i));
        }
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .properties(properties)
                .run()) {
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            long started = System.nanoTime();
            // Taking roles is slow through the starter today (a few a second on a busy machine).
            Duration taking = Duration.ofMillis(Math.max(Duration.ofMinutes(4).toMillis(), ROLES * 400L));
            await().atMost(taking)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> roles.stream().allMatch(role -> loop.state(role) == MemberRoleState.LEADER));
            log.info("The member holds all {} roles after {} ms", ROLES, (System.nanoTime() - started) / 1_000_000);
            String port = app.getEnvironment().getProperty("local.server.port");
            // The web layer starts on the first request (DispatcherServlet, JSON): not the endpoint's time.
            assertThat(http.send(
                                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
            // A holder's current() is false for the few milliseconds its renewal's commit
            // markers take to land; with hundreds of roles renewing, one read in a few may
            // catch one. Every read must be complete and within the budget (a failed
            // assertion ends the wait at once), and one must show every role current.
            List<Long> took = new ArrayList<>();
            List<Long> reads = new ArrayList<>();
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> {
                        long start = System.nanoTime();
                        HttpResponse<String> response = http.send(
                                HttpRequest.newBuilder(
                                                URI.create("http://127.0.0.1:" + port + "/actuator/coordination"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                        Duration answeredIn = Duration.ofNanos(System.nanoTime() - start);
                        took.add(answeredIn.toMillis());
                        assertThat(response.statusCode()).isEqualTo(200);
                        assertThat(answeredIn).isLessThan(ANSWERED_WITHIN);
                        JsonNode whole = JsonMapper.builder().build().readTree(response.body());
                        JsonNode view = whole.get("clusterView");
                        log.info("The endpoint answered for {} roles in {} ms: {}", ROLES, answeredIn.toMillis(), view);
                        assertThat(view.get("problem").isNull())
                                .as("problem in %s", view)
                                .isTrue();
                        if (view.get("asOf").isNull()) {
                            return false; // the first read is under way
                        }
                        long readMillis = view.get("readMillis").asLong();
                        reads.add(readMillis);
                        assertThat(Duration.ofMillis(readMillis))
                                .as("the read of %s roles", ROLES)
                                .isLessThan(READ_WITHIN);
                        JsonNode reported = whole.get("roles");
                        assertThat(reported.size()).isEqualTo(ROLES);
                        List<String> incomplete = new ArrayList<>();
                        List<String> notCurrent = new ArrayList<>();
                        for (Role role : roles) {
                            JsonNode report = reported.get(role.name());
                            if (!report.get("problem").isNull()
                                    || !"many".equals(report.get("holder").asString(null))
                                    || report.get("token").isNull()) {
                                incomplete.add(role.name() + " " + report);
                            } else if (!report.get("current").asBoolean()) {
                                notCurrent.add(role.name());
                            }
                        }
                        assertThat(incomplete)
                                .as("roles reported without the cluster's view")
                                .isEmpty();
                        if (!notCurrent.isEmpty()) {
                            log.info("Held roles reported not current: {}", notCurrent);
                        }
                        return notCurrent.isEmpty();
                    });
            log.info("Reads of {} roles, ms: {}", ROLES, reads);
            log.info("Endpoint answers for {} roles, ms: {}", ROLES, took);
        }
    }
}
