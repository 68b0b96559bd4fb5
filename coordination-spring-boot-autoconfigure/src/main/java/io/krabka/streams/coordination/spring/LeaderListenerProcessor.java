package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.pipeline.BatchProcessor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.util.ReflectionUtils;

/**
 * Adapts a {@link LeaderListener} method to the core's byte-level {@link BatchProcessor}:
 * deserializes the input, invokes the method, serializes what it returns, and sends what
 * cannot be processed to the dead-letter topic in the same transaction.
 */
final class LeaderListenerProcessor implements BatchProcessor {

    private static final Logger log = LoggerFactory.getLogger(LeaderListenerProcessor.class);

    /** Where a record that cannot be processed goes: Spring Kafka's default dead-letter name. */
    static final String DEAD_LETTER_SUFFIX = ".DLT";

    private final Object bean;
    private final Method method;
    private final boolean batch;
    private final boolean takesLeadership;
    private final String where;
    private final PipelineSerdes serdes;
    private final AtomicLong deadLettered = new AtomicLong();

    LeaderListenerProcessor(Object bean, Method method, boolean batch, boolean takesLeadership, String where,
            PipelineSerdes serdes) {
        this.bean = bean;
        this.method = method;
        this.batch = batch;
        this.takesLeadership = takesLeadership;
        this.where = where;
        this.serdes = serdes;
        ReflectionUtils.makeAccessible(method);
    }

    /** Input records this listener sent to a dead-letter topic. */
    long deadLettered() {
        return deadLettered.get();
    }

    @Override
    public List<ProducerRecord<byte[], byte[]>> process(List<ConsumerRecord<byte[], byte[]>> records, Leadership leadership)
            throws Exception {
        List<ProducerRecord<byte[], byte[]>> outputs = new ArrayList<>();
        List<ConsumerRecord<Object, Object>> readable = new ArrayList<>(records.size());
        for (ConsumerRecord<byte[], byte[]> record : records) {
            Optional<ConsumerRecord<Object, Object>> typed = deserialize(record, outputs);
            if (typed.isEmpty()) {
                continue;
            }
            if (batch) {
                readable.add(typed.get());
                continue;
            }
            try {
                serialize(invoke(typed.get(), leadership), outputs);
            } catch (ListenerFailure failure) {
                outputs.add(deadLetter(record, failure.getCause()));
            }
        }
        if (batch && !readable.isEmpty()) {
            try {
                serialize(invoke(readable, leadership), outputs);
            } catch (ListenerFailure failure) {
                throw failure.getCause() instanceof Exception e ? e : failure;
            }
        }
        return outputs;
    }

    private Optional<ConsumerRecord<Object, Object>> deserialize(ConsumerRecord<byte[], byte[]> record,
            List<ProducerRecord<byte[], byte[]>> outputs) {
        try {
            return Optional.of(serdes.deserialize(record));
        } catch (RuntimeException e) {
            outputs.add(deadLetter(record, e));
            return Optional.empty();
        }
    }

    private Object invoke(Object input, Leadership leadership) throws ListenerFailure {
        try {
            return takesLeadership ? method.invoke(bean, input, leadership) : method.invoke(bean, input);
        } catch (InvocationTargetException e) {
            throw new ListenerFailure(e.getCause());
        } catch (IllegalAccessException e) {
            throw new ListenerFailure(e);
        }
    }

    /** Adds the serialized outputs; a record that cannot be serialized fails like the method. */
    private void serialize(Object result, List<ProducerRecord<byte[], byte[]>> outputs) throws ListenerFailure {
        if (result == null) {
            return;
        }
        Collection<?> records = result instanceof Collection<?> many ? many : List.of(result);
        List<ProducerRecord<byte[], byte[]>> serialized = new ArrayList<>(records.size());
        try {
            for (Object record : records) {
                if (!(record instanceof ProducerRecord<?, ?> output)) {
                    throw new IllegalStateException(where + " returned a " + (record == null ? "null" : record.getClass().getName())
                            + " where a ProducerRecord was expected");
                }
                serialized.add(serdes.serialize(output));
            }
        } catch (RuntimeException e) {
            throw new ListenerFailure(e);
        }
        outputs.addAll(serialized);
    }

    /** The input record as it arrived, for {@code <topic>.DLT}, with what went wrong in Spring Kafka's headers. */
    private ProducerRecord<byte[], byte[]> deadLetter(ConsumerRecord<byte[], byte[]> record, Throwable failure) {
        deadLettered.incrementAndGet();
        String topic = record.topic() + DEAD_LETTER_SUFFIX;
        log.warn("{} could not process {}-{}@{}; it goes to {}: {}", where, record.topic(), record.partition(), record.offset(),
                topic, failure.toString());
        RecordHeaders headers = new RecordHeaders();
        for (Header header : record.headers()) {
            headers.add(header);
        }
        headers.add(KafkaHeaders.DLT_ORIGINAL_TOPIC, record.topic().getBytes(StandardCharsets.UTF_8));
        headers.add(KafkaHeaders.DLT_ORIGINAL_PARTITION, ByteBuffer.allocate(Integer.BYTES).putInt(record.partition()).array());
        headers.add(KafkaHeaders.DLT_ORIGINAL_OFFSET, ByteBuffer.allocate(Long.BYTES).putLong(record.offset()).array());
        headers.add(KafkaHeaders.DLT_EXCEPTION_FQCN, failure.getClass().getName().getBytes(StandardCharsets.UTF_8));
        headers.add(KafkaHeaders.DLT_EXCEPTION_MESSAGE,
                String.valueOf(failure.getMessage()).getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(topic, null, record.key(), record.value(), headers);
    }

    /** What the listener method (or serializing its result) threw. */
    private static final class ListenerFailure extends Exception {
        private static final long serialVersionUID = 1L;

        ListenerFailure(Throwable cause) {
            super(cause);
        }
    }
}
