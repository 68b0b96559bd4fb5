package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Leadership;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Serializer;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Makes {@link GuardedSender}s. The starter's bean uses the serializers of Spring Kafka's
 * producer factory ({@code spring.kafka.producer.key-serializer} and
 * {@code value-serializer}, or instances given to the factory); define a bean of this
 * type with serializers of your own to write with those instead.
 */
public final class GuardedSenders {

    private final Supplier<Serializer<Object>> keySerializer;
    private final Supplier<Serializer<Object>> valueSerializer;

    /** Senders that write with these serializers. */
    @SuppressWarnings("unchecked")
    public GuardedSenders(Serializer<?> keySerializer, Serializer<?> valueSerializer) {
        Serializer<Object> key = (Serializer<Object>) Objects.requireNonNull(keySerializer, "keySerializer");
        Serializer<Object> value = (Serializer<Object>) Objects.requireNonNull(valueSerializer, "valueSerializer");
        this.keySerializer = () -> key;
        this.valueSerializer = () -> value;
    }

    private GuardedSenders(Supplier<Serializer<Object>> keySerializer, Supplier<Serializer<Object>> valueSerializer) {
        this.keySerializer = keySerializer;
        this.valueSerializer = valueSerializer;
    }

    /**
     * Senders with the serializers of Spring Kafka's producer factory, resolved at the
     * first sender: an application that never takes one needs no serializer settings.
     */
    public static GuardedSenders of(ProducerFactory<?, ?> producers) {
        return new GuardedSenders(
                memoized(() -> PipelineSerdes.serializer(producers, true)),
                memoized(() -> PipelineSerdes.serializer(producers, false)));
    }

    /** A sender for {@code leadership}; typed as the caller needs (the serializers decide what fits). */
    public <K, V> GuardedSender<K, V> of(Leadership leadership) {
        return new GuardedSender<>(leadership, keySerializer.get(), valueSerializer.get());
    }

    private static <T> Supplier<T> memoized(Supplier<T> supplier) {
        AtomicReference<T> value = new AtomicReference<>();
        return () -> {
            T known = value.get();
            if (known == null) {
                value.compareAndSet(null, supplier.get());
                known = value.get();
            }
            return known;
        };
    }
}
