package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The slice loop of the Kafka transport's reads on a consumer the test scripts. */
class ReadToEndTest {

    private static final TopicPartition P0 = new TopicPartition("__coordination_state", 0);
    private static final TopicPartition P1 = new TopicPartition("__coordination_state", 1);

    /**
     * A consumer that knows the end offsets in {@code answered} (and leaves the others out,
     * as Kafka's does when under a millisecond is left), and whose poll reads any assigned
     * partition to that end.
     */
    @SuppressWarnings("unchecked")
    private static Consumer<byte[], byte[]> consumer(Map<TopicPartition, Long> answered) {
        AtomicReference<Set<TopicPartition>> assignment = new AtomicReference<>(Set.of());
        Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
        return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
                Consumer.class.getClassLoader(),
                new Class<?>[] {Consumer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "assign" -> {
                        assignment.set(Set.copyOf((Collection<TopicPartition>) args[0]));
                        yield null;
                    }
                    case "assignment" -> assignment.get();
                    case "endOffsets" -> {
                        Map<TopicPartition, Long> ends = new HashMap<>();
                        for (TopicPartition partition : (Collection<TopicPartition>) args[0]) {
                            if (answered.containsKey(partition)) {
                                ends.put(partition, answered.get(partition));
                            }
                        }
                        yield ends;
                    }
                    case "seek" -> {
                        positions.put((TopicPartition) args[0], (Long) args[1]);
                        yield null;
                    }
                    case "poll" -> {
                        assignment.get().forEach(partition -> positions.put(partition, answered.get(partition)));
                        yield ConsumerRecords.empty();
                    }
                    case "position" -> positions.get((TopicPartition) args[0]);
                    case "paused" -> Set.of();
                    case "toString" -> "ScriptedConsumer";
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
    }

    private static long aSecondFromNow() {
        return System.nanoTime() + Duration.ofSeconds(1).toNanos();
    }

    @Test
    void aPartitionTheEndOffsetsLeaveOutIsNotReadToItsEnd() {
        Map<TopicPartition, Long> answered = new ConcurrentHashMap<>();
        Consumer<byte[], byte[]> consumer = consumer(answered);
        ReadToEnd read = new ReadToEnd(Map.of(P0, 3L, P1, 5L), Duration.ofSeconds(1));

        assertThat(read.slice(consumer, aSecondFromNow())).as("no end known").isFalse();
        assertThat(read.endsKnown()).isFalse();
        answered.put(P0, 3L);
        assertThat(read.slice(consumer, aSecondFromNow()))
                .as("the end of one partition of two known")
                .isFalse();
        assertThat(read.endsKnown()).isFalse();

        answered.put(P1, 7L);
        assertThat(read.slice(consumer, aSecondFromNow())).isTrue();
        assertThat(read.next(P0)).isEqualTo(3);
        assertThat(read.next(P1)).isEqualTo(7);
    }

    /** Kafka's consumer logs every seek at INFO: a reader already where it is to read from must not seek. */
    @Test
    void aReaderAlreadyAtTheOffsetIsNotSoughtAgainAndEveryOtherOneIs() {
        List<Long> seeks = new ArrayList<>();
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest") {
            @Override
            public synchronized void seek(TopicPartition partition, long offset) {
                seeks.add(offset);
                super.seek(partition, offset);
            }
        };
        reader.updateBeginningOffsets(Map.of(P0, 0L));
        reader.assign(Set.of(P0));

        ReadToEnd.seek(reader, P0, 5, false);
        assertThat(seeks).as("just assigned: sought whatever its position").containsExactly(5L);
        ReadToEnd.seek(reader, P0, 5, true);
        assertThat(seeks).as("already at 5").containsExactly(5L);
        ReadToEnd.seek(reader, P0, 9, true);
        assertThat(seeks).as("elsewhere").containsExactly(5L, 9L);
        assertThat(reader.position(P0)).isEqualTo(9);
    }

    /**
     * Kafka's consumer logs every assignment at INFO and a partition dropped from it loses
     * its position: reads of one partition, then another, then the first again assign each
     * partition once, keep the first where its read left it (no seek) and pause the other.
     */
    @Test
    void readsOfPartitionsInTurnAssignEachOnceAndKeepTheirPositions() {
        List<Set<TopicPartition>> assigns = new ArrayList<>();
        List<String> seeks = new ArrayList<>();
        MockConsumer<byte[], byte[]> reader = new MockConsumer<>("earliest") {
            @Override
            public synchronized void assign(Collection<TopicPartition> partitions) {
                assigns.add(Set.copyOf(partitions));
                super.assign(partitions);
            }

            @Override
            public synchronized void seek(TopicPartition partition, long offset) {
                seeks.add(partition + "@" + offset);
                super.seek(partition, offset);
            }
        };
        reader.updateBeginningOffsets(Map.of(P0, 0L, P1, 0L));
        reader.updateEndOffsets(Map.of(P0, 2L, P1, 1L));

        reader.schedulePollTask(() -> {
            reader.addRecord(record(P0, 0));
            reader.addRecord(record(P0, 1));
        });
        assertThat(readToEnd(reader, P0, 0).next(P0)).isEqualTo(2);
        reader.schedulePollTask(() -> reader.addRecord(record(P1, 0)));
        assertThat(readToEnd(reader, P1, 0).next(P1)).isEqualTo(1);
        reader.updateEndOffsets(Map.of(P0, 3L));
        reader.schedulePollTask(() -> reader.addRecord(record(P0, 2)));
        ReadToEnd again = readToEnd(reader, P0, 2);

        assertThat(again.records(P0)).extracting(raw -> raw.offset()).containsExactly(2L);
        assertThat(assigns)
                .as("each partition assigned once, the first kept")
                .containsExactly(Set.of(P0), Set.of(P0, P1));
        assertThat(seeks).as("no seek where the reader already is").containsExactly(P0 + "@0", P1 + "@0");
        assertThat(reader.paused()).as("the partition this read does not want").containsExactly(P1);
    }

    private static ConsumerRecord<byte[], byte[]> record(TopicPartition partition, long offset) {
        return new ConsumerRecord<>(partition.topic(), partition.partition(), offset, new byte[] {1}, new byte[] {2});
    }

    private static ReadToEnd readToEnd(Consumer<byte[], byte[]> reader, TopicPartition partition, long from) {
        ReadToEnd read = new ReadToEnd(Map.of(partition, from), Duration.ofSeconds(1));
        assertThat(read.slice(reader, aSecondFromNow()))
                .as("read to the end in one slice")
                .isTrue();
        return read;
    }
}
