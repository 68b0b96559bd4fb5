package io.krabka.coordination.chaos.harness;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The leader pipeline's client: a plain idempotent producer ({@code acks=all}) that sends
 * requests {@code r0, r1, ...} at a fixed rate to the request topic, round-robin over its
 * partitions, and keeps sending through the faults. Each request's key and value are its
 * id. It reaches the brokers directly, not through a member's proxy: it is not a member,
 * so cutting a member leaves it alone, while a broker kill hits it like any client.
 *
 * <p>It records every id it sent, before the send (so an id it never sent can never be
 * in the topic), and every id whose write was acknowledged. A send that failed may still
 * have been written (the acknowledgement, not the write, may be what was lost): such a
 * request may be processed, but at most once.
 */
final class RequestProducer implements AutoCloseable {

    private final KafkaProducer<byte[], byte[]> producer;
    private final String topic;
    private final int partitions;
    private final Duration interval;
    private final ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "request-producer");
        thread.setDaemon(true);
        return thread;
    });
    private final Set<String> sent = ConcurrentHashMap.newKeySet();
    private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private long next;

    RequestProducer(String bootstrapServers, String topic, int partitions, Duration interval) {
        this.topic = topic;
        this.partitions = partitions;
        this.interval = interval;
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                true,
                ProducerConfig.LINGER_MS_CONFIG,
                0,
                // A broker kill moves partition leaders within seconds; a send still unanswered
                // after this long counts as failed (it may have been written all the same).
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
                5000,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                30000,
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                5000,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class));
    }

    void start() {
        sender.scheduleAtFixedRate(this::sendNext, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void sendNext() {
        long n = next++;
        String id = "r" + n;
        byte[] bytes = id.getBytes(StandardCharsets.UTF_8);
        sent.add(id);
        try {
            producer.send(new ProducerRecord<>(topic, (int) (n % partitions), bytes, bytes), (metadata, error) -> {
                if (error == null) {
                    acknowledged.add(id);
                } else {
                    failed(id, error);
                }
            });
        } catch (RuntimeException e) {
            // A send that could not even be handed over (no metadata within max.block.ms): never written.
            failed(id, e);
        }
    }

    private void failed(String id, Exception error) {
        failed.incrementAndGet();
        firstFailure.compareAndSet(null, id + ": " + error);
    }

    /**
     * Stops sending and waits until every send was answered, acknowledged or failed (at
     * most the delivery timeout).
     */
    void stop() throws InterruptedException {
        sender.shutdown();
        if (!sender.awaitTermination(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the request producer did not stop sending within 30 s");
        }
        producer.flush();
    }

    /** Every request id sent (or tried). */
    Set<String> sent() {
        return Set.copyOf(sent);
    }

    /** The request ids whose write was acknowledged by all in-sync replicas. */
    Set<String> acknowledged() {
        return Set.copyOf(acknowledged);
    }

    /** How many sends failed (once {@link #stop} returned, every send was answered). */
    long failed() {
        return failed.get();
    }

    /** The first failure, for the report; empty when none. */
    String firstFailure() {
        String first = firstFailure.get();
        return first == null ? "" : first;
    }

    @Override
    public void close() {
        sender.shutdownNow();
        producer.close(Duration.ofSeconds(5));
    }
}
