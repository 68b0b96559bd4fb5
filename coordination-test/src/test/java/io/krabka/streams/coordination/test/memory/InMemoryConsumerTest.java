package io.krabka.streams.coordination.test.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.junit.jupiter.api.Test;

/** The in-memory consumer reads what a read_committed consumer of Kafka reads, from where its group committed. */
class InMemoryConsumerTest {

    private final InMemoryCluster cluster = new InMemoryCluster();
    private final TopicPartition input = new TopicPartition("input", 0);

    @Test
    void aWaitingPollWakesAtTheCommitThatBringsRecordsAndReadsPastItsMarker() throws Exception {
        RoleEpoch epoch = cluster.transport(TopicSpec.DEFAULTS).initEpoch(Role.of("writer"));
        try (InMemoryConsumer consumer = cluster.consumer("g")) {
            consumer.assign(List.of(input));
            CompletableFuture<ConsumerRecords<byte[], byte[]>> polled = new CompletableFuture<>();
            Thread poller = new Thread(() -> polled.complete(consumer.poll(Duration.ofSeconds(30))));
            poller.start();
            await().until(() -> poller.getState() == Thread.State.TIMED_WAITING);

            epoch.transact(List.of(record("a"), record("b")));

            assertThat(values(polled.get(30, TimeUnit.SECONDS))).containsExactly("a", "b");
            // Two records and the transaction's marker.
            assertThat(consumer.position(input)).isEqualTo(3);
            assertThat(consumer.currentLag(input)).hasValue(0);
        }
    }

    @Test
    void positionsStartWhereTheGroupsTransactionsCommittedItsOffsets() {
        cluster.produce(record("a"));
        cluster.produce(record("b"));
        RoleEpoch epoch = cluster.transport(TopicSpec.DEFAULTS).initEpoch(Role.of("writer"));
        epoch.transact(
                List.of(),
                new ConsumedOffsets(new ConsumerGroupMetadata("g"), Map.of(input, new OffsetAndMetadata(1))));

        try (InMemoryConsumer consumer = cluster.consumer("g")) {
            consumer.assign(List.of(input));
            assertThat(consumer.committed(java.util.Set.of(input))).containsEntry(input, new OffsetAndMetadata(1));
            assertThat(consumer.groupMetadata().groupId()).isEqualTo("g");
            assertThat(values(consumer.poll(Duration.ZERO))).containsExactly("b");
        }
        try (InMemoryConsumer other = cluster.consumer("other-group")) {
            other.assign(List.of(input));
            assertThat(values(other.poll(Duration.ZERO))).containsExactly("a", "b");
        }
    }

    @Test
    void anInterruptedPollThrowsKafkasInterruptExceptionAndKeepsTheInterrupt() {
        try (InMemoryConsumer consumer = cluster.consumer("g")) {
            consumer.assign(List.of(input));
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> consumer.poll(Duration.ofSeconds(30))).isInstanceOf(InterruptException.class);
            assertThat(Thread.interrupted()).isTrue();
        }
    }

    @Test
    void aTopicHasTheDeclaredPartitionsAndAKeyAlwaysGoesToTheSameOne() {
        cluster.createTopic("input", 3);
        int first = cluster.produce(new ProducerRecord<>("input", bytes("device-7"), bytes("a")))
                .partition();
        int again = cluster.produce(new ProducerRecord<>("input", bytes("device-7"), bytes("b")))
                .partition();

        assertThat(cluster.partitionsFor("input")).hasSize(3);
        assertThat(again).isEqualTo(first);
        assertThatThrownBy(() -> cluster.createTopic("input", 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 3");
    }

    private ProducerRecord<byte[], byte[]> record(String value) {
        return new ProducerRecord<>(input.topic(), input.partition(), null, bytes(value));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> values(ConsumerRecords<byte[], byte[]> records) {
        return java.util.stream.StreamSupport.stream(records.spliterator(), false)
                .map(ConsumerRecord::value)
                .map(value -> new String(value, StandardCharsets.UTF_8))
                .toList();
    }
}
