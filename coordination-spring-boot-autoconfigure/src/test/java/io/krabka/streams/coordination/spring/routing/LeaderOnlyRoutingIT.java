package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@link LeaderOnly} on two Spring MVC members in one JVM (random ports) and a third in
 * redirect mode, against one real KRaft broker: a request sent to any member is
 * handled by the holder only, under its term (the handler writes the term through a
 * {@link GuardedSender}; the test reads the writes back); redirect answers 307 to the
 * holder; a forwarded request is never forwarded again; with no holder every member
 * answers 503 with Retry-After and a problem body; a forged address record is refused.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LeaderOnlyRoutingIT {

    private static final String ROLE = "orders";
    private static final String HANDLED = "handled-" + UUID.randomUUID().toString().substring(0, 8);
    private static final String TOPIC = "coordination-" + UUID.randomUUID().toString().substring(0, 8);

    private static KafkaTestCluster cluster;
    private static final Map<String, ConfigurableApplicationContext> members = new HashMap<>();
    private static final HttpClient http = HttpClient.newHttpClient();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Commands.class, SlowCommands.class})
    static class MemberApp {
    }

    @RestController
    static class Commands {

        /** Writes who handled the command, under which term, through the leadership's guarded writes. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/commands/{id}")
        String handle(@PathVariable String id, @RequestBody String body, GuardedSender<String, String> sender,
                Leadership leadership, @RequestHeader(value = "Authorization", required = false) String authorization,
                @RequestHeader(value = "Keep-Alive", required = false) String keepAlive,
                @RequestHeader(value = RoutingHeaders.FORWARDED_BY, required = false) String forwardedBy) {
            sender.send(HANDLED, id, leadership.member() + "@" + leadership.term());
            return leadership.member() + " " + leadership.term() + " body=" + body + " auth=" + authorization
                    + " keep-alive=" + keepAlive + " via=" + forwardedBy;
        }
    }

    static final CountDownLatch SLOW_ENTERED = new CountDownLatch(1);
    static final CountDownLatch SLOW_PROCEED = new CountDownLatch(1);

    @RestController
    static class SlowCommands {

        /** Waits for the test before it writes: the test deposes the holder meanwhile. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/slow/{id}")
        String handle(@PathVariable String id, GuardedSender<String, String> sender, Leadership leadership)
                throws InterruptedException {
            SLOW_ENTERED.countDown();
            SLOW_PROCEED.await();
            sender.send(HANDLED, id, leadership.member() + "@" + leadership.term());
            return "written";
        }
    }

    @RestController
    static class BadCommands {

        @LeaderOnly(role = "typo")
        @PostMapping("/bad")
        String handle() {
            return "never";
        }
    }

    @BeforeAll
    static void start() {
        cluster = KafkaTestCluster.start();
        cluster.createTopic(HANDLED, 1);
        // Two forwarding members (n1 registers first, so it takes the role) and one that redirects.
        for (String member : List.of("n1", "n2")) {
            members.put(member, start(member, "forward", MemberApp.class));
        }
        members.put("r3", start("r3", "redirect", MemberApp.class));
    }

    @AfterAll
    static void stop() {
        members.values().forEach(ConfigurableApplicationContext::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private static ConfigurableApplicationContext start(String member, String mode, Class<?> app) {
        return new SpringApplicationBuilder(app).properties(Map.of(
                "spring.kafka.bootstrap-servers", cluster.bootstrapServers(),
                "server.port", "0",
                "krabka.coordination.member-id", member,
                "krabka.coordination.roles", ROLE,
                "krabka.coordination.advertised-url", "http://127.0.0.1:${local.server.port}",
                "krabka.coordination.routing.mode", mode,
                "management.endpoints.web.exposure.include", "coordination",
                "krabka.coordination.lease.duration", "3s",
                "krabka.coordination.lease.renew-interval", "1s",
                "krabka.coordination.lease.challenge-stagger", "1s"))
                .properties("krabka.coordination.topic.replication-factor=1", "krabka.coordination.topic.allow-unsafe=true",
                        "krabka.coordination.topic.partitions=3", "krabka.coordination.topic.name=" + TOPIC,
                        "krabka.coordination.routing.grant-wait=300ms",
                        // Only @LeaderOnly handlers work for the role: they count as its work.
                        "krabka.coordination.require-work=true")
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
            HttpResponse<String> answer = post(sentTo, "/commands/" + id + "?x=" + i, "payload-" + i,
                    Map.of("Authorization", "Bearer token-" + i, "Keep-Alive", "timeout=5"));
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            // The holder saw the caller's Authorization; a forward dropped the hop-by-hop Keep-Alive and marked the hop.
            boolean direct = sentTo.equals(holder);
            assertThat(answer.body()).isEqualTo(holder + " " + term + " body=payload-" + i + " auth=Bearer token-" + i
                    + " keep-alive=" + (direct ? "timeout=5" : "null") + " via=" + (direct ? "null" : sentTo));
            assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
            assertThat(answer.headers().firstValue(RoutingHeaders.TERM)).contains(Long.toString(term));
        }
        Map<String, List<String>> written = handled();
        assertThat(written.keySet()).containsAll(ids);
        ids.forEach(id -> assertThat(written.get(id)).as(id).containsExactly(holder + "@" + term));

        // Every member's /actuator/coordination names where the holder answers.
        for (String member : via) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(get(member, "/actuator/coordination"))
                    .contains("\"holder\":\"" + holder + "\"")
                    .contains("\"holderUrl\":\"http://127.0.0.1:" + port(holder) + "\""));
        }
    }

    @Test
    @Order(2)
    void aRedirectingMemberAnswers307WithTheHoldersUrlAndTheHolderHandlesIt() throws Exception {
        String holder = awaitHolder();
        assertThat(holder).as("the redirecting member registered last").isNotEqualTo("r3");
        HttpResponse<String> answer = post("r3", "/commands/redirected?x=1", "r", Map.of());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(307);
        String location = answer.headers().firstValue("Location").orElseThrow();
        assertThat(location).isEqualTo("http://127.0.0.1:" + port(holder) + "/commands/redirected?x=1");
        assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
        HttpResponse<String> followed = http.send(HttpRequest.newBuilder(URI.create(location))
                .POST(HttpRequest.BodyPublishers.ofString("r")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(followed.statusCode()).isEqualTo(200);
        assertThat(handled().get("redirected")).hasSize(1).allMatch(v -> v.startsWith(holder + "@"));
    }

    @Test
    @Order(3)
    void aForwardedRequestReachingAMemberThatDoesNotHoldTheRoleIsRefusedNotForwardedAgain() throws Exception {
        String holder = awaitHolder();
        String other = List.of("n1", "n2").stream().filter(m -> !m.equals(holder)).findFirst().orElseThrow();
        HttpResponse<String> answer = post(other, "/commands/hopped", "h", Map.of(RoutingHeaders.FORWARDED_BY, "n9"));
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Content-Type")).contains("application/problem+json");
        assertThat(answer.headers().firstValue("Retry-After")).isPresent();
        assertThat(answer.body()).contains("urn:krabka:routing:not-holder").contains("not forwarded again");
        assertThat(handled()).doesNotContainKey("hopped");
    }

    @Test
    @Order(4)
    void aForgedAddressOutsideTheAllowedTargetsIsRefused() throws Exception {
        String holder = awaitHolder();
        String other = List.of("n1", "n2").stream().filter(m -> !m.equals(holder)).findFirst().orElseThrow();
        MemberAddresses addresses = members.get(other).getBean(MemberAddresses.class);
        String real = addresses.lookup(MemberId.of(holder)).orElseThrow().url();
        writeAddress(holder, "http://198.51.100.7:8080");
        await().atMost(Duration.ofSeconds(10)).until(() -> addresses.lookup(MemberId.of(holder)).map(MemberAddress::url)
                .filter("http://198.51.100.7:8080"::equals).isPresent());
        try {
            HttpResponse<String> answer = post(other, "/commands/forged", "f", Map.of());
            assertThat(answer.statusCode()).isEqualTo(502);
            assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
            assertThat(answer.body()).contains("urn:krabka:routing:refused-target").contains("198.51.100.7")
                    .contains("allowed-targets");
            assertThat(handled()).doesNotContainKey("forged");
        } finally {
            writeAddress(holder, real);
            await().atMost(Duration.ofSeconds(10)).until(() -> addresses.lookup(MemberId.of(holder)).map(MemberAddress::url)
                    .filter(real::equals).isPresent());
        }
    }

    @Test
    @Order(5)
    void aHolderDeposedWhileItHandlesARequestHasItsWriteRefusedAndAnswers503() throws Exception {
        String holder = awaitHolder();
        java.util.concurrent.CompletableFuture<HttpResponse<String>> pending = http.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(holder) + "/slow/deposed"))
                        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(SLOW_ENTERED.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(loop(holder).release(Role.of(ROLE))).isTrue();
        SLOW_PROCEED.countDown();
        HttpResponse<String> answer = pending.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Retry-After")).isPresent();
        assertThat(answer.body()).contains("urn:krabka:routing:deposed").contains("send the request again");
        assertThat(handled()).doesNotContainKey("deposed");
        awaitHolder();
    }

    @Test
    @Order(6)
    void withNoHolderEveryMemberAnswers503WithRetryAfterAndAProblem() throws Exception {
        awaitHolder();
        List.of("n1", "n2", "r3").forEach(m -> loop(m).stop());
        try {
            for (String member : List.of("n1", "n2", "r3")) {
                HttpResponse<String> answer = post(member, "/commands/leaderless", "l", Map.of());
                assertThat(answer.statusCode()).as(member + ": " + answer.body()).isEqualTo(503);
                assertThat(answer.headers().firstValue("Retry-After")).isPresent()
                        .get().satisfies(seconds -> assertThat(Long.parseLong(seconds)).isPositive());
                assertThat(answer.headers().firstValue("Content-Type")).contains("application/problem+json");
                assertThat(answer.body()).contains("\"status\":503").contains("urn:krabka:routing:no-holder")
                        .contains("\"role\":\"orders\"");
            }
            assertThat(handled()).doesNotContainKey("leaderless");
        } finally {
            List.of("n1", "n2", "r3").forEach(m -> loop(m).start());
        }
        awaitHolder();
    }

    @Test
    @Order(7)
    void aLeaderOnlyHandlerForARoleThatIsNotConfiguredFailsStartupNamingIt() {
        assertThatThrownBy(() -> start("bad", "forward", BadApp.class).close())
                .hasStackTraceContaining("@LeaderOnly(role = \"typo\")")
                .hasStackTraceContaining("krabka.coordination.roles");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(BadCommands.class)
    static class BadApp {
    }

    private static String awaitHolder() {
        await().atMost(Duration.ofSeconds(30)).until(() -> holderNow().isPresent());
        return holderNow().orElseThrow();
    }

    private static Optional<String> holderNow() {
        return members.keySet().stream().filter(m -> loop(m).state(Role.of(ROLE)) == MemberRoleState.LEADER).findFirst();
    }

    private static LeadershipLoop loop(String member) {
        return members.get(member).getBean(LeadershipLoop.class);
    }

    private static String port(String member) {
        return members.get(member).getEnvironment().getProperty("local.server.port");
    }

    private static HttpResponse<String> post(String member, String path, String body, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(member) + path))
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String get(String member, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(member) + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void writeAddress(String member, String url) throws Exception {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            producer.send(new ProducerRecord<>(MemberAddressCodec.topicFor(TOPIC), MemberAddressCodec.encodeKey(MemberId.of(member)),
                    MemberAddressCodec.encodeValue(new MemberAddress(MemberId.of(member), url, System.currentTimeMillis()))))
                    .get();
        }
    }

    /** Every committed record of the handled topic: command id to the "member@term" values written for it. */
    private static Map<String, List<String>> handled() {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(settings)) {
            TopicPartition partition = new TopicPartition(HANDLED, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records.stream().collect(Collectors.groupingBy(ConsumerRecord::key,
                Collectors.mapping(ConsumerRecord::value, Collectors.toList())));
    }
}
