package io.krabka.coordination.sample;

import java.time.Instant;

/**
 * One command to the device, as JSON in topic {@code sample-commands}.
 *
 * @param member the member that dispatched it
 * @param term the fencing token's term of the leadership it was sent under: one value
 *     for every command of a leadership, larger for every later leadership
 * @param seq 0, 1, 2, ... within one leadership
 * @param producerId the producer id of the leadership's token when it was sent
 * @param producerEpoch the producer epoch of the leadership's token when it was sent
 * @param sentAt when the dispatcher built it
 * @param requestId the id of the request this command answers; null for the periodic
 *     commands, which answer none. Request commands count {@code seq} on their own.
 */
public record Command(
        String member, long term, long seq, long producerId, short producerEpoch, Instant sentAt, String requestId) {

    /** A periodic command, which answers no request. */
    public static Command periodic(
            String member, long term, long seq, long producerId, short producerEpoch, Instant sentAt) {
        return new Command(member, term, seq, producerId, producerEpoch, sentAt, null);
    }
}
