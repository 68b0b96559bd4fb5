package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.members.MemberAddressCodec;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The cases every web stack's {@link LeaderOnly} routing passes, on two forwarding Boot
 * members in one JVM (random ports) and a third in redirect mode, against one real KRaft
 * broker: a request sent to any member is handled by the holder only, under its term (the
 * handler writes the term through a {@link GuardedSender}; the test reads the writes
 * back); redirect answers 307 to the holder; a forwarded request is never forwarded again;
 * a forged address record is refused; a holder deposed while its handler waits answers
 * 503; with no holder every member answers 503 with Retry-After and a problem body; a
 * handler for a role that is not configured fails startup. {@link LeaderOnlyRoutingIT}
 * runs them on Spring MVC, {@link LeaderOnlyWebFluxRoutingIT} on WebFlux.
 *
 * <p>A stack's controllers have, for role {@value #ROLE}: {@code POST /commands/{id}}
 * (writes "member@term" for the id to the handled topic with its {@link GuardedSender},
 * and answers "member term body=… auth=… keep-alive=… via=…", the last three its
 * Authorization, Keep-Alive and hop-marker headers) and {@code POST /slow/{id}} (counts
 * {@link #slowEntered} down, waits for {@link #slowProceed}, then writes as
 * {@code /commands} does and answers "written").
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LeaderOnlyRoutingITBase {

    static final String ROLE = "orders";

    /** Counted down when {@code /slow} is entered; a new one for each test class. */
    static volatile CountDownLatch slowEntered;
    /** What {@code /slow} waits for before it writes; a new one for each test class. */
    static volatile CompletableFuture<Void> slowProceed;

    private final String topic = "coordination-" + UUID.randomUUID().toString().substring(0, 8);
    private final String handledTopic =
            "handled-" + UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, ConfigurableApplicationContext> members = new HashMap<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private final WebApplicationType type;
    private final Class<?>[] controllers;
    private KafkaTestCluster cluster;

    /**
     * @param type the stack's web application type
     * @param controllers the member application's controllers (described above)
     */
    LeaderOnlyRoutingITBase(WebApplicationType type, Class<?>... controllers) {
        this.type = type;
        this.controllers = controllers;
    }

    /** Properties of the stack's members besides the shared ones. */
    Map<String, String> stackProperties() {
        return Map.of();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    /** A stack's controllers: {@link #handled} is the topic their handlers write to. */
    abstract static class RoutedCommands {

        @Value("${routing.handled-topic}")
        String handled;
    }

    @RestController
    static class MisconfiguredCommands {

        @LeaderOnly(role = "typo")
        @PostMapping("/bad")
        String handle() {
            return "never";
        }
    }

    @BeforeAll
    void startMembers() {
        slowEntered = new CountDownLatch(1);
        slowProceed = new CompletableFuture<>();
        cluster = KafkaTestCluster.start();
        cluster.createTopic(handledTopic, 1);
        // Two forwarding members (n1 registers first, so it takes the role) and one that redirects.
        for (String member : List.of("n1", "n2")) {
            members.put(member, start(member, "forward", controllers));
        }
        members.put("r3", start("r3", "redirect", controllers));
    }

    @AfterAll
    void stopMembers() {
        members.values().forEach(ConfigurableApplicationContext::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private ConfigurableApplicationContext start(String member, String mode, Class<?>... controllers) {
        Map<String, Object> properties = new LinkedHashMap<>(Map.of(
                "spring.kafka.bootstrap-servers", cluster.bootstrapServers(),
                "server.port", "0",
                "krabka.coordination.member-id", member,
                "krabka.coordination.roles", ROLE,
                "krabka.coordination.advertised-url", "http://127.0.0.1:${local.server.port}",
                "krabka.coordination.routing.mode", mode,
                "management.endpoints.web.exposure.include", "coordination",
                "krabka.coordination.lease.duration", "3s",
                "krabka.coordination.lease.renew-interval", "1s",
                "krabka.coordination.lease.challenge-stagger", "1s"));
        properties.putAll(Map.of(
                "krabka.coordination.topic.replication-factor",
                "1",
                "krabka.coordination.topic.allow-unsafe",
                "true",
                "krabka.coordination.topic.partitions",
                "3",
                "krabka.coordination.topic.name",
                topic,
                "krabka.coordination.routing.grant-wait",
                "300ms",
                // Only @LeaderOnly handlers work for the role: they count as its work.
                "krabka.coordination.require-work",
                "true",
                "routing.handled-topic",
                handledTopic));
        properties.putAll(stackProperties());
        return new SpringApplicationBuilder(MemberApp.class)
                .sources(controllers)
                .web(type)
                .properties(properties)
                .run();
    }

    @Test
    @Order(1)
    void aRequestThroughAnyMemberIsHandledByTheHolderOnlyUnderItsTerm() throws Exception {
        String holder = awaitHolder();
        long term = loop(holder).leadership(Role.of(ROLE)).orElseThrow().term();
        List<String> ids = new ArrayList<>();
        List<String> via = List.of("n1", "n2");
        for (int i = 0; i < 30; i++) {
            String id = "fwd-" + i;
            ids.add(id);
            String sentTo = via.get(i % 2);
            HttpResponse<String> answer = post(
                    sentTo,
                    "/commands/" + id + "?x=" + i,
                    "payload-" + i,
                    Map.of("Authorization", "Bearer token-" + i, "Keep-Alive", "timeout=5"));
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            // The holder saw the caller's Authorization; a forward dropped the hop-by-hop Keep-Alive and marked the
            // hop.
            boolean direct = sentTo.equals(holder);
            assertThat(answer.body())
                    .isEqualTo(holder + " " + term + " body=payload-" + i + " auth=Bearer token-" + i + " keep-alive="
                            + (direct ? "timeout=5" : "null") + " via=" + (direct ? "null" : sentTo));
            assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
            assertThat(answer.headers().firstValue(RoutingHeaders.TERM)).contains(Long.toString(term));
        }
        Map<String, List<String>> written = handled();
        assertThat(written.keySet()).containsAll(ids);
        ids.forEach(id -> assertThat(written.get(id)).as(id).containsExactly(holder + "@" + term));

        // Every member's /actuator/coordination names where the holder answers.
        for (String member : via) {
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(get(member, "/actuator/coordination"))
                            .contains("\"holder\":\"" + holder + "\"")
                            .contains("\"holderUrl\":\"http://127.0.0.1:" + port(holder) + "\""));
        }
    }

    @Test
    @Order(3)
    void aRedirectingMemberAnswers307WithTheHoldersUrlAndTheHolderHandlesIt() throws Exception {
        String holder = awaitHolder();
        assertThat(holder).as("the redirecting member registered last").isNotEqualTo("r3");
        HttpResponse<String> answer = post("r3", "/commands/redirected?x=1", "r", Map.of());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(307);
        String location = answer.headers().firstValue("Location").orElseThrow();
        assertThat(location).isEqualTo("http://127.0.0.1:" + port(holder) + "/commands/redirected?x=1");
        assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
        HttpResponse<String> followed = http.send(
                HttpRequest.newBuilder(URI.create(location))
                        .header("Content-Type", "text/plain")
                        .POST(HttpRequest.BodyPublishers.ofString("r"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(followed.statusCode()).isEqualTo(200);
        assertThat(handled().get("redirected")).hasSize(1).allMatch(v -> v.startsWith(holder + "@"));
    }

    @Test
    @Order(4)
    void aForwardedRequestReachingAMemberThatDoesNotHoldTheRoleIsRefusedNotForwardedAgain() throws Exception {
        String other = forwardingNonHolder();
        HttpResponse<String> answer = post(other, "/commands/hopped", "h", Map.of(RoutingHeaders.FORWARDED_BY, "n9"));
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Content-Type")).contains("application/problem+json");
        assertThat(answer.headers().firstValue("Retry-After")).contains("1");
        assertThat(answer.body()).contains("urn:krabka:routing:not-holder").contains("not forwarded again");
        assertThat(handled()).doesNotContainKey("hopped");
    }

    @Test
    @Order(5)
    void aForgedAddressOutsideTheAllowedTargetsIsRefused() throws Exception {
        String holder = awaitHolder();
        String other = forwardingNonHolder();
        MemberAddresses addresses = members.get(other).getBean(MemberAddresses.class);
        String real = addresses.lookup(MemberId.of(holder)).orElseThrow().url();
        writeAddress(holder, "http://198.51.100.7:8080");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> addresses
                        .lookup(MemberId.of(holder))
                        .map(MemberAddress::url)
                        .filter("http://198.51.100.7:8080"::equals)
                        .isPresent());
        try {
            HttpResponse<String> answer = post(other, "/commands/forged", "f", Map.of());
            assertThat(answer.statusCode()).isEqualTo(502);
            assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
            assertThat(answer.body())
                    .contains("urn:krabka:routing:refused-target")
                    .contains("198.51.100.7")
                    .contains("allowed-targets");
            assertThat(handled()).doesNotContainKey("forged");
        } finally {
            writeAddress(holder, real);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> addresses
                            .lookup(MemberId.of(holder))
                            .map(MemberAddress::url)
                            .filter(real::equals)
                            .isPresent());
        }
    }

    @Test
    @Order(6)
    void aHolderDeposedWhileItsHandlerWaitsHasItsWriteRefusedAndAnswers503() throws Exception {
        String holder = awaitHolder();
        CompletableFuture<HttpResponse<String>> pending = http.sendAsync(
                HttpRequest.newBuilder(uri(holder, "/slow/deposed"))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(slowEntered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(loop(holder).release(Role.of(ROLE))).isTrue();
        slowProceed.complete(null);
        HttpResponse<String> answer = pending.get(30, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Retry-After")).isPresent();
        assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER))
                .as("the answer does not name the deposed holder")
                .isEmpty();
        assertThat(answer.body()).contains("urn:krabka:routing:deposed").contains("send the request again");
        assertThat(handled()).doesNotContainKey("deposed");
        awaitHolder();
    }

    @Test
    @Order(7)
    void withNoHolderEveryMemberAnswers503WithRetryAfterAndAProblem() throws Exception {
        awaitHolder();
        List.of("n1", "n2", "r3").forEach(m -> loop(m).stop());
        try {
            for (String member : List.of("n1", "n2", "r3")) {
                HttpResponse<String> answer = post(member, "/commands/leaderless", "l", Map.of());
                assertThat(answer.statusCode())
                        .as(member + ": " + answer.body())
                        .isEqualTo(503);
                assertThat(answer.headers().firstValue("Retry-After"))
                        .isPresent()
                        .get()
                        .satisfies(
                                seconds -> assertThat(Long.parseLong(seconds)).isPositive());
                assertThat(answer.headers().firstValue("Content-Type")).contains("application/problem+json");
                assertThat(answer.body())
                        .contains("\"status\":503")
                        .contains("urn:krabka:routing:no-holder")
                        .contains("\"role\":\"orders\"");
            }
            assertThat(handled()).doesNotContainKey("leaderless");
        } finally {
            List.of("n1", "n2", "r3").forEach(m -> loop(m).start());
        }
    }

    @Test
    @Order(8)
    void aLeaderOnlyHandlerForARoleThatIsNotConfiguredFailsStartupNamingIt() {
        assertThatThrownBy(() ->
                        start("bad", "forward", MisconfiguredCommands.class).close())
                .hasStackTraceContaining("@LeaderOnly(role = \"typo\")")
                .hasStackTraceContaining("krabka.coordination.roles");
    }

    /** The member that holds the role, once one does. */
    String awaitHolder() {
        await().atMost(Duration.ofSeconds(30)).until(() -> holderNow().isPresent());
        return holderNow().orElseThrow();
    }

    /** A forwarding member that does not hold the role, once one holds it. */
    String forwardingNonHolder() {
        String holder = awaitHolder();
        return List.of("n1", "n2").stream()
                .filter(m -> !m.equals(holder))
                .findFirst()
                .orElseThrow();
    }

    private Optional<String> holderNow() {
        return members.keySet().stream()
                .filter(m -> loop(m).state(Role.of(ROLE)) == MemberRoleState.LEADER)
                .findFirst();
    }

    ConfigurableApplicationContext member(String member) {
        return members.get(member);
    }

    LeadershipLoop loop(String member) {
        return members.get(member).getBean(LeadershipLoop.class);
    }

    String port(String member) {
        return members.get(member).getEnvironment().getProperty("local.server.port");
    }

    URI uri(String member, String path) {
        return URI.create("http://127.0.0.1:" + port(member) + path);
    }

    HttpClient http() {
        return http;
    }

    HttpResponse<String> post(String member, String path, String body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(member, path))
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String get(String member, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(member, path)).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private void writeAddress(String member, String url) throws Exception {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            producer.send(new ProducerRecord<>(
                            MemberAddressCodec.topicFor(topic),
                            MemberAddressCodec.encodeKey(MemberId.of(member)),
                            MemberAddressCodec.encodeValue(
                                    new MemberAddress(MemberId.of(member), url, System.currentTimeMillis()))))
                    .get();
        }
    }

    /** Every committed write of the handled topic: command id to the "member@term" values written for it. */
    Map<String, List<String>> handled() {
        return HandledWrites.byId(cluster, handledTopic);
    }
}
