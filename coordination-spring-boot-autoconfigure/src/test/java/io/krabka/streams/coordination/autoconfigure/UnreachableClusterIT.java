package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A member whose cluster is not there (a wrong address, a broker that never started),
 * with the real Kafka clients: it says so itself, once per role and then at most once a
 * minute; health and the endpoint answer at once; and it shuts down promptly.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnreachableClusterIT {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {
    }

    @Test
    void aMemberWithoutAClusterSaysSoAnswersAtOnceAndStopsPromptly(CapturedOutput output) throws Exception {
        int port;
        try (ServerSocket nothing = new ServerSocket(0)) {
            port = nothing.getLocalPort(); // closed again: nothing listens there
        }
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class).properties(Map.of(
                "spring.kafka.bootstrap-servers", "127.0.0.1:" + port,
                "server.port", "0",
                "management.endpoints.web.exposure.include", "coordination,health",
                "management.endpoint.health.show-details", "always",
                "krabka.coordination.member-id", "n1",
                "krabka.coordination.roles", "controller,scheduler",
                "krabka.coordination.operation-timeout", "2s",
                "krabka.coordination.work-stop-timeout", "1s",
                // Each failed attempt shows at DEBUG, so the test can count attempts.
                "logging.level.io.krabka.streams.coordination.client.Contender", "DEBUG")).run();
        try {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
            // From the first second: never up, so a readiness probe fails a mistyped address (503).
            HttpResponse<String> first = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(first.statusCode()).isEqualTo(503);
            assertThat(JsonMapper.builder().build().readTree(first.body()).get("components").get("coordination").get("status")
                    .asString()).isIn("OUT_OF_SERVICE", "DOWN");
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> loop.problem(Role.of("controller")).isPresent()
                    && loop.problem(Role.of("scheduler")).isPresent());
            // Several attempts later, still one WARN per role, naming the servers and the operation.
            await().atMost(Duration.ofSeconds(60)).until(() -> count(output.getOut(), "Member n1 could not contend for role controller") >= 1
                    && count(output.getOut(), "Member n1 could not contend for role scheduler") >= 1);
            String warning = "WARN .* Member n1 could not contend for role controller on topic __coordination_state"
                    + " on bootstrap servers 127.0.0.1:" + port;
            assertThat(output.getOut()).containsPattern(warning);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> count(output.getOut(), "DEBUG .* Member n1 could not contend for role controller") >= 3);
            assertThat(count(output.getOut(), "WARN .* Member n1 could not contend for role controller")).isEqualTo(1);

            long start = System.nanoTime();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            JsonNode coordination = JsonMapper.builder().build().readTree(health.body()).get("components").get("coordination");
            assertThat(coordination.get("status").asString()).isEqualTo("DOWN");
            assertThat(coordination.get("details").get("unreachable").get("controller").asString()).contains("in time");

            start = System.nanoTime();
            HttpResponse<String> report = http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/coordination")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            assertThat(report.statusCode()).isEqualTo(200);
            JsonNode controller = JsonMapper.builder().build().readTree(report.body()).get("roles").get("controller");
            assertThat(controller.get("state").asString()).isEqualTo("standby");
            assertThat(controller.get("problem").asString()).isNotBlank();
        } finally {
            long start = System.nanoTime();
            app.close();
            // work-stop-timeout (1 s) plus a few seconds, not an operation timeout per role.
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(7));
        }
    }

    private static long count(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        long count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }
}
