package io.krabka.streams.coordination.record;

import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.INVALID_NAME;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.MALFORMED_UTF8;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.NEGATIVE_LENGTH;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.NEGATIVE_TOKEN;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.TRAILING_BYTES;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.TRUNCATED;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.UNKNOWN_KIND;
import static io.krabka.streams.coordination.record.MalformedRecordException.Problem.UNSUPPORTED_VERSION;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationRecord.Lease;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The frozen byte layouts of {@code __coordination_state}. The same bytes are written
 * and read by krabka-client-rs and krabka-streams-go; {@code golden-vectors/} holds the
 * cases all three assert.
 *
 * <p>Every integer is big-endian and signed. A {@code string} is an i16 byte length
 * followed by that many bytes of standard UTF-8 (Kafka's native string layout, not
 * Java's modified UTF-8).
 *
 * <pre>
 * key:
 *   version         i16 = 0
 *   kind            i16      0 registration, 1 lease
 *   role            string
 *   member          string   the member id for kind 0, the empty string for kind 1
 *
 * registration value:
 *   version         i16 = 0
 *   member          string
 *   registered_at   i64      epoch milliseconds
 *
 * lease value:
 *   version         i16 = 0
 *   member          string
 *   producer_id     i64
 *   producer_epoch  i16
 *   granted_at      i64      epoch milliseconds
 *   deadline        i64      epoch milliseconds
 * </pre>
 *
 * A null value is a tombstone: of a registration key, it deregisters the member; of a
 * lease key, it clears the role's lease.
 *
 * <p>Decoding reads left to right and reports the first problem it meets as a
 * {@link MalformedRecordException}; it never throws anything else, and it never
 * allocates more than the input's size, whatever a length field claims.
 */
public final class CoordinationCodec {

    /** The compacted internal topic that holds every role's registrations and lease. */
    public static final String COORDINATION_STATE_TOPIC = "__coordination_state";

    /** The only key and value version this codec writes and reads. */
    public static final short VERSION = 0;

    private CoordinationCodec() {}

    /** Encodes a key. */
    public static byte[] encodeKey(CoordinationKey key) {
        Objects.requireNonNull(key, "key");
        Writer out = new Writer();
        out.writeShort(VERSION);
        out.writeShort(key.kind().code());
        out.writeString(key.role().name());
        out.writeString(key.member() == null ? "" : key.member().value());
        return out.toByteArray();
    }

    /** Encodes a value. A tombstone is not encoded: it is a null value. */
    public static byte[] encodeValue(CoordinationRecord record) {
        Objects.requireNonNull(record, "record");
        Writer out = new Writer();
        out.writeShort(VERSION);
        out.writeString(record.member().value());
        if (record instanceof Registration registration) {
            out.writeLong(registration.registeredAt());
        } else if (record instanceof Lease lease) {
            out.writeLong(lease.producerId());
            out.writeShort(lease.producerEpoch());
            out.writeLong(lease.grantedAt());
            out.writeLong(lease.deadline());
        }
        return out.toByteArray();
    }

    /**
     * Decodes a key.
     *
     * @throws MalformedRecordException the first problem met reading left to right
     */
    public static CoordinationKey decodeKey(byte @Nullable [] bytes) {
        Reader in = new Reader(bytes, "key");
        in.readVersion();
        short kindCode = in.readShort("kind");
        RecordKind kind;
        if (kindCode == RecordKind.REGISTRATION.code()) {
            kind = RecordKind.REGISTRATION;
        } else if (kindCode == RecordKind.LEASE.code()) {
            kind = RecordKind.LEASE;
        } else {
            throw new MalformedRecordException(
                    UNKNOWN_KIND, "key kind " + kindCode + " is neither 0 (registration) nor 1 (lease)");
        }
        Role role = in.readName("role", Role::of);
        CoordinationKey key;
        if (kind == RecordKind.REGISTRATION) {
            key = CoordinationKey.registration(role, in.readName("member", MemberId::of));
        } else {
            String member = in.readString("member");
            if (!member.isEmpty()) {
                throw new MalformedRecordException(
                        INVALID_NAME, "a lease key's member must be empty, but is \"" + member + '"');
            }
            key = CoordinationKey.lease(role);
        }
        in.requireEnd();
        return key;
    }

    /**
     * Decodes the value stored under a key of {@code kind}.
     *
     * @param value the value bytes, or {@code null} for a tombstone
     * @return the record, or empty for a tombstone
     * @throws MalformedRecordException the first problem met reading left to right
     */
    public static Optional<CoordinationRecord> decodeValue(RecordKind kind, byte @Nullable [] value) {
        Objects.requireNonNull(kind, "kind");
        if (value == null) {
            return Optional.empty();
        }
        Reader in = new Reader(value, kind == RecordKind.REGISTRATION ? "registration value" : "lease value");
        in.readVersion();
        MemberId member = in.readName("member", MemberId::of);
        CoordinationRecord record;
        if (kind == RecordKind.REGISTRATION) {
            record = new Registration(member, in.readLong("registered_at"));
        } else {
            long producerId = in.readLong("producer_id");
            if (producerId < 0) {
                throw new MalformedRecordException(NEGATIVE_TOKEN, "lease producer_id is " + producerId);
            }
            short producerEpoch = in.readShort("producer_epoch");
            if (producerEpoch < 0) {
                throw new MalformedRecordException(NEGATIVE_TOKEN, "lease producer_epoch is " + producerEpoch);
            }
            record = new Lease(member, producerId, producerEpoch, in.readLong("granted_at"), in.readLong("deadline"));
        }
        in.requireEnd();
        return Optional.of(record);
    }

    /** Big-endian writer of the layouts above. */
    private static final class Writer {

        private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

        void writeShort(int value) {
            out.write(value >>> 8);
            out.write(value);
        }

        void writeLong(long value) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                out.write((int) (value >>> shift));
            }
        }

        void writeString(String value) {
            // Valid names are at most 255 UTF-8 bytes and have no lone surrogates,
            // so the length always fits the i16 and getBytes loses nothing.
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            writeShort(utf8.length);
            out.write(utf8, 0, utf8.length);
        }

        byte[] toByteArray() {
            return out.toByteArray();
        }
    }

    /** Bounds-checked big-endian reader that turns every problem into a {@link MalformedRecordException}. */
    private static final class Reader {

        private final ByteBuffer buffer;
        private final String part;

        Reader(byte @Nullable [] bytes, String part) {
            if (bytes == null) {
                throw new MalformedRecordException(TRUNCATED, part + " is null");
            }
            this.buffer = ByteBuffer.wrap(bytes);
            this.part = part;
        }

        void readVersion() {
            short version = readShort("version");
            if (version != VERSION) {
                throw new MalformedRecordException(
                        UNSUPPORTED_VERSION, part + " version " + version + " is not " + VERSION);
            }
        }

        short readShort(String field) {
            require(Short.BYTES, field);
            return buffer.getShort();
        }

        long readLong(String field) {
            require(Long.BYTES, field);
            return buffer.getLong();
        }

        String readString(String field) {
            short length = readShort(field + " length");
            if (length < 0) {
                throw new MalformedRecordException(NEGATIVE_LENGTH, part + " " + field + " length is " + length);
            }
            require(length, field);
            int start = buffer.position();
            if (buffer.hasArray() && isAscii(buffer.array(), buffer.arrayOffset() + start, length)) {
                // ASCII is valid UTF-8 and decodes to the same chars, so the decoder below could
                // neither fail nor read it otherwise; it was most of the cost of decoding a key.
                buffer.position(start + length);
                return new String(buffer.array(), buffer.arrayOffset() + start, length, StandardCharsets.US_ASCII);
            }
            ByteBuffer slice = buffer.slice();
            slice.limit(length);
            buffer.position(start + length);
            // A fresh decoder set to REPORT: the default String constructor would replace bad bytes with U+FFFD.
            CharsetDecoder decoder = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT);
            try {
                CharBuffer chars = decoder.decode(slice);
                return chars.toString();
            } catch (CharacterCodingException e) {
                throw new MalformedRecordException(MALFORMED_UTF8, part + " " + field + " is not valid UTF-8");
            }
        }

        private static boolean isAscii(byte[] bytes, int from, int length) {
            for (int i = from, end = from + length; i < end; i++) {
                if (bytes[i] < 0) {
                    return false;
                }
            }
            return true;
        }

        <T> T readName(String field, Function<String, T> validate) {
            String value = readString(field);
            try {
                return validate.apply(value);
            } catch (IllegalArgumentException e) {
                throw new MalformedRecordException(INVALID_NAME, part + " " + field + ": " + e.getMessage());
            }
        }

        void requireEnd() {
            if (buffer.hasRemaining()) {
                throw new MalformedRecordException(
                        TRAILING_BYTES, part + " has " + buffer.remaining() + " bytes after its last field");
            }
        }

        private void require(int bytes, String field) {
            if (buffer.remaining() < bytes) {
                throw new MalformedRecordException(
                        TRUNCATED,
                        part + " " + field + " needs " + bytes + " bytes at offset " + buffer.position() + ", but "
                                + buffer.remaining() + " remain");
            }
        }
    }
}
