package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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
import tools.jackson.databind.node.ObjectNode;

/**
 * A member whose cluster is not there (a wrong address, a broker that never started, a
 * broker that stopped), with the real Kafka clients: it says so itself, once per role and
 * then at most once a minute; health and the endpoint answer at once; and it shuts down
 * promptly.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnreachableClusterIT {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    @Test
    void aMemberWithoutAClusterSaysSoAnswersAtOnceAndStopsPromptly(CapturedOutput output) throws Exception {
        int port;
        try (ServerSocket nothing = new ServerSocket(0)) {
            port = nothing.getLocalPort(); // closed again: nothing listens there
        }
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .properties(Map.of(
                        "spring.kafka.bootstrap-servers", "127.0.0.1:" + port,
                        "server.port", "0",
                        "management.endpoints.web.exposure.include", "coordination,health",
                        "management.endpoint.health.show-details", "always",
                        "krabka.coordination.member-id", "n1",
                        "krabka.coordination.roles", "controller,scheduler",
                        "krabka.coordination.operation-timeout", "2s",
                        "krabka.coordination.work-stop-timeout", "1s",
                        // Each failed attempt shows at DEBUG, so the test can count attempts.
                        "logging.level.io.krabka.streams.coordination.client.Contender", "DEBUG"))
                .run();
        try {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
            // From the first second: never up, so a readiness probe fails a mistyped address (503).
            HttpResponse<String> first = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/actuator/health"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(first.statusCode()).isEqualTo(503);
            assertThat(JsonMapper.builder()
                            .build()
                            .readTree(first.body())
                            .get("components")
                            .get("coordination")
                            .get("status")
                            .asString())
                    .isIn("OUT_OF_SERVICE", "DOWN");
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> loop.problem(Role.of("controller")).isPresent()
                            && loop.problem(Role.of("scheduler")).isPresent());
            // Several attempts later, still one WARN per role, naming the servers and the operation.
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> count(output.getOut(), "Member n1 could not contend for role controller") >= 1
                            && count(output.getOut(), "Member n1 could not contend for role scheduler") >= 1);
            String warning = "WARN .* Member n1 could not contend for role controller on topic __coordination_state"
                    + " on bootstrap servers 127.0.0.1:" + port;
            assertThat(output.getOut()).containsPattern(warning);
            await().atMost(Duration.ofSeconds(60))
                    .until(() ->
                            count(output.getOut(), "DEBUG .* Member n1 could not contend for role controller") >= 3);
            assertThat(count(output.getOut(), "WARN .* Member n1 could not contend for role controller"))
                    .isEqualTo(1);

            long start = System.nanoTime();
            HttpResponse<String> health = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/actuator/health"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            JsonNode coordination = JsonMapper.builder()
                    .build()
                    .readTree(health.body())
                    .get("components")
                    .get("coordination");
            assertThat(coordination.get("status").asString()).isEqualTo("DOWN");
            assertThat(coordination
                            .get("details")
                            .get("unreachable")
                            .get("controller")
                            .asString())
                    .contains("in time");

            // At once every time (it took its whole 2 s budget before), until its read of the cluster says why it
            // failed.
            JsonNode report = awaitProblem(http, base + "/actuator/coordination", System.nanoTime());
            assertThat(report.get("clusterView").get("asOf").isNull())
                    .as("no read ever returned")
                    .isTrue();
            JsonNode controller = report.get("roles").get("controller");
            assertThat(controller.get("state").asString()).isEqualTo("standby");
            assertThat(controller.get("problem").asString())
                    .isEqualTo(report.get("clusterView").get("problem").asString());
        } finally {
            long start = System.nanoTime();
            app.close();
            // work-stop-timeout (1 s) plus a few seconds, not an operation timeout per role.
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(7));
        }
    }

    /**
     * A wrong bootstrap address with the default {@code krabka.coordination.probe=fail}:
     * the probe names the address at WARN, on one line, within seconds, while startup
     * still waits for it, with what the member does next. It used to say so only at its
     * timeout (30 s by default), after dozens of Kafka connection warnings. Startup does not
     * fail: a cluster that does not answer never stops it.
     */
    @Test
    void theProbeNamesTheUnreachableBootstrapServersWhileStartupStillWaitsForIt(CapturedOutput output)
            throws Exception {
        int port;
        try (ServerSocket nothing = new ServerSocket(0)) {
            port = nothing.getLocalPort(); // closed again: nothing listens there
        }
        CompletableFuture<ConfigurableApplicationContext> starting =
                CompletableFuture.supplyAsync(() -> new SpringApplicationBuilder(MemberApp.class)
                        .properties(Map.of(
                                "spring.kafka.bootstrap-servers", "127.0.0.1:" + port,
                                "server.port", "0",
                                "krabka.coordination.member-id", "n1",
                                "krabka.coordination.roles", "controller",
                                // The probe waits this long: 7 s after its 3 s warning to see startup still waiting.
                                "krabka.coordination.operation-timeout", "10s",
                                "krabka.coordination.work-stop-timeout", "1s"))
                        .run());
        ConfigurableApplicationContext app = null;
        try {
            String early = "WARN .*StartupFencingProbe.*The fencing probe has had no answer from the cluster at"
                    + " bootstrap servers 127.0.0.1:" + port + " for 3000 ms, and waits for one until its timeout"
                    + " of 10000 ms: check spring.kafka.bootstrap-servers";
            await().atMost(Duration.ofSeconds(60)).until(() -> count(output.getOut(), early) == 1);
            assertThat(starting)
                    .as("startup still waits for the probe when it warns")
                    .isNotDone();
            assertThat(output.getOut())
                    .as("warned before the probe's timeout")
                    .doesNotContain("The fencing probe did not run");
            assertThat(lineMatching(output.getOut(), early))
                    .contains("then this member contends without it and reports the cluster's answers itself");

            app = starting.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(app.isRunning())
                    .as("a cluster that does not answer does not stop startup")
                    .isTrue();
            assertThat(output.getOut())
                    .containsPattern("WARN .* The fencing probe did not run: the fencing probe could not reach the"
                            + " cluster at 127.0.0.1:" + port + ": no answer within 10000 ms");
            assertThat(count(output.getOut(), early)).as("warned once").isEqualTo(1);
        } finally {
            if (app == null) {
                app = starting.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
            app.close();
        }
    }

    private static String lineMatching(String text, String regex) {
        Matcher matcher = Pattern.compile(".*" + regex + ".*").matcher(text);
        assertThat(matcher.find()).as("a line matching %s", regex).isTrue();
        return matcher.group();
    }

    /**
     * A member that read its cluster once, then lost it (the broker stopped): its endpoint
     * answers at once with that view, how old it is, and what the reads since ran into.
     * The endpoint used to wait its whole 2 s budget for the cluster on every call, so a
     * probe with a 2 s timeout saw only timeouts.
     */
    @Test
    void whenTheBrokerStopsTheEndpointAnswersAtOnceWithTheLastViewItsAgeAndTheProblem() throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                    .properties(Map.of(
                            "spring.kafka.bootstrap-servers", cluster.bootstrapServers(),
                            "server.port", "0",
                            "management.endpoints.web.exposure.include", "coordination",
                            "krabka.coordination.member-id", "n1",
                            "krabka.coordination.roles", "controller",
                            "krabka.coordination.topic.replication-factor", "1",
                            "krabka.coordination.topic.allow-unsafe", "true",
                            "krabka.coordination.operation-timeout", "5s",
                            "krabka.coordination.work-stop-timeout", "1s"))
                    .run();
            try {
                HttpClient http = HttpClient.newHttpClient();
                String uri = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port")
                        + "/actuator/coordination";
                LeadershipLoop loop = app.getBean(LeadershipLoop.class);
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> loop.state(Role.of("controller")) == MemberRoleState.LEADER);
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    JsonNode whole = JsonMapper.builder()
                            .build()
                            .readTree(send(http, uri).body());
                    return whole.get("clusterView").get("problem").isNull()
                            && !whole.get("clusterView").get("asOf").isNull()
                            && whole.get("roles")
                                    .get("controller")
                                    .get("current")
                                    .asBoolean();
                });

                cluster.kit().brokers().values().forEach(broker -> broker.shutdown());
                Instant stoppedAt = Instant.now();
                long stopped = System.nanoTime();
                JsonNode report = awaitProblem(http, uri, stopped);
                JsonNode view = report.get("clusterView");
                assertThat(Instant.parse(view.get("asOf").asString()))
                        .as("the view read before the broker stopped")
                        .isBeforeOrEqualTo(stoppedAt);
                assertThat(view.get("ageMillis").asLong())
                        .as("at least the time since the broker stopped")
                        .isGreaterThanOrEqualTo(report.get("askedAfterMillis").asLong());
                JsonNode controller = report.get("roles").get("controller");
                assertThat(controller.get("holder").asString()).isEqualTo("n1");
                assertThat(controller.get("current").asBoolean())
                        .as("unconfirmed without the cluster")
                        .isFalse();
                assertThat(controller.get("problem").asString())
                        .contains(view.get("problem").asString());
                assertThat(controller.get("asOf").asString())
                        .isEqualTo(view.get("asOf").asString());
            } finally {
                app.close();
            }
        }
    }

    /**
     * GETs {@code uri} until the report says why the cluster's view may be out of date, each
     * answer within 1.5 s; the last report, with {@code askedAfterMillis}: how long after
     * {@code sinceNanos} it was asked for.
     */
    private static JsonNode awaitProblem(HttpClient http, String uri, long sinceNanos) {
        AtomicReference<JsonNode> last = new AtomicReference<>();
        AtomicInteger answers = new AtomicInteger();
        AtomicLong slowest = new AtomicLong();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    long start = System.nanoTime();
                    HttpResponse<String> response = send(http, uri);
                    Duration answeredIn = Duration.ofNanos(System.nanoTime() - start);
                    // The old endpoint waited its whole 2 s budget here; the bound leaves room for a busy machine.
                    assertThat(answeredIn).as("answered in").isLessThan(Duration.ofMillis(1_500));
                    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                    answers.incrementAndGet();
                    slowest.accumulateAndGet(answeredIn.toNanos(), Math::max);
                    ObjectNode report =
                            (ObjectNode) JsonMapper.builder().build().readTree(response.body());
                    report.put(
                            "askedAfterMillis",
                            Duration.ofNanos(start - sinceNanos).toMillis());
                    last.set(report);
                    return report.get("clusterView").get("problem").isString();
                });
        assertThat(answers.get()).isPositive();
        System.out.printf(
                "%d answers, the slowest in %.1f ms; the last: %s%n", answers.get(), slowest.get() / 1e6, last.get());
        return last.get();
    }

    private static HttpResponse<String> send(HttpClient http, String uri) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).build(), HttpResponse.BodyHandlers.ofString());
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
