package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** What the routing ITs' {@link LeaderOnly} handlers wrote: command id to "member@term", on a one-partition topic. */
final class HandledWrites {

    private HandledWrites() {}

    /** Every committed record of {@code topic}, in log order. */
    static List<ConsumerRecord<String, String>> read(KafkaTestCluster cluster, String topic) {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(settings)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    /** Every committed record of {@code topic}, by command id. */
    static Map<String, List<String>> byId(KafkaTestCluster cluster, String topic) {
        Map<String, List<String>> byId = new HashMap<>();
        read(cluster, topic)
                .forEach(r ->
                        byId.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value()));
        return byId;
    }
}
