package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
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
        return stamped(record, headers(role, token));
    }

    /**
     * {@link #stamp} for each of {@code records}, all with one role and token: the header
     * values are encoded once for the whole list, as a transaction's records share them.
     */
    public static <K, V> List<ProducerRecord<K, V>> stampAll(
            List<ProducerRecord<K, V>> records, Role role, FencingToken token) {
        Header[] stamp = headers(role, token);
        List<ProducerRecord<K, V>> stamped = new ArrayList<>(records.size());
        for (ProducerRecord<K, V> record : records) {
            stamped.add(stamped(record, stamp));
        }
        return stamped;
    }

    private static Header[] headers(Role role, FencingToken token) {
        return new Header[] {
            new RecordHeader(ROLE, role.utf8()),
            new RecordHeader(TERM, ascii(token.term())),
            new RecordHeader(PRODUCER_ID, ascii(token.producerId())),
            new RecordHeader(PRODUCER_EPOCH, ascii(token.producerEpoch()))
        };
    }

    /** A copy of {@code record} with {@code stamp} in place of its own headers of those names. */
    private static <K, V> ProducerRecord<K, V> stamped(ProducerRecord<K, V> record, Header[] stamp) {
        Header[] own = record.headers().toArray();
        RecordHeaders headers;
        if (own.length == 0) {
            // The usual case: no headers of the application's, so nothing to keep or replace.
            headers = new RecordHeaders(stamp);
        } else {
            headers = new RecordHeaders(own);
            for (Header header : stamp) {
                headers.remove(header.key());
            }
            for (Header header : stamp) {
                headers.add(header);
            }
        }
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
