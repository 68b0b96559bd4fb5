package io.krabka.streams.coordination;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@code Leadership.send} groups concurrent sends into one guarded transaction
 * (group commit), and how many sends it lets wait. A transaction starts when
 * {@code maxRecords} sends wait, or {@code linger} after the oldest waiting send
 * arrived; sends that arrive while a transaction commits wait for the next, so under
 * load batches grow by themselves.
 *
 * <p>Sends are bounded the way Kafka's producer bounds its buffer ({@code buffer.memory}
 * and {@code max.block.ms}): while {@code maxQueuedRecords} records of a leadership are
 * accepted and not yet written, a further {@code send} blocks its caller for up to
 * {@code maxBlock}, then fails at once with {@link SendQueueFullException}, having
 * written nothing. A send from a send's completion callback never blocks (the thread
 * that would free room is the caller): it fails at once when there is no room.
 *
 * @param maxRecords at most this many records per transaction
 * @param linger how long the oldest waiting send may wait for company before its
 *     transaction starts; zero starts at once
 * @param maxQueuedRecords at most this many records per leadership accepted and not yet
 *     written (waiting, or in the transaction under way); below {@code maxRecords} it also
 *     caps the batches
 * @param maxBlock how long a send may block while {@code maxQueuedRecords} are waiting;
 *     zero fails at once
 */
public record SendBatching(int maxRecords, Duration linger, int maxQueuedRecords, Duration maxBlock) {

    /** At most this many records accepted and not yet written, by default: ten full batches. */
    public static final int DEFAULT_MAX_QUEUED_RECORDS = 10_000;
    /** How long a send blocks while the queue is full, by default: Kafka's {@code max.block.ms}. */
    public static final Duration DEFAULT_MAX_BLOCK = Duration.ofSeconds(60);

    /**
     * 1 000 records, 2 ms: a batch waits about as long as one commit takes on a local
     * broker; 10 000 records queued, 60 s blocked at most.
     */
    public static final SendBatching DEFAULTS = new SendBatching(1_000, Duration.ofMillis(2));

    public SendBatching {
        Objects.requireNonNull(linger, "linger");
        Objects.requireNonNull(maxBlock, "maxBlock");
        if (maxRecords < 1) {
            throw new IllegalArgumentException("maxRecords must be at least 1, not " + maxRecords);
        }
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, not " + linger);
        }
        if (maxQueuedRecords < 1) {
            throw new IllegalArgumentException("maxQueuedRecords must be at least 1, not " + maxQueuedRecords);
        }
        if (maxBlock.isNegative()) {
            throw new IllegalArgumentException("maxBlock must not be negative, not " + maxBlock);
        }
    }

    /** Batches as given, with the default bound on queued sends ({@link #DEFAULT_MAX_QUEUED_RECORDS}, {@link #DEFAULT_MAX_BLOCK}). */
    public SendBatching(int maxRecords, Duration linger) {
        this(maxRecords, linger, DEFAULT_MAX_QUEUED_RECORDS, DEFAULT_MAX_BLOCK);
    }
}
