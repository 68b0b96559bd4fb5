package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The packaged application, twice, as separate JVMs on a real broker: the leader is
 * killed with SIGKILL while requests flow through its pipeline, the standby takes over
 * within a lease plus a stagger, and the committed command log shows that no two
 * leaderships ever interleaved and that every request got exactly one command.
 */
class FailoverEndToEndIT {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration RENEW = Duration.ofSeconds(1);
    private static final Duration STAGGER = Duration.ofSeconds(1);
    private static final Duration TAKEOVER_BOUND = LEASE.plus(STAGGER).plusSeconds(2);
    private static final String TOPIC = "sample-commands";

    private static KafkaTestCluster cluster;

    private final JsonMapper json = JsonMapper.builder().build();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Map<String, Member> members = new LinkedHashMap<>();

    private record Member(String id, int port, Process process) {}

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void stopMembers() throws InterruptedException {
        for (Member member : members.values()) {
            member.process().destroyForcibly();
        }
        for (Member member : members.values()) {
            member.process().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void standbyTakesOverAfterTheLeaderIsKilledAndTermsNeverInterleave() throws Exception {
        start("n1");
        start("n2");

        // One leader, one standby in the roster behind it.
        String leader = await("a leader and a registered standby")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(this::leaderWithStandby, Optional::isPresent)
                .orElseThrow();
        String survivor = leader.equals("n1") ? "n2" : "n1";
        // The leader's report, just read: the survivor's view of the cluster may be a second older.
        long firstTerm = role(leader).path("token").path("term").asLong();
        // An operator's call sent to the standby is answered by the leader: @LeaderOnly forwards it.
        JsonNode forwarded = await("the standby forwards an operator's call to the leader")
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(
                        () -> ping(survivor),
                        answer -> leader.equals(answer.path("handledBy").asString()));
        assertThat(forwarded.path("forwardedBy").asString()).isEqualTo(survivor);
        assertThat(forwarded.path("term").asLong()).isEqualTo(firstTerm);
        await("the leader's commands reach the survivor's device")
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> device(survivor).path("accepted").path(leader).asLong() >= 5);

        // Requests flow through the leader's pipeline while it is killed.
        List<String> requested = new ArrayList<>(sendRequests(survivor, 300));
        Process killed = members.get(leader).process();
        killed.destroyForcibly(); // SIGKILL on Linux: no release, no tombstone
        long killedAt = System.nanoTime();
        assertThat(killed.waitFor(10, TimeUnit.SECONDS))
                .as("the killed leader exits")
                .isTrue();

        await("the survivor holds the role")
                .atMost(TAKEOVER_BOUND)
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() -> "leader".equals(role(survivor).path("state").asString()));
        Duration takeover = Duration.ofNanos(System.nanoTime() - killedAt);
        System.out.printf(
                "Takeover after SIGKILL of %s: %d ms (lease %s, stagger %s, bound %s)%n",
                leader, takeover.toMillis(), LEASE, STAGGER, TAKEOVER_BOUND);
        assertThat(takeover).isLessThanOrEqualTo(TAKEOVER_BOUND);

        requested.addAll(sendRequests(survivor, 300));
        await("every request answered and none waiting")
                .atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> device(survivor).path("requests").path("answered").asLong() == requested.size()
                        && get(survivor, "/requests").path("waiting").asLong() == 0);

        JsonNode role = role(survivor);
        assertThat(role.path("holder").asString()).isEqualTo(survivor);
        long secondTerm = role.path("token").path("term").asLong();
        assertThat(secondTerm).isGreaterThan(firstTerm);

        // The survivor now answers the operator's calls itself, under its own term.
        JsonNode handled = ping(survivor);
        assertThat(handled.path("handledBy").asString()).isEqualTo(survivor);
        assertThat(handled.path("term").asLong()).isEqualTo(secondTerm);
        assertThat(handled.path("forwardedBy").isNull()).isTrue();

        // The survivor dispatches under its own term, and its device obeys it.
        await("the survivor's commands reach its device")
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> device(survivor).path("accepted").path(survivor).asLong() >= 5);

        List<JsonNode> commands = readCommittedCommands();
        Map<Long, String> memberOfTerm = new LinkedHashMap<>();
        // Periodic commands and request commands count seq each on their own.
        Map<String, Long> lastSeqOfTerm = new HashMap<>();
        Map<String, Integer> commandsPerRequest = new HashMap<>();
        long previousTerm = -1;
        for (JsonNode command : commands) {
            long term = command.path("term").asLong();
            String member = command.path("member").asString();
            long seq = command.path("seq").asLong();
            assertThat(term)
                    .as("terms never go backwards in log order: %s", command)
                    .isGreaterThanOrEqualTo(previousTerm);
            previousTerm = term;
            String owner = memberOfTerm.putIfAbsent(term, member);
            if (owner != null) {
                assertThat(member).as("one member per term: %s", command).isEqualTo(owner);
            }
            JsonNode requestId = command.path("requestId");
            if (requestId.isString()) {
                commandsPerRequest.merge(requestId.asString(), 1, Integer::sum);
            }
            Long lastSeq = lastSeqOfTerm.put(term + (requestId.isString() ? "/request" : "/periodic"), seq);
            if (lastSeq != null) {
                assertThat(seq)
                        .as("seq grows within term %d: %s", term, command)
                        .isGreaterThan(lastSeq);
            }
        }
        assertThat(memberOfTerm).containsEntry(firstTerm, leader).containsEntry(secondTerm, survivor);
        assertThat(memberOfTerm.keySet()).last().isEqualTo(secondTerm);

        assertThat(commandsPerRequest)
                .as("one command per request, none missing, none for a request never sent")
                .containsOnlyKeys(requested)
                .allSatisfy((request, count) -> assertThat(count).as(request).isEqualTo(1));

        JsonNode device = device(survivor);
        assertThat(device.path("requests").path("answeredTwice").asLong()).isZero();
        assertThat(device.path("highestTerm").asLong()).isEqualTo(secondTerm);
        assertThat(device.path("rejected").path(survivor).asLong(0))
                .as("commands of the live leader rejected")
                .isZero();
        assertThat(device.path("rejected").size())
                .as("rejected commands: %s", device.path("rejected"))
                .isZero();
        System.out.printf(
                "Committed commands: %d in terms %s; survivor's device: accepted %s, rejected %s%n",
                commands.size(), memberOfTerm, device.path("accepted"), device.path("rejected"));

        // The survivor's role history: the killed leader's tenure, a gap of about a lease
        // (no holder commanded the device until the lease ran out), then its own, ongoing.
        JsonNode history = get(survivor, "/history?minutes=5");
        List<JsonNode> tenures = List.copyOf(history.path("tenures").values());
        assertThat(tenures)
                .extracting(
                        tenure -> tenure.path("term").asLong(),
                        tenure -> tenure.path("member").asString())
                .contains(tuple(firstTerm, leader))
                .last()
                .isEqualTo(tuple(secondTerm, survivor));
        assertThat(tenures.get(tenures.size() - 1).path("ongoing").asBoolean())
                .as("the survivor's tenure is ongoing")
                .isTrue();
        JsonNode gap = history.path("gaps").values().stream()
                .filter(g -> g.path("beforeTerm").asLong() == secondTerm)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no gap before term " + secondTerm + ": " + history));
        System.out.printf(
                "Gap before term %d in the survivor's history: %d ms%n",
                secondTerm, gap.path("millis").asLong());
        assertThat(gap.path("millis").asLong())
                .as("the gap the killed leader's lease left")
                .isGreaterThanOrEqualTo(LEASE.toMillis() / 2);
    }

    private Optional<String> leaderWithStandby() throws Exception {
        for (Member member : members.values()) {
            JsonNode role = role(member.id());
            if ("leader".equals(role.path("state").asString())
                    && member.id().equals(role.path("holder").asString())
                    && role.path("current").asBoolean()
                    && role.path("roster").size() == 2) {
                return Optional.of(member.id());
            }
        }
        return Optional.empty();
    }

    private void start(String id) throws IOException {
        Path jar = Path.of(System.getProperty("sample.jar", "target/missing.jar"));
        assertThat(jar)
                .as("the packaged sample app (run through failsafe, after package)")
                .isRegularFile();
        Path log = Path.of(System.getProperty("sample.target", "target")).resolve("e2e-" + id + ".log");
        int port = freePort();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-Xmx512m",
                "-jar",
                jar.toString(),
                "--spring.kafka.bootstrap-servers=" + cluster.bootstrapServers(),
                "--krabka.coordination.member-id=" + id,
                "--server.port=" + port,
                "--krabka.coordination.lease.duration=" + LEASE.toSeconds() + "s",
                "--krabka.coordination.lease.renew-interval=" + RENEW.toSeconds() + "s",
                "--krabka.coordination.lease.challenge-stagger=" + STAGGER.toSeconds() + "s",
                "--sample.dispatch-interval=100ms"));
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        members.put(id, new Member(id, port, process));
    }

    /** Sends requests through a member's {@code POST /requests}; returns their ids once the broker acknowledged all. */
    private List<String> sendRequests(String member, int count) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + members.get(member).port() + "/requests?count=" + count);
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode())
                .as("POST %s: %s", uri, response.body())
                .isEqualTo(200);
        List<String> ids = new ArrayList<>();
        json.readTree(response.body()).path("ids").forEach(id -> ids.add(id.asString()));
        assertThat(ids).hasSize(count);
        return ids;
    }

    /** {@code POST /operator/ping} through {@code member}: a {@code @LeaderOnly} call only the leader answers. */
    private JsonNode ping(String member) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + members.get(member).port() + "/operator/ping");
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(10))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode())
                .as("POST %s: %s", uri, response.body())
                .isEqualTo(200);
        return json.readTree(response.body());
    }

    private JsonNode role(String member) throws Exception {
        return get(member, "/actuator/coordination").path("roles").path("controller");
    }

    private JsonNode device(String member) throws Exception {
        return get(member, "/device");
    }

    private JsonNode get(String member, String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + members.get(member).port() + path);
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s", uri).isEqualTo(200);
        return json.readTree(response.body());
    }

    /** Every committed command, in log order, up to the end the read began at. */
    private List<JsonNode> readCommittedCommands() {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = new TopicPartition(TOPIC, 0);
        List<JsonNode> commands = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            // Under read_committed the end offset is the last stable offset.
            long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(10))
                    .get(partition);
            await("reading " + TOPIC + " up to offset " + end)
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> {
                        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                            if (record.offset() < end) {
                                commands.add(json.readTree(record.value()));
                            }
                        }
                        return consumer.position(partition) >= end;
                    });
        }
        assertThat(commands).as("committed commands").isNotEmpty();
        return commands;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        }
    }
}
