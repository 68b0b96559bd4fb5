package io.krabka.streams.coordination.transport;

import org.jspecify.annotations.Nullable;

/**
 * One committed record of {@code __coordination_state}, undecoded: the client decodes
 * it, so malformed bytes are counted in one place whatever the transport.
 *
 * @param offset the record's offset in its partition
 * @param timestamp the record's timestamp, in epoch milliseconds
 * @param key the key bytes (may be null or garbage: the partition is untrusted input)
 * @param value the value bytes, or null for a tombstone
 */
public record RawRecord(long offset, long timestamp, byte @Nullable [] key, byte @Nullable [] value) {}
