package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The headers every guarded write carries (a leadership's {@code write} and {@code send},
 * the starter's {@code GuardedSender}, a leader pipeline's outputs and dead letters): the
 * role and the writer's {@link FencingToken}, so whoever consumes the records can refuse
 * those of a deposed leader ({@link TermGate}).
 *
 * <p>The names are stable, part of the public contract like the record format. Each value
 * is UTF-8 text (a decimal number but for the role), readable from any language and in
 * {@code kafka-console-consumer --property print.headers=true}:
 * <ul>
 * <li>{@value #ROLE}: the role name;</li>
 * <li>{@value #TERM}: the term of the leadership that wrote the record, the one field to
 *     compare (terms grow with every grant; see {@link FencingToken});</li>
 * <li>{@value #PRODUCER_ID} and {@value #PRODUCER_EPOCH}: the producer id and epoch of the
 *     transaction's lease record, for tracing only (under transaction version 2 the
 *     epoch moves on every transaction, and producer ids are not ordered).</li>
 * </ul>
 * A guarded write replaces any headers of these names the application set, and keeps all
 * others.
 */
public final class TokenHeaders {

    /** The role name. */
    public static final String ROLE = "krabka-role";
    /** The term of the leadership that wrote the record. */
    public static final String TERM = "krabka-term";
    /** The producer id of the writing transaction. */
    public static final String PRODUCER_ID = "krabka-producer-id";
    /** The producer epoch of the writing transaction (its lease record's). */
    public static final String PRODUCER_EPOCH = "krabka-producer-epoch";

    private TokenHeaders() {}

    /**
     * The role and token a guarded write stamped on a record.
     *
     * @param role the role whose leader wrote the record
     * @param token the writer's term, producer id and epoch
     */
    public record Stamp(Role role, FencingToken token) {

        public Stamp {
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(token, "token");
        }
    }

    /**
     * A copy of {@code record} that carries {@code role} and {@code token} in the headers
     * above, in place of any it had of those names; the record itself is left as it is.
     */
    public static <K, V> ProducerRecord<K, V> stamp(ProducerRecord<K, V> record, Role role, FencingToken token) {
        RecordHeaders headers = new RecordHeaders(record.headers().toArray());
        for (String name : new String[] {ROLE, TERM, PRODUCER_ID, PRODUCER_EPOCH}) {
            headers.remove(name);
        }
        headers.add(ROLE, role.utf8());
        headers.add(TERM, ascii(token.term()));
        headers.add(PRODUCER_ID, ascii(token.producerId()));
        headers.add(PRODUCER_EPOCH, ascii(token.producerEpoch()));
        return new ProducerRecord<>(
                record.topic(), record.partition(), record.timestamp(), record.key(), record.value(), headers);
    }

    /**
     * The stamp on a consumed record's headers; empty when it has none (the record was not
     * written by a guarded write).
     *
     * @throws MalformedStampException when the headers are there but do not parse, or only
     *     some of them are: a record no guarded write produced
     */
    public static Optional<Stamp> read(Headers headers) {
        Header role = headers.lastHeader(ROLE);
        Header term = headers.lastHeader(TERM);
        Header producerId = headers.lastHeader(PRODUCER_ID);
        Header producerEpoch = headers.lastHeader(PRODUCER_EPOCH);
        if (role == null && term == null && producerId == null && producerEpoch == null) {
            return Optional.empty();
        }
        for (Header header : new Header[] {role, term, producerId, producerEpoch}) {
            if (header == null || header.value() == null) {
                throw new MalformedStampException("the record has some of the headers " + ROLE + ", " + TERM + ", "
                        + PRODUCER_ID + " and " + PRODUCER_EPOCH + " but not all: no guarded write stamped it");
            }
        }
        Role parsedRole;
        try {
            parsedRole = Role.of(new String(role.value(), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new MalformedStampException("header " + ROLE + " is no role name: " + e.getMessage());
        }
        long parsedEpoch = number(producerEpoch);
        if (parsedEpoch > Short.MAX_VALUE) {
            throw new MalformedStampException(
                    "header " + PRODUCER_EPOCH + " is " + parsedEpoch + ", beyond any producer epoch");
        }
        try {
            return Optional.of(
                    new Stamp(parsedRole, FencingToken.of(number(term), number(producerId), (short) parsedEpoch)));
        } catch (IllegalArgumentException e) {
            throw new MalformedStampException("the stamp's headers name no minted token: " + e.getMessage());
        }
    }

    private static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static long number(Header header) {
        String text = new String(header.value(), StandardCharsets.UTF_8);
        // Digits only: Long.parseLong would take a sign, which no guarded write writes.
        if (text.isEmpty() || text.length() > 19 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new MalformedStampException("header " + header.key() + " is \"" + text + "\", not a decimal number");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new MalformedStampException(
                    "header " + header.key() + " is \"" + text + "\", beyond a 64-bit number");
        }
    }
}
