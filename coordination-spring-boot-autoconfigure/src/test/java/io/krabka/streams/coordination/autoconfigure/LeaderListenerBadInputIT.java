package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.kafka.support.serializer.DeserializationException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a {@link LeaderListener} does with input it cannot handle, on a real broker that
 * creates no topic by itself: a deposed listener stops between records, an output the
 * broker refuses for one record sends that record to the dead-letter topic, a record
 * Spring Kafka's {@code ErrorHandlingDeserializer} could not read is a dead letter (not a
 * null), and work that fails at every grant shows in health without touching readiness.
 */
@ExtendWith(OutputCaptureExtension.class)
class LeaderListenerBadInputIT {

    private static final Role CONTROLLER = Role.of("controller");
    /** Only the health tests start a web server. */
    private static final String WEB = "spring.main.web-application-type=servlet";

    private static KafkaTestCluster cluster;

    private final HttpClient http = HttpClient.newHttpClient();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String requests = "requests-" + suffix;
    private final String commands = "commands-" + suffix;
    private final String deadLetters = requests + ".DLT";

    @RegisterExtension
    final SpringMembers members = SpringMembers.of(BadInputApp.class, () -> cluster.bootstrapServers())
            .with(
                    "spring.main.web-application-type=none",
                    "management.endpoint.health.show-details=always",
                    "management.endpoint.health.probes.enabled=true",
                    "management.endpoint.health.group.readiness.include=readinessState,coordination",
                    "krabka.coordination.roles=controller",
                    "krabka.coordination.lease.duration=3s",
                    "krabka.coordination.lease.renew-interval=1s",
                    "krabka.coordination.topic.partitions=1",
                    "test.requests=" + requests);

    /** A cluster of its own: no topic is created by a first send to it, so a missing output topic stays missing. */
    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start(1, Map.of("auto.create.topics.enable", "false"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class BadInputApp {

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "device")
        DeviceListener deviceListener() {
            return new DeviceListener();
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "refused")
        RefusedOutputs refusedOutputs() {
            return new RefusedOutputs();
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "typed")
        TypedListener typedListener() {
            return new TypedListener();
        }
    }

    /**
     * Calls a device per request. The tenth call of the first term blocks until the call is
     * interrupted, as a device call does when the leadership ends under it.
     */
    static class DeviceListener {
        /** Per device call, the term it was made under. */
        static final List<Long> calls = new CopyOnWriteArrayList<>();

        static final CountDownLatch tenthCallBlocked = new CountDownLatch(1);

        @LeaderListener(role = "controller", topics = "${test.requests}", maxBatchRecords = "100", maxBatchWait = "5s")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request, Leadership leadership)
                throws InterruptedException {
            calls.add(leadership.term());
            if (calls.size() == 10) {
                tenthCallBlocked.countDown();
                new CountDownLatch(1).await();
            }
            return new ProducerRecord<>(
                    request.topic().replace("requests", "commands"), 0, request.key(), request.value());
        }
    }

    /** Writes a command per request: too large for "big", to a topic that does not exist for "lost", and throws for "poison". */
    static class RefusedOutputs {
        @LeaderListener(role = "controller", topics = "${test.requests}")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request) {
            String commands = request.topic().replace("requests", "commands");
            return switch (request.value()) {
                case "big" -> new ProducerRecord<>(commands, 0, request.key(), "x".repeat(30_000));
                case "lost" ->
                    new ProducerRecord<>(request.topic().replace("requests", "nowhere"), request.key(), "lost");
                case "poison" -> throw new IllegalArgumentException("cannot handle poison");
                default -> new ProducerRecord<>(commands, 0, request.key(), "do " + request.value());
            };
        }
    }

    /** Integers in, strings out. */
    static class TypedListener {
        @LeaderListener(role = "controller", topics = "${test.requests}")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, Integer> request) {
            return new ProducerRecord<>(
                    request.topic().replace("requests", "commands"), 0, request.key(), "v=" + request.value());
        }
    }

    private ConfigurableApplicationContext start(String listener, String... more) {
        return members.start(
                "a",
                Stream.concat(Stream.of("test.listener=" + listener), Stream.of(more))
                        .toArray(String[]::new));
    }

    /** Finding 2: the interrupt that ends a leadership ends its batch; no dead letter is claimed for the fenced batch. */
    @Test
    void aDeposedListenerStopsBetweenRecordsAndClaimsNoDeadLetter(CapturedOutput output) throws Exception {
        cluster.createTopic(requests, 1);
        cluster.createTopic(commands, 1);
        cluster.createTopic(deadLetters, 1);
        cluster.produce(requests, 0, 100, i -> ("r" + i).getBytes(StandardCharsets.UTF_8));
        ConfigurableApplicationContext a = start("device");
        assertThat(DeviceListener.tenthCallBlocked.await(30, TimeUnit.SECONDS)).isTrue();
        long deposedTerm = DeviceListener.calls.get(0);

        assertThat(a.getBean(LeadershipLoop.class).release(CONTROLLER)).isTrue();
        // The member takes the role back and does the whole batch under its next term.
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size() == 100);

        assertThat(DeviceListener.calls.stream()
                        .filter(term -> term == deposedTerm)
                        .count())
                .as("device calls under the released term")
                .isEqualTo(10);
        assertThat(cluster.committed(commands))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 100)
                        .mapToObj(i -> "r" + i)
                        .toList());
        assertThat(cluster.committed(deadLetters)).isEmpty();
        assertThat(output.getOut()).doesNotContain(deadLetters);
    }

    /**
     * Finding 7: an output larger than its topic's max.message.bytes, and one for a topic
     * that does not exist, send their input record to the dead-letter topic, naming its
     * offset and the reason; every other request gets its command once.
     */
    @Test
    void anOutputTheBrokerRefusesSendsItsRecordToTheDeadLetterTopic() throws Exception {
        cluster.createTopic(requests, 1);
        // Above the producer's batch.size (16 KB): below it, kafka-clients 4.1 splits a batch holding
        // a record too large for the topic without end instead of refusing the record (KAFKA-8350).
        cluster.admin()
                .createTopics(
                        List.of(new NewTopic(commands, 1, (short) 1).configs(Map.of("max.message.bytes", "20000"))))
                .all()
                .get(20, TimeUnit.SECONDS);
        cluster.createTopic(deadLetters, 1);
        List<String> values = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            values.add(i == 5 ? "big" : i == 12 ? "lost" : "r" + i);
        }
        cluster.produce(requests, 0, values.size(), i -> values.get(i).getBytes(StandardCharsets.UTF_8));
        start("refused");

        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(deadLetters).size() == 2
                        && cluster.committed(commands).size() == 18);
        assertThat(cluster.committed(commands))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(values.stream()
                        .filter(v -> v.startsWith("r"))
                        .map(v -> "do " + v)
                        .toList());
        List<ConsumerRecord<byte[], byte[]>> dead = cluster.committed(deadLetters);
        assertThat(dead)
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("big", "lost");
        assertThat(dead)
                .extracting(r -> ByteBuffer.wrap(r.headers()
                                .lastHeader(KafkaHeaders.DLT_ORIGINAL_OFFSET)
                                .value())
                        .getLong())
                .containsExactly(5L, 12L);
        assertThat(header(dead.get(0), KafkaHeaders.DLT_EXCEPTION_FQCN))
                .isEqualTo(RecordTooLargeException.class.getName());
        assertThat(header(dead.get(1), KafkaHeaders.DLT_EXCEPTION_MESSAGE))
                .contains(requests.replace("requests", "nowhere"))
                .contains("does not exist");
    }

    /**
     * Findings 7 and 11: without its dead-letter topic a listener cannot run, so each grant
     * ends FAILED at once, before any input is handled; health says so, readiness stays up.
     */
    @Test
    void withoutItsDeadLetterTopicEveryGrantFailsAndHealthSaysSoWhileReadinessStaysUp() throws Exception {
        cluster.createTopic(requests, 1);
        cluster.createTopic(commands, 1);
        cluster.produce(requests, 0, 3, i -> (i == 1 ? "poison" : "r" + i).getBytes(StandardCharsets.UTF_8));
        // The guide's probe settings: the root shows WORK_FAILING, and no probe changes its answer.
        ConfigurableApplicationContext a = start(
                "refused", WEB, "management.endpoint.health.status.order=down,out-of-service,work-failing,up,unknown");

        JsonNode coordination = awaitWorkFailing(a);
        assertThat(coordination
                        .get("details")
                        .get("workFailing")
                        .get("controller")
                        .asString())
                .contains(deadLetters);
        assertThat(cluster.committed(commands)).isEmpty();
        assertThat(json(a, "/actuator/health").get("status").asString()).isEqualTo("WORK_FAILING");
        assertThat(status(a, "/actuator/health")).isEqualTo(200);
        assertThat(status(a, "/actuator/health/readiness")).isEqualTo(200);
        assertThat(status(a, "/actuator/health/liveness")).isEqualTo(200);
    }

    /** Finding 11: a missing input topic ends every grant FAILED; health says which, readiness stays up. */
    @Test
    void aMissingInputTopicShowsInHealth() throws Exception {
        cluster.createTopic(commands, 1);
        ConfigurableApplicationContext a = start("refused", WEB);

        JsonNode coordination = awaitWorkFailing(a);
        assertThat(coordination
                        .get("details")
                        .get("workFailing")
                        .get("controller")
                        .asString())
                .contains(requests)
                .contains("do not exist");
        assertThat(status(a, "/actuator/health/readiness")).isEqualTo(200);
    }

    /** Finding 8: under ErrorHandlingDeserializer a record that cannot be read is a dead letter, never a null input. */
    @Test
    void aRecordErrorHandlingDeserializerCouldNotReadIsADeadLetter() throws Exception {
        cluster.createTopic(requests, 1);
        cluster.createTopic(commands, 1);
        cluster.createTopic(deadLetters, 1);
        cluster.produce(
                requests,
                0,
                4,
                i -> i == 2
                        ? new byte[] {1, 2, 3}
                        : ByteBuffer.allocate(4).putInt(i).array());
        start(
                "typed",
                "spring.kafka.consumer.value-deserializer=org.springframework.kafka.support.serializer.ErrorHandlingDeserializer",
                "spring.kafka.consumer.properties.spring.deserializer.value.delegate.class="
                        + "org.apache.kafka.common.serialization.IntegerDeserializer");

        // Four records in, each either a command or a dead letter.
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size()
                                + cluster.committed(deadLetters).size()
                        == 4);
        assertThat(cluster.committed(commands))
                .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("v=0", "v=1", "v=3");
        ConsumerRecord<byte[], byte[]> dead = cluster.committed(deadLetters).get(0);
        assertThat(dead.value()).containsExactly(1, 2, 3);
        assertThat(ByteBuffer.wrap(dead.headers()
                                .lastHeader(KafkaHeaders.DLT_ORIGINAL_OFFSET)
                                .value())
                        .getLong())
                .isEqualTo(2);
        assertThat(header(dead, KafkaHeaders.DLT_EXCEPTION_FQCN)).isEqualTo(DeserializationException.class.getName());
    }

    private JsonNode awaitWorkFailing(ConfigurableApplicationContext app) {
        JsonNode[] coordination = new JsonNode[1];
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            coordination[0] = json(app, "/actuator/health").get("components").get("coordination");
            return coordination[0].get("status").asString().equals("WORK_FAILING");
        });
        assertThat(app.getBean(LeadershipLoop.class).state(CONTROLLER)).isNotEqualTo(MemberRoleState.STOPPED);
        return coordination[0];
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    private int status(ConfigurableApplicationContext app, String path) throws Exception {
        return http.send(request(app, path), HttpResponse.BodyHandlers.ofString())
                .statusCode();
    }

    private JsonNode json(ConfigurableApplicationContext app, String path) throws Exception {
        return JsonMapper.builder()
                .build()
                .readTree(http.send(request(app, path), HttpResponse.BodyHandlers.ofString())
                        .body());
    }

    private static HttpRequest request(ConfigurableApplicationContext app, String path) {
        return HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + path))
                .build();
    }
}
