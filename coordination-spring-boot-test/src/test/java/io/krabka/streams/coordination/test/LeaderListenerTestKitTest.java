package io.krabka.streams.coordination.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.fencing.TokenHeaders;
import io.krabka.streams.coordination.spring.LeaderListener;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A {@code @LeaderListener} under {@link AutoConfigureCoordinationTest}: fed and read through
 * {@link CoordinationTestSupport}, exactly once across a fence, the next grant and a release,
 * and with no Kafka client built although the bootstrap address points nowhere.
 */
@SpringBootTest(
        properties = {
            "krabka.coordination.roles=controller",
            "krabka.coordination.member-id=n1",
            "spring.kafka.bootstrap-servers=localhost:1",
            "spring.kafka.consumer.key-deserializer=org.apache.kafka.common.serialization.StringDeserializer",
            "spring.kafka.consumer.value-deserializer=org.apache.kafka.common.serialization.StringDeserializer",
            "spring.kafka.producer.key-serializer=org.apache.kafka.common.serialization.StringSerializer",
            "spring.kafka.producer.value-serializer=org.apache.kafka.common.serialization.StringSerializer"
        })
@AutoConfigureCoordinationTest
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class LeaderListenerTestKitTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        NewTopic requests() {
            return TopicBuilder.name("requests").partitions(3).build();
        }

        @Bean
        NewTopic commands() {
            return TopicBuilder.name("commands").partitions(1).build();
        }

        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher();
        }
    }

    /** Turns each request into a command; a request it cannot handle goes to requests.DLT. */
    static class Dispatcher {

        @LeaderListener(role = "controller", topics = "requests")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request) {
            if (request.value().equals("poison")) {
                throw new IllegalArgumentException("cannot dispatch " + request.value());
            }
            return new ProducerRecord<>("commands", request.key(), "do " + request.value());
        }
    }

    @Autowired
    CoordinationTestSupport coordination;

    @Test
    void eachRequestIsAnsweredOnceAcrossAFenceTheNextGrantAndARelease() {
        coordination.awaitLeader("controller");
        send(0, 10);
        coordination.awaitProcessed("controller");
        assertThat(commands()).containsExactlyInAnyOrderElementsOf(expected(0, 10));

        coordination.fence("controller");
        send(10, 15);
        // A standby runs no pipeline, and a deposed one's transaction is refused whole.
        assertThat(commands()).hasSize(10);

        coordination.advance(Duration.ofMinutes(2));
        coordination.awaitLeader("controller");
        coordination.awaitProcessed("controller");
        assertThat(commands()).containsExactlyInAnyOrderElementsOf(expected(0, 15));

        assertThat(coordination.release("controller")).isTrue();
        send(15, 18);
        coordination.awaitLeader("controller");
        coordination.awaitProcessed("controller");
        assertThat(commands()).containsExactlyInAnyOrderElementsOf(expected(0, 18));
    }

    @Test
    void theOutputsCarryTheTermOfTheLeadershipThatWroteThem() {
        coordination.awaitLeader("controller");
        send(0, 1);
        coordination.awaitProcessed("controller");
        coordination.fence("controller");
        coordination.advance(Duration.ofMinutes(2));
        coordination.awaitLeader("controller");
        send(1, 2);
        coordination.awaitProcessed("controller");

        List<Long> terms = coordination.records("commands").stream()
                .map(command -> TokenHeaders.read(command.headers())
                        .orElseThrow()
                        .token()
                        .term())
                .toList();
        assertThat(terms).hasSize(2);
        assertThat(terms.get(1)).isGreaterThan(terms.get(0));
    }

    @Test
    void aRequestTheListenerRejectsGoesToTheDeadLetterTopicAndTheOthersGoOn() {
        coordination.awaitLeader("controller");
        // One key, so one partition and this order.
        coordination.send("requests", "device-7", "a");
        coordination.send("requests", "device-7", "poison");
        coordination.send("requests", "device-7", "b");
        coordination.awaitProcessed("controller");

        assertThat(commands()).containsExactly("do a", "do b");
        List<ConsumerRecord<byte[], byte[]>> dead = coordination.rawRecords("requests.DLT");
        assertThat(dead).hasSize(1);
        assertThat(new String(dead.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("poison");
        assertThat(new String(
                        dead.get(0)
                                .headers()
                                .lastHeader("kafka_dlt-exception-message")
                                .value(),
                        StandardCharsets.UTF_8))
                .contains("cannot dispatch poison");
    }

    @Test
    void noKafkaClientIsBuilt() throws MalformedObjectNameException {
        coordination.awaitLeader("controller");
        send(0, 3);
        coordination.awaitProcessed("controller");

        // Every Kafka consumer, producer and admin client registers an app-info MBean while it is open.
        Set<ObjectName> clients =
                ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName("kafka.*:type=app-info,*"), null);
        assertThat(clients).isEmpty();
    }

    private void send(int from, int to) {
        IntStream.range(from, to).forEach(i -> coordination.send("requests", "device-" + i, "r" + i));
    }

    private static List<String> expected(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "do r" + i).toList();
    }

    private List<String> commands() {
        return coordination.records("commands").stream()
                .map(command -> (String) command.value())
                .toList();
    }
}
