package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.kafka.support.KafkaHeaders;

/**
 * {@link LeaderListener} methods in Spring Boot members on a real KRaft broker: exactly
 * one output per input across a release, Spring Kafka's serializers, dead letters, and
 * listeners that cannot run failing the start.
 */
class LeaderListenerIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static KafkaTestCluster cluster;

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String requests = "requests-" + suffix;
    private final String commands = "commands-" + suffix;

    @RegisterExtension
    final SpringMembers members = SpringMembers.of(ListenerApp.class, () -> cluster.bootstrapServers())
            .with(
                    "spring.main.web-application-type=none",
                    "krabka.coordination.roles=controller",
                    "test.requests=" + requests)
            .withFastLeases();

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ListenerApp {

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "one-record")
        OneRecordListener oneRecordListener() {
            return new OneRecordListener();
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "batch")
        BatchListener batchListener() {
            return new BatchListener();
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "typed-sender")
        TypedDispatcher typedDispatcher(Environment environment) {
            return new TypedDispatcher(environment.getProperty("test.requests").replace("requests", "commands"));
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "wrong-signature")
        WrongSignature wrongSignature() {
            return new WrongSignature();
        }

        @Bean
        @ConditionalOnProperty(name = "test.listener", havingValue = "shared-group")
        SharedGroup sharedGroup() {
            return new SharedGroup();
        }
    }

    /** One command per request, stamped with the leader; a request named "poison..." throws. */
    static class OneRecordListener {
        @LeaderListener(role = "controller", topics = "${test.requests}", maxBatchRecords = "50")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request, Leadership leadership) {
            if (request.value().startsWith("poison")) {
                throw new IllegalArgumentException("cannot handle " + request.value());
            }
            return new ProducerRecord<>(
                    request.topic().replace("requests", "commands"),
                    0,
                    request.key(),
                    request.value() + "," + leadership.member().value() + "," + leadership.term());
        }
    }

    /** Doubles integers, a batch at a time. */
    static class BatchListener {
        @LeaderListener(role = "controller", topics = "${test.requests}", groupId = "doubler", maxBatchWait = "50ms")
        List<ProducerRecord<String, Integer>> onRequests(List<ConsumerRecord<String, Integer>> requests) {
            List<ProducerRecord<String, Integer>> doubled = new ArrayList<>();
            for (ConsumerRecord<String, Integer> request : requests) {
                doubled.add(new ProducerRecord<>(
                        request.topic().replace("requests", "commands"), 0, request.key(), request.value() * 2));
            }
            return doubled;
        }
    }

    /** Writes 1, 2, 3 with a typed sender, the last one asynchronously, then keeps the role. */
    static class TypedDispatcher {
        private final String topic;

        TypedDispatcher(String topic) {
            this.topic = topic;
        }

        @OnLeadership(role = "controller")
        void dispatch(GuardedSender<String, Integer> sender, Leadership leadership) throws Exception {
            sender.send(topic, leadership.member().value(), 1);
            sender.sendAll(List.of(new ProducerRecord<>(topic, 0, "k", 2)));
            sender.sendAsync(topic, "k", 3).get(30, TimeUnit.SECONDS);
            new CountDownLatch(1).await();
        }
    }

    static class WrongSignature {
        @LeaderListener(role = "controller", topics = "${test.requests}")
        void onRequest(String request) {
            throw new AssertionError("never called");
        }
    }

    static class SharedGroup {
        @LeaderListener(role = "controller", topics = "${test.requests}")
        void first(ConsumerRecord<String, String> request) {}

        @LeaderListener(role = "controller", topics = "${test.requests}")
        void second(ConsumerRecord<String, String> request) {}
    }

    private ConfigurableApplicationContext start(String member, String listener, String... more) {
        return members.start(
                member,
                Stream.concat(Stream.of("test.listener=" + listener), Stream.of(more))
                        .toArray(String[]::new));
    }

    private static LeadershipLoop loop(ConfigurableApplicationContext app) {
        return app.getBean(LeadershipLoop.class);
    }

    @Test
    void eachRequestGetsExactlyOneCommandAcrossAReleaseAndAFailingRequestGoesToTheDeadLetterTopic() {
        cluster.createTopic(requests, 2);
        cluster.createTopic(commands, 1);
        cluster.createTopic(requests + ".DLT", 1);
        ConfigurableApplicationContext a = start("a", "one-record");
        ConfigurableApplicationContext b = start("b", "one-record");
        cluster.produce(requests, 0, 150, i -> ("r" + i).getBytes(StandardCharsets.UTF_8));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size() == 150);

        ConfigurableApplicationContext leader = loop(a).state(CONTROLLER) == MemberRoleState.LEADER ? a : b;
        ConfigurableApplicationContext standby = leader == a ? b : a;
        assertThat(loop(leader).release(CONTROLLER)).isTrue();
        cluster.produce(requests, 150, 300, i -> ("r" + i).getBytes(StandardCharsets.UTF_8));
        cluster.produce(requests, 0, 1, i -> "poison-1".getBytes(StandardCharsets.UTF_8));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size() == 300
                        && cluster.committed(requests + ".DLT").size() == 1);

        List<String> log = cluster.committed(commands).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                .toList();
        Map<String, Long> perRequest =
                log.stream().collect(Collectors.groupingBy(c -> c.split(",")[0], Collectors.counting()));
        assertThat(perRequest)
                .hasSize(300)
                .allSatisfy((request, count) -> assertThat(count).as(request).isEqualTo(1));
        assertThat(log).extracting(c -> Long.parseLong(c.split(",")[2])).isSortedAccordingTo(Long::compare);
        assertThat(log)
                .extracting(c -> c.split(",")[1])
                .as("the standby took over after the release")
                .contains(loop(leader).member().value(), loop(standby).member().value());

        ConsumerRecord<byte[], byte[]> dead =
                cluster.committed(requests + ".DLT").get(0);
        assertThat(new String(dead.value(), StandardCharsets.UTF_8)).isEqualTo("poison-1");
        assertThat(new String(
                        dead.headers()
                                .lastHeader(KafkaHeaders.DLT_EXCEPTION_MESSAGE)
                                .value(),
                        StandardCharsets.UTF_8))
                .isEqualTo("cannot handle poison-1");
        assertThat(new String(
                        dead.headers()
                                .lastHeader(KafkaHeaders.DLT_ORIGINAL_TOPIC)
                                .value(),
                        StandardCharsets.UTF_8))
                .isEqualTo(requests);
        assertThat(loop(standby).state(CONTROLLER)).isEqualTo(MemberRoleState.LEADER);
        assertThat(standby.getBean(LeaderPipelines.class).entries(CONTROLLER))
                .singleElement()
                .satisfies(
                        entry -> assertThat(entry.pipeline().processedRecords()).isGreaterThanOrEqualTo(151));
    }

    @Test
    void aBatchListenerUsesSpringKafkasSerializersAndARecordThatCannotBeDeserializedGoesToTheDeadLetterTopic() {
        cluster.createTopic(requests, 1);
        cluster.createTopic(commands, 1);
        cluster.createTopic(requests + ".DLT", 1);
        start(
                "a",
                "batch",
                "spring.kafka.consumer.value-deserializer=org.apache.kafka.common.serialization.IntegerDeserializer",
                "spring.kafka.producer.value-serializer=org.apache.kafka.common.serialization.IntegerSerializer");
        cluster.produce(requests, 1, 4, i -> ByteBuffer.allocate(4).putInt(i).array());
        cluster.produce(requests, 0, 1, i -> new byte[] {1, 2, 3});
        cluster.produce(requests, 4, 6, i -> ByteBuffer.allocate(4).putInt(i).array());

        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size() == 5
                        && cluster.committed(requests + ".DLT").size() == 1);
        assertThat(cluster.committed(commands))
                .extracting(r -> ByteBuffer.wrap(r.value()).getInt())
                .containsExactly(2, 4, 6, 8, 10);
        ConsumerRecord<byte[], byte[]> dead =
                cluster.committed(requests + ".DLT").get(0);
        assertThat(dead.value()).containsExactly(1, 2, 3);
        assertThat(ByteBuffer.wrap(dead.headers()
                                .lastHeader(KafkaHeaders.DLT_ORIGINAL_OFFSET)
                                .value())
                        .getLong())
                .isEqualTo(3);
    }

    @Test
    void onLeadershipWorkWritesTypedRecordsWithSpringKafkasSerializers() {
        cluster.createTopic(commands, 1);
        start(
                "a",
                "typed-sender",
                "spring.kafka.producer.value-serializer=org.apache.kafka.common.serialization.IntegerSerializer");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster.committed(commands).size() == 3);
        assertThat(cluster.committed(commands))
                .extracting(r -> ByteBuffer.wrap(r.value()).getInt())
                .containsExactly(1, 2, 3);
        assertThat(new String(cluster.committed(commands).get(0).key(), StandardCharsets.UTF_8))
                .isEqualTo("a");
    }

    @Test
    void aListenerWithAnUnsupportedSignatureFailsTheStartNamingTheMethod() {
        assertThatThrownBy(() -> start("a", "wrong-signature"))
                .rootCause()
                .hasMessageContaining(WrongSignature.class.getName() + ".onRequest()")
                .hasMessageContaining("must take a ConsumerRecord");
    }

    @Test
    void twoListenersCommittingTheSameTopicInOneGroupFailTheStart() {
        assertThatThrownBy(() -> start("a", "shared-group"))
                .hasStackTraceContaining("give one of them its own groupId")
                .hasStackTraceContaining("controller-pipeline");
    }
}
