package io.krabka.streams.coordination.pipeline;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Dead letters: an input record a pipeline could not turn into outputs, written as it
 * arrived (key, value, headers) to {@code <input topic>.DLT}, with Spring Kafka's
 * {@code kafka_dlt-*} headers saying where it came from and why, so Spring Kafka's
 * dead-letter tooling reads it as one of its own.
 */
public final class DeadLetters {

    /** The dead-letter topic of an input topic is its name plus this: Spring Kafka's default. */
    public static final String SUFFIX = ".DLT";
    /** The input topic, UTF-8. */
    public static final String ORIGINAL_TOPIC = "kafka_dlt-original-topic";
    /** The input partition, a 4-byte big-endian int. */
    public static final String ORIGINAL_PARTITION = "kafka_dlt-original-partition";
    /** The input offset, an 8-byte big-endian long. */
    public static final String ORIGINAL_OFFSET = "kafka_dlt-original-offset";
    /** The group the pipeline commits its input offsets in, UTF-8. */
    public static final String ORIGINAL_CONSUMER_GROUP = "kafka_dlt-original-consumer-group";
    /** The class of the failure, UTF-8. */
    public static final String EXCEPTION_FQCN = "kafka_dlt-exception-fqcn";
    /** The failure's message (with its cause's, where the message does not say it), UTF-8. */
    public static final String EXCEPTION_MESSAGE = "kafka_dlt-exception-message";

    private DeadLetters() {}

    /** The dead-letter topic of {@code inputTopic}. */
    public static String topicOf(String inputTopic) {
        return inputTopic + SUFFIX;
    }

    /**
     * {@code record} as it arrived, for its dead-letter topic, with what went wrong in the
     * {@code kafka_dlt-*} headers.
     *
     * @param group the pipeline's group, or null when there is none to name
     */
    public static ProducerRecord<byte[], byte[]> of(
            ConsumerRecord<byte[], byte[]> record, @Nullable String group, Throwable failure) {
        RecordHeaders headers = new RecordHeaders();
        for (Header header : record.headers()) {
            headers.add(header);
        }
        headers.add(ORIGINAL_TOPIC, utf8(record.topic()));
        headers.add(
                ORIGINAL_PARTITION,
                ByteBuffer.allocate(Integer.BYTES).putInt(record.partition()).array());
        headers.add(
                ORIGINAL_OFFSET,
                ByteBuffer.allocate(Long.BYTES).putLong(record.offset()).array());
        if (group != null) {
            headers.add(ORIGINAL_CONSUMER_GROUP, utf8(group));
        }
        headers.add(EXCEPTION_FQCN, utf8(failure.getClass().getName()));
        headers.add(EXCEPTION_MESSAGE, utf8(reason(failure)));
        return new ProducerRecord<>(topicOf(record.topic()), null, record.key(), record.value(), headers);
    }

    /** Whether {@code output} is a dead letter: written to a dead-letter topic, naming the record it stands for. */
    static boolean isDeadLetter(ProducerRecord<byte[], byte[]> output) {
        Header topic = output.headers().lastHeader(ORIGINAL_TOPIC);
        return topic != null
                && output.headers().lastHeader(ORIGINAL_OFFSET) != null
                && output.topic().equals(topicOf(new String(topic.value(), StandardCharsets.UTF_8)));
    }

    /** Where a dead letter came from and why, for a log line: {@code requests-0@42: <class>: <message>}. */
    static String describe(ProducerRecord<byte[], byte[]> deadLetter) {
        Headers headers = deadLetter.headers();
        return text(headers, ORIGINAL_TOPIC) + "-"
                + ByteBuffer.wrap(headers.lastHeader(ORIGINAL_PARTITION).value())
                        .getInt()
                + "@"
                + ByteBuffer.wrap(headers.lastHeader(ORIGINAL_OFFSET).value()).getLong() + " ("
                + text(headers, EXCEPTION_FQCN)
                + ": " + text(headers, EXCEPTION_MESSAGE) + ")";
    }

    /** The failure's message, followed by its cause's where the message does not already say it. */
    static String reason(Throwable failure) {
        String message = String.valueOf(failure.getMessage());
        Throwable cause = failure.getCause();
        if (cause != null && cause != failure && !message.contains(String.valueOf(cause.getMessage()))) {
            message = message + ": " + cause;
        }
        return message;
    }

    private static String text(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        return header == null ? "?" : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
