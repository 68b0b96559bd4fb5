package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.pipeline.BatchProcessor;
import io.krabka.streams.coordination.pipeline.DeadLetters;
import io.krabka.streams.coordination.pipeline.PerRecordProcessor;
import java.io.InterruptedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InterruptException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.ReflectionUtils;

/**
 * Adapts a {@link LeaderListener} method to the core's byte-level {@link BatchProcessor}:
 * deserializes the input, invokes the method, serializes what it returns, and sends what
 * cannot be processed to the dead-letter topic in the same transaction. A one-record
 * method's outputs are told apart per input record ({@link PerRecordProcessor}), so a
 * record whose output the cluster refuses is found without calling the method again.
 *
 * <p>Between records it checks that the leadership lasts and the thread is not
 * interrupted, and a call that failed because the leadership ended (an interrupt, a fenced
 * write) stops the batch instead of sending its record to the dead-letter topic: the
 * pipeline drops the batch. Dead letters are logged by the pipeline once committed.
 */
final class LeaderListenerProcessor implements BatchProcessor {

    private static final Logger log = LoggerFactory.getLogger(LeaderListenerProcessor.class);

    /** Where a record that cannot be processed goes: Spring Kafka's default dead-letter name. */
    static final String DEAD_LETTER_SUFFIX = DeadLetters.SUFFIX;

    private final Object bean;
    private final Method method;
    private final boolean batch;
    private final boolean takesLeadership;
    private final String where;
    private final String group;
    private final PipelineSerdes serdes;

    LeaderListenerProcessor(
            Object bean,
            Method method,
            boolean batch,
            boolean takesLeadership,
            String where,
            String group,
            PipelineSerdes serdes) {
        this.bean = bean;
        this.method = method;
        this.batch = batch;
        this.takesLeadership = takesLeadership;
        this.where = where;
        this.group = group;
        this.serdes = serdes;
        ReflectionUtils.makeAccessible(method);
    }

    /** The processor a pipeline runs: per record for a one-record method, else this. */
    BatchProcessor forPipeline() {
        return batch ? this : (PerRecordProcessor) this::processEach;
    }

    @Override
    public List<ProducerRecord<byte[], byte[]>> process(
            List<ConsumerRecord<byte[], byte[]>> records, Leadership leadership) throws Exception {
        if (!batch) {
            return ((PerRecordProcessor) this::processEach).process(records, leadership);
        }
        List<ProducerRecord<byte[], byte[]>> outputs = new ArrayList<>();
        List<ConsumerRecord<Object, Object>> readable = new ArrayList<>(records.size());
        for (ConsumerRecord<byte[], byte[]> record : records) {
            Optional<ConsumerRecord<Object, Object>> typed = deserialize(record, outputs);
            typed.ifPresent(readable::add);
        }
        if (!readable.isEmpty()) {
            stopIfEnded(null, leadership, records.get(0));
            try {
                serialize(invoke(readable, leadership), outputs);
            } catch (ListenerFailure failure) {
                stopIfEnded(failure.failure(), leadership, records.get(0));
                throw failure.failure() instanceof Exception e ? e : failure;
            }
        }
        return outputs;
    }

    /** A one-record method's outputs, per input record: what it returned, or the record's dead letter. */
    List<List<ProducerRecord<byte[], byte[]>>> processEach(
            List<ConsumerRecord<byte[], byte[]>> records, Leadership leadership) throws Exception {
        List<List<ProducerRecord<byte[], byte[]>>> each = new ArrayList<>(records.size());
        for (ConsumerRecord<byte[], byte[]> record : records) {
            stopIfEnded(null, leadership, record);
            List<ProducerRecord<byte[], byte[]>> outputs = new ArrayList<>(1);
            Optional<ConsumerRecord<Object, Object>> typed = deserialize(record, outputs);
            if (typed.isPresent()) {
                try {
                    serialize(invoke(typed.get(), leadership), outputs);
                } catch (ListenerFailure failure) {
                    stopIfEnded(failure.failure(), leadership, record);
                    outputs.add(deadLetter(record, failure.failure()));
                }
            }
            each.add(outputs);
        }
        return each;
    }

    /**
     * Throws when the work is to stop: the thread was interrupted, or {@code failure} is one
     * (an interrupt the method caught and threw as its own), or the leadership ended. The
     * interrupt is kept.
     */
    private void stopIfEnded(@Nullable Throwable failure, Leadership leadership, ConsumerRecord<byte[], byte[]> record)
            throws InterruptedException {
        boolean interrupted = Thread.currentThread().isInterrupted()
                || failure instanceof InterruptedException
                || failure instanceof InterruptedIOException
                || failure instanceof InterruptException;
        if (interrupted) {
            Thread.currentThread().interrupt();
            InterruptedException stop = new InterruptedException(where + " was interrupted at " + record.topic() + "-"
                    + record.partition() + "@" + record.offset() + ": its leadership is ending");
            if (failure != null) {
                stop.initCause(failure);
            }
            throw stop;
        }
        if (!leadership.isActive()) {
            throw FencedException.ended(
                    where + " stopped at " + record.topic() + "-" + record.partition() + "@" + record.offset()
                            + ": its leadership of role " + leadership.role() + " ended",
                    failure,
                    leadership.state().endCause().orElse(LeadershipEndCause.FENCED));
        }
    }

    private Optional<ConsumerRecord<Object, Object>> deserialize(
            ConsumerRecord<byte[], byte[]> record, List<ProducerRecord<byte[], byte[]>> outputs) {
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
            throw new ListenerFailure(e.getTargetException() != null ? e.getTargetException() : e);
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
                    throw new IllegalStateException(where + " returned a "
                            + (record == null ? "null" : record.getClass().getName())
                            + " where a ProducerRecord was expected");
                }
                serialized.add(serdes.serialize(output));
            }
        } catch (RuntimeException e) {
            throw new ListenerFailure(e);
        }
        outputs.addAll(serialized);
    }

    /**
     * The input record as it arrived, for {@code <topic>.DLT}, with what went wrong in Spring
     * Kafka's headers. Written with the batch, and logged by the pipeline once committed:
     * a batch that is fenced writes no dead letter, and none is claimed.
     */
    private ProducerRecord<byte[], byte[]> deadLetter(ConsumerRecord<byte[], byte[]> record, Throwable failure) {
        log.debug(
                "{} could not process {}-{}@{}; its dead letter goes with the batch: {}",
                where,
                record.topic(),
                record.partition(),
                record.offset(),
                failure.toString());
        return DeadLetters.of(record, group, failure);
    }

    /** What the listener method (or serializing its result) threw. */
    private static final class ListenerFailure extends Exception {
        private static final long serialVersionUID = 1L;

        private final Throwable failure;

        ListenerFailure(Throwable failure) {
            super(failure);
            this.failure = failure;
        }

        /** What the listener threw: never null, unlike {@link #getCause()} in general. */
        Throwable failure() {
            return failure;
        }
    }
}
