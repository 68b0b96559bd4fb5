package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Leadership;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Typed guarded writes for one leadership, with the serializers of
 * {@code spring.kafka.producer.*} (or a {@link GuardedSenders} bean's own), the way a
 * {@code KafkaTemplate} user writes. Each write is a guarded transaction of the
 * leadership: durable in a quorum, and refused by the broker with
 * {@link io.krabka.streams.coordination.FencedException} once another member took the
 * role. Take it as a parameter of an {@link OnLeadership} method, or build one with
 * {@link GuardedSenders#of(Leadership)}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class GuardedSender<K, V> {

    private final Leadership leadership;
    private final Serializer<Object> keySerializer;
    private final Serializer<Object> valueSerializer;

    GuardedSender(Leadership leadership, Serializer<Object> keySerializer, Serializer<Object> valueSerializer) {
        this.leadership = Objects.requireNonNull(leadership, "leadership");
        this.keySerializer = keySerializer;
        this.valueSerializer = valueSerializer;
    }

    /** The leadership these writes are guarded by. */
    public Leadership leadership() {
        return leadership;
    }

    /** Writes one record and waits until it is committed. */
    public RecordMetadata send(String topic, K key, V value) {
        return send(new ProducerRecord<>(topic, key, value));
    }

    /** Writes one record and waits until it is committed. */
    public RecordMetadata send(ProducerRecord<K, V> record) {
        return leadership.write(serialize(record));
    }

    /** Writes these records in one transaction and waits until it is committed. */
    public List<RecordMetadata> sendAll(List<ProducerRecord<K, V>> records) {
        return leadership.write(records.stream().map(this::serialize).toList());
    }

    /**
     * Writes one record without waiting: concurrent sends share transactions (group
     * commit, {@code krabka.coordination.send.*}); the future completes when its
     * transaction committed, or fails as it failed.
     */
    public CompletableFuture<RecordMetadata> sendAsync(String topic, K key, V value) {
        return sendAsync(new ProducerRecord<>(topic, key, value));
    }

    /** As {@link #sendAsync(String, Object, Object)}. */
    public CompletableFuture<RecordMetadata> sendAsync(ProducerRecord<K, V> record) {
        ProducerRecord<byte[], byte[]> serialized;
        try {
            serialized = serialize(record);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return leadership.send(serialized);
    }

    private ProducerRecord<byte[], byte[]> serialize(ProducerRecord<K, V> record) {
        byte[] key = keySerializer.serialize(record.topic(), record.headers(), record.key());
        byte[] value = valueSerializer.serialize(record.topic(), record.headers(), record.value());
        return new ProducerRecord<>(
                record.topic(), record.partition(), record.timestamp(), key, value, record.headers());
    }
}
