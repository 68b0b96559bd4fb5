package io.krabka.streams.coordination.spring;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Utils;
import org.springframework.core.log.LogAccessor;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.SerializationUtils;

/**
 * The deserializers and serializers of {@link LeaderListener} methods: those of Spring
 * Kafka's consumer and producer factories (instances given to the factories, else the
 * classes of {@code spring.kafka.consumer.*} and {@code spring.kafka.producer.*}).
 */
public record PipelineSerdes(
        Deserializer<Object> keyDeserializer,
        Deserializer<Object> valueDeserializer,
        Serializer<Object> keySerializer,
        Serializer<Object> valueSerializer) {

    private static final LogAccessor LOG = new LogAccessor(PipelineSerdes.class);

    /** The (de)serializers of Spring Kafka's factories, each configured with its factory's settings. */
    @SuppressWarnings("unchecked")
    public static PipelineSerdes of(ConsumerFactory<?, ?> consumers, ProducerFactory<?, ?> producers) {
        Map<String, Object> consumerSettings = consumers.getConfigurationProperties();
        return new PipelineSerdes(
                Optional.ofNullable((Deserializer<Object>) consumers.getKeyDeserializer())
                        .orElseGet(() -> configured(
                                consumerSettings,
                                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                                Deserializer.class,
                                true)),
                Optional.ofNullable((Deserializer<Object>) consumers.getValueDeserializer())
                        .orElseGet(() -> configured(
                                consumerSettings,
                                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                                Deserializer.class,
                                false)),
                serializer(producers, true),
                serializer(producers, false));
    }

    /** The key or value serializer of Spring Kafka's producer factory: the instance given to it, else the configured class. */
    @SuppressWarnings("unchecked")
    static Serializer<Object> serializer(ProducerFactory<?, ?> producers, boolean isKey) {
        Serializer<Object> given =
                (Serializer<Object>) (isKey ? producers.getKeySerializer() : producers.getValueSerializer());
        return given != null
                ? given
                : configured(
                        producers.getConfigurationProperties(),
                        isKey
                                ? ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG
                                : ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                        Serializer.class,
                        isKey);
    }

    /** An instance of the class a setting names, configured with the factory's settings. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <T> T configured(Map<String, Object> settings, String name, Class<T> type, boolean isKey) {
        Object value = settings.get(name);
        try {
            Object instance;
            if (value instanceof Class<?> clazz) {
                instance = Utils.newInstance(clazz);
            } else if (value instanceof String className) {
                instance = Utils.newInstance(className, type);
            } else if (type.isInstance(value)) {
                return (T) value;
            } else {
                throw new ConfigException(
                        name,
                        value,
                        "names no " + type.getSimpleName()
                                + ": set spring.kafka.consumer/producer key and value (de)serializers");
            }
            if (!type.isInstance(instance)) {
                throw new ConfigException(name, value, "is not a " + type.getName());
            }
            if (instance instanceof Deserializer deserializer) {
                deserializer.configure(settings, isKey);
            } else if (instance instanceof Serializer serializer) {
                serializer.configure(settings, isKey);
            }
            return (T) instance;
        } catch (ClassNotFoundException | KafkaException e) {
            throw new ConfigException(name, value, "cannot be instantiated for @LeaderListener: " + e.getMessage());
        }
    }

    /**
     * The record with its key and value deserialized; all else as it was. The deserializers
     * get a copy of its headers, so what they add (Spring Kafka's
     * {@code ErrorHandlingDeserializer} adds its failure) stays off the record itself and
     * off its dead letter.
     *
     * @throws DeserializationException when the key or value cannot be deserialized, also
     *     when an {@code ErrorHandlingDeserializer} reports that in a header instead of throwing
     */
    public ConsumerRecord<Object, Object> deserialize(ConsumerRecord<byte[], byte[]> record) {
        Headers headers = new RecordHeaders(record.headers().toArray());
        Object key = keyDeserializer.deserialize(record.topic(), headers, record.key());
        Object value = valueDeserializer.deserialize(record.topic(), headers, record.value());
        ConsumerRecord<Object, Object> typed = new ConsumerRecord<>(
                record.topic(),
                record.partition(),
                record.offset(),
                record.timestamp(),
                record.timestampType(),
                record.serializedKeySize(),
                record.serializedValueSize(),
                key,
                value,
                headers,
                record.leaderEpoch());
        for (String header :
                List.of(KafkaUtils.KEY_DESERIALIZER_EXCEPTION_HEADER, KafkaUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER)) {
            // Only a header the deserializer added counts: one that came with the record is
            // data, and Spring Kafka ignores it (a possible attack) with a warning.
            if (headers.lastHeader(header) != null
                    && headers.lastHeader(header) != record.headers().lastHeader(header)) {
                DeserializationException failure = SerializationUtils.getExceptionFromHeader(typed, header, LOG);
                if (failure != null) {
                    throw failure;
                }
            }
        }
        return typed;
    }

    /** The record with its key and value serialized; all else as it was. */
    @SuppressWarnings("unchecked")
    public ProducerRecord<byte[], byte[]> serialize(ProducerRecord<?, ?> record) {
        ProducerRecord<Object, Object> typed = (ProducerRecord<Object, Object>) record;
        byte[] key = keySerializer.serialize(typed.topic(), typed.headers(), typed.key());
        byte[] value = valueSerializer.serialize(typed.topic(), typed.headers(), typed.value());
        return new ProducerRecord<>(typed.topic(), typed.partition(), typed.timestamp(), key, value, typed.headers());
    }
}
