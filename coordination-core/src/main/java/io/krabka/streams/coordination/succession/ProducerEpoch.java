package io.krabka.streams.coordination.succession;

/**
 * A producer id and epoch as a lease record carries them.
 *
 * @param producerId the producer id
 * @param epoch the producer epoch
 */
public record ProducerEpoch(long producerId, short epoch) {}
