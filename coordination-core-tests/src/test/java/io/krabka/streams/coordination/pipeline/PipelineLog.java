package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.fencing.TokenHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The records of the pipeline tests: a request's value is its id; a command's value is
 * {@code requestId,member,term}. Reads the command log the way a device would.
 */
public final class PipelineLog {

    private PipelineLog() {}

    /**
     * One committed command, in log order. {@code stampedTerm}: the term in the record's
     * {@link TokenHeaders}, -1 without them.
     */
    public record Command(long offset, String requestId, String member, long term, long stampedTerm) {
        static Command parse(ConsumerRecord<String, String> record) {
            String[] fields = record.value().split(",", -1);
            long stamped = TokenHeaders.read(record.headers())
                    .map(stamp -> stamp.token().term())
                    .orElse(-1L);
            return new Command(record.offset(), fields[0], fields[1], Long.parseLong(fields[2]), stamped);
        }
    }

    /** The command a pipeline member writes for one request. */
    public static String command(String requestId, String member, long term) {
        return requestId + "," + member + "," + term;
    }

    /** A processor that writes one command per request to {@code output}. */
    public static BatchProcessor oneCommandPerRequest(String output) {
        return (batch, leadership) -> batch.stream()
                .map(request -> new ProducerRecord<byte[], byte[]>(
                        output,
                        0,
                        request.key(),
                        command(
                                        new String(request.value(), StandardCharsets.UTF_8),
                                        leadership.member().value(),
                                        leadership.term())
                                .getBytes(StandardCharsets.UTF_8)))
                .toList();
    }

    /** Produces requests {@code prefix0 .. prefix(count-1)}, keyed by id, acknowledged by all replicas. */
    public static void produceRequests(String bootstrapServers, String topic, String prefix, int from, int to) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class))) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, prefix + i, prefix + i));
            }
            producer.flush();
        }
    }

    /** A producer of requests (string keys and values), acknowledged by all replicas; the caller closes it. */
    public static KafkaProducer<String, String> requestProducer(String bootstrapServers) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                StringSerializer.class));
    }

    /**
     * Every committed command of partition 0 of {@code topic}, in log order, once every
     * transaction appended so far is decided. A commit returns before its markers are
     * written, and a read_committed reader stops at the last stable offset until they land:
     * reading only to the end it reports right after a commit misses that transaction's
     * outputs (a full build once saw 98 of 100 that way).
     */
    public static List<Command> committedCommands(String bootstrapServers, String topic) {
        return commands(bootstrapServers, topic, "read_committed");
    }

    /**
     * Every command written to partition 0 of {@code topic}, in log order, committed or
     * not: with the records of aborted transactions, which no device ever sees.
     */
    public static List<Command> writtenCommands(String bootstrapServers, String topic) {
        return commands(bootstrapServers, topic, "read_uncommitted");
    }

    private static List<Command> commands(String bootstrapServers, String topic, String isolation) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        settings.put(ConsumerConfig.CLIENT_ID_CONFIG, "device-" + UUID.randomUUID());
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<Command> commands = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(settings)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = highWatermark(bootstrapServers, partition);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumer.position(partition) < end) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("a " + isolation + " read of " + partition + " stayed at "
                            + consumer.position(partition) + " for 30 s, short of the high watermark " + end
                            + ": a transaction appended there is still undecided");
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    commands.add(Command.parse(record));
                }
            }
        }
        return commands;
    }

    /** The end of {@code partition} for a read_uncommitted reader: every record appended, decided or not. */
    private static long highWatermark(String bootstrapServers, TopicPartition partition) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(settings)) {
            return consumer.endOffsets(List.of(partition)).get(partition);
        }
    }
}
