package io.krabka.streams.coordination;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@code Leadership.send} groups concurrent sends into one guarded transaction
 * (group commit). A transaction starts when {@code maxRecords} sends wait, or
 * {@code linger} after the oldest waiting send arrived; sends that arrive while a
 * transaction commits wait for the next, so under load batches grow by themselves.
 *
 * @param maxRecords at most this many records per transaction
 * @param linger how long the oldest waiting send may wait for company before its
 *     transaction starts; zero starts at once
 */
public record SendBatching(int maxRecords, Duration linger) {

    /** 1 000 records, 2 ms: a batch waits about as long as one commit takes on a local broker. */
    public static final SendBatching DEFAULTS = new SendBatching(1_000, Duration.ofMillis(2));

    public SendBatching {
        Objects.requireNonNull(linger, "linger");
        if (maxRecords < 1) {
            throw new IllegalArgumentException("maxRecords must be at least 1, not " + maxRecords);
        }
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, not " + linger);
        }
    }
}
