package io.krabka.streams.coordination.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A {@code @KafkaListener} that runs only on the leader of a role, exactly once: while this
 * member holds {@link #role()}, the method receives the records of {@link #topics()} and
 * what it returns is written together with the input offsets in one guarded transaction
 * (a core {@link io.krabka.streams.coordination.pipeline.LeaderPipeline}). A deposed
 * leader's outputs and offsets are fenced by the broker; the next leader resumes from the
 * last committed offsets. So each input record's outputs are committed exactly once, as
 * {@code read_committed} readers see them, across kill -9, pauses, releases and broker
 * failovers.
 *
 * <p>The method takes one record or a batch, and optionally the
 * {@link io.krabka.streams.coordination.client.Leadership} (for its member and term):
 * <pre>{@code
 * @LeaderListener(role = "controller", topics = "requests")
 * ProducerRecord<String, Command> onRequest(ConsumerRecord<String, Request> request, Leadership leadership) { ... }
 *
 * @LeaderListener(role = "controller", topics = "requests")
 * List<ProducerRecord<String, Command>> onRequests(List<ConsumerRecord<String, Request>> requests) { ... }
 * }</pre>
 * It returns a {@code ProducerRecord}, a collection of them, or nothing ({@code void} or
 * {@code null}). Keys and values are read with the deserializers of
 * {@code spring.kafka.consumer.*} and written with the serializers of
 * {@code spring.kafka.producer.*}, as {@code @KafkaListener} and {@code KafkaTemplate} do.
 *
 * <p>A record that cannot be deserialized, or for which a one-record method throws (or
 * returns a record that cannot be serialized), is written to the dead-letter topic
 * {@code <topic>.DLT} in the same transaction, with Spring Kafka's {@code kafka_dlt-*}
 * headers, and logged: nothing is lost and one bad record does not stop the role. A batch
 * method that throws aborts its batch and ends the leadership (FAILED), as any
 * {@link OnLeadership} work that throws does. The dead-letter topic must exist.
 *
 * <p>The role must be one of {@code krabka.coordination.roles}. Attribute values may use
 * {@code ${...}} placeholders.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderListener {

    /** The role whose leadership runs this listener. */
    String role();

    /** The input topics; every partition of each is read. */
    String[] topics();

    /** The consumer group the input offsets are committed in; empty: {@code <role>-pipeline}. */
    String groupId() default "";

    /** At most this many input records per transaction; empty: 500. */
    String maxBatchRecords() default "";

    /** A transaction commits at most this long after its first input record arrived; empty: 20ms. */
    String maxBatchWait() default "";
}
