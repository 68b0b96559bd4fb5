package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /actuator/coordination} over HTTP, on members of an in-memory cluster: what any
 * client that can reach the port can make the member do.
 */
class CoordinationEndpointHttpTests {

    private static final Role CONTROLLER = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final InMemoryCluster cluster = new InMemoryCluster();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport(InMemoryCluster coordinationTestCluster) {
            return coordinationTestCluster.transport(TOPIC);
        }
    }

    @AfterEach
    void stop() {
        for (int i = apps.size() - 1; i >= 0; i--) {
            apps.get(i).close();
        }
    }

    private ConfigurableApplicationContext start(String member, String... more) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .initializers(context -> context.getBeanFactory().registerSingleton("coordinationTestCluster", cluster))
                .properties("server.port=0", "management.endpoints.web.exposure.include=coordination",
                        "krabka.coordination.member-id=" + member, "krabka.coordination.roles=controller",
                        "krabka.coordination.endpoint.show-details=always")
                .properties(more)
                .run();
        apps.add(app);
        return app;
    }

    private static String base(ConfigurableApplicationContext app) {
        return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + "/actuator/coordination/";
    }

    private static MemberRoleState state(ConfigurableApplicationContext app) {
        return app.getBean(LeadershipLoop.class).state(CONTROLLER);
    }

    private CompletableFuture<HttpResponse<String>> getAsync(ConfigurableApplicationContext app, String role) {
        return http.sendAsync(HttpRequest.newBuilder(URI.create(base(app) + role)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String role) {
        return getAsync(app, role).join();
    }

    private static JsonNode json(HttpResponse<String> response) {
        return JsonMapper.builder().build().readTree(response.body());
    }

    /** Fires every GET at once and waits for all answers. */
    private List<HttpResponse<String>> flood(ConfigurableApplicationContext app, List<String> names) {
        List<CompletableFuture<HttpResponse<String>>> sent = names.stream().map(name -> getAsync(app, name)).toList();
        return sent.stream().map(CompletableFuture::join).toList();
    }

    private static List<String> strangers(String prefix, int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            names.add(prefix + i);
        }
        return names;
    }

    /** The member's own role, described afresh: the holder, current, no problem. */
    private void assertOwnRoleAnswersInFull(ConfigurableApplicationContext app) {
        HttpResponse<String> own = get(app, "controller");
        assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
        JsonNode report = json(own);
        assertThat(report.get("problem").isNull()).as("problem in %s", report).isTrue();
        assertThat(report.get("holder").asString()).isEqualTo("n1");
        assertThat(report.get("current").asBoolean()).as("current in %s", report).isTrue();
    }

    /**
     * While the cluster is slow, a burst of GETs for names nobody uses fills the endpoint's
     * queue and some are refused: once the burst is over, nothing of it is left behind,
     * and the member's own role (asked during the burst too) answers in full again.
     */
    @Test
    void aFloodOfNamesOnASlowClusterLeavesNothingBehind() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        List<String> names = strangers("slow-", 60);
        InMemoryCluster.Fault slow = cluster.latency(InMemoryCluster.Operation.DESCRIBE, Duration.ofSeconds(1));
        try {
            List<CompletableFuture<HttpResponse<String>>> burst = names.stream().map(name -> getAsync(n1, name)).toList();
            // The first answer is a refusal: the queue is full, and stays so for a second.
            Object first = CompletableFuture.anyOf(burst.toArray(CompletableFuture[]::new)).join();
            assertThat(((HttpResponse<?>) first).body().toString()).contains("ask again later");
            // The member's own roles are described apart: never refused for the others' sake.
            HttpResponse<String> ownDuringBurst = get(n1, "controller");
            assertThat(ownDuringBurst.statusCode()).isEqualTo(200);
            assertThat(ownDuringBurst.body()).doesNotContain("ask again later");
            burst.forEach(CompletableFuture::join);
        } finally {
            slow.close();
        }
        assertOwnRoleAnswersInFull(n1);
        assertNothingLeftBehind(n1, names);
    }

    /** The same on a healthy cluster: a few hundred GETs at once, then every answer is whole again. */
    @Test
    void aFloodOfNamesOnAHealthyClusterLeavesNothingBehind() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        List<String> names = new ArrayList<>(strangers("healthy-", 300));
        for (int i = 0; i < 300; i += 15) {
            names.add(i, "controller");
        }
        flood(n1, names);
        assertOwnRoleAnswersInFull(n1);
        assertNothingLeftBehind(n1, names);
    }

    /**
     * Once the describes the flood queued are done, none is kept, the cache is within its
     * bound, and the last name (refused during the flood, as a rule) is described again,
     * not refused from memory.
     */
    private void assertNothingLeftBehind(ConfigurableApplicationContext app, List<String> names) {
        CoordinationEndpoint endpoint = app.getBean(CoordinationEndpoint.class);
        await().atMost(WAIT).until(() -> endpoint.describesUnderway() == 0);
        assertThat(endpoint.cachedOtherRoles()).isLessThanOrEqualTo(CoordinationEndpoint.OTHER_ROLES_CACHED);
        HttpResponse<String> refused = get(app, names.get(names.size() - 1));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(404);
        assertThat(endpoint.describesUnderway()).isZero();
    }

    private HttpResponse<String> post(ConfigurableApplicationContext app, String path, String contentType, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base(app) + path))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString()).join();
    }

    /**
     * A POST a page in the operator's browser could send to a member on 127.0.0.1 without
     * a CORS preflight (a "simple" request: no body, or a text, form or multipart body)
     * moves no role: release and handover take JSON only, which a cross-site page can send
     * only after a preflight that the actuator refuses unless CORS is configured for it.
     */
    @Test
    void rolesMoveOnlyOnAJsonPost() {
        ConfigurableApplicationContext n1 = start("n1", "krabka.coordination.endpoint.release-enabled=true");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = start("n2", "krabka.coordination.endpoint.release-enabled=true");
        await().atMost(WAIT).until(() -> state(n2) == MemberRoleState.STANDBY
                && json(get(n1, "controller")).get("roster").size() == 2);

        List<HttpResponse<String>> simple = List.of(
                post(n1, "controller", null, null),
                post(n1, "controller", "text/plain", "{}"),
                post(n1, "controller", "text/plain;charset=UTF-8", "{\"to\":\"n2\"}"),
                post(n1, "controller", "application/x-www-form-urlencoded", "to=n2"),
                post(n1, "controller", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\nn2\r\n--x--\r\n"),
                post(n1, "controller/n2", null, null),
                post(n1, "controller/n2", "text/plain", ""));
        assertThat(simple).allSatisfy(refused -> assertThat(refused.statusCode()).as(refused.body()).isIn(404, 405, 415));
        assertThat(state(n1)).isEqualTo(MemberRoleState.LEADER);
        assertThat(state(n2)).isEqualTo(MemberRoleState.STANDBY);

        HttpResponse<String> handedOver = post(n1, "controller", "application/json", "{\"to\":\"n2\"}");
        assertThat(handedOver.statusCode()).as(handedOver.body()).isEqualTo(200);
        assertThat(json(handedOver).get("detail").asString()).isEqualTo("handed over to n2");
        await().atMost(WAIT).until(() -> state(n2) == MemberRoleState.LEADER);

        HttpResponse<String> notAStandby = post(n2, "controller", "application/json", "{\"to\":\"nobody\"}");
        assertThat(notAStandby.statusCode()).as(notAStandby.body()).isEqualTo(409);
        // No body at all, as curl -X POST -H 'Content-Type: application/json' sends: a release.
        HttpResponse<String> released = post(n2, "controller", "application/json", null);
        assertThat(released.statusCode()).as(released.body()).isEqualTo(200);
        assertThat(json(released).get("detail").asString()).isEqualTo("released");
        // {} is a release too: answered by the operation (200 or 409, whoever holds the role now), not refused.
        HttpResponse<String> empty = post(n2, "controller", "application/json", "{}");
        assertThat(empty.statusCode()).as(empty.body()).isIn(200, 409);
        assertThat(json(empty).get("role").asString()).isEqualTo("controller");
    }

    /**
     * Lease records with extreme times (anyone who may write to the topic can write one):
     * the endpoint shows each such role as it is, and its own role is unaffected.
     */
    @Test
    void extremeLeaseTimesShowOnTheEndpoint() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        long[][] extremes = {{0, Long.MIN_VALUE}, {0, Long.MAX_VALUE}, {Long.MIN_VALUE, Long.MIN_VALUE},
            {Long.MAX_VALUE, Long.MAX_VALUE}};
        for (int i = 0; i < extremes.length; i++) {
            Role role = Role.of("extreme-" + i);
            CoordinationRecord.Lease lease = new CoordinationRecord.Lease(MemberId.of("forger"), 7, (short) 0, extremes[i][0],
                    extremes[i][1]);
            cluster.produce(new ProducerRecord<>(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions()),
                    CoordinationCodec.encodeKey(CoordinationKey.lease(role)), CoordinationCodec.encodeValue(lease)));
        }
        for (int i = 0; i < extremes.length; i++) {
            HttpResponse<String> answer = get(n1, "extreme-" + i);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            JsonNode report = json(answer);
            assertThat(report.get("holder").asString()).isEqualTo("forger");
            assertThat(report.get("problem").isNull()).as(answer.body()).isTrue();
            assertThat(Instant.parse(report.get("deadline").asString())).isEqualTo(Instant.ofEpochMilli(extremes[i][1]));
            assertThat(Instant.parse(report.get("grantedAt").asString())).isEqualTo(Instant.ofEpochMilli(extremes[i][0]));
        }
        assertOwnRoleAnswersInFull(n1);
    }
}
