package io.krabka.streams.coordination.members;

import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.INVALID_NAME;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.INVALID_URL;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.MALFORMED_UTF8;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.NEGATIVE_LENGTH;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.TRAILING_BYTES;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.TRUNCATED;
import static io.krabka.streams.coordination.members.MalformedAddressException.Problem.UNSUPPORTED_VERSION;

import io.krabka.streams.coordination.MemberId;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The byte layouts of the member address topic, {@code <coordination topic>-members}.
 * It is separate from {@code __coordination_state}, whose frozen format it leaves
 * alone; {@code golden-vectors/member-addresses.json} holds the cases this codec
 * asserts.
 *
 * <pre>
 * key:
 *   version      i16 = 0
 *   member       string   the member id
 *
 * value:
 *   version      i16 = 0
 *   url          string   where the member answers, e.g. http://10.0.0.7:8080
 *   written_at   i64      epoch milliseconds, on the member's clock
 * </pre>
 *
 * Integers are big-endian and signed; a string is an i16 byte length and that many bytes
 * of standard UTF-8. A null value is a tombstone: the member withdrew its address.
 * Decoding reports the first problem met left to right as a
 * {@link MalformedAddressException} and throws nothing else.
 */
public final class MemberAddressCodec {

    /** The only key and value version this codec writes and reads. */
    public static final short VERSION = 0;

    /** What is appended to the coordination topic's name to name the member address topic. */
    public static final String TOPIC_SUFFIX = "-members";

    private MemberAddressCodec() {}

    /** The member address topic that goes with {@code coordinationTopic}. */
    public static String topicFor(String coordinationTopic) {
        return coordinationTopic + TOPIC_SUFFIX;
    }

    /** Encodes the key of {@code member}'s record. */
    public static byte[] encodeKey(MemberId member) {
        byte[] name = member.value().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + name.length)
                .putShort(VERSION)
                .putShort((short) name.length)
                .put(name)
                .array();
    }

    /** Encodes the value of an address; a withdrawal is a null value, not encoded. */
    public static byte[] encodeValue(MemberAddress address) {
        Objects.requireNonNull(address, "address");
        byte[] url = address.url().getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(4 + url.length + 8)
                .putShort(VERSION)
                .putShort((short) url.length)
                .put(url)
                .putLong(address.writtenAt())
                .array();
    }

    /**
     * Decodes a key.
     *
     * @throws MalformedAddressException the first problem met reading left to right
     */
    public static MemberId decodeKey(byte @Nullable [] bytes) {
        Reader in = new Reader(bytes, "key");
        in.version();
        String member = in.string("member");
        MemberId id;
        try {
            id = MemberId.of(member);
        } catch (IllegalArgumentException e) {
            throw new MalformedAddressException(INVALID_NAME, "key member: " + e.getMessage());
        }
        in.end();
        return id;
    }

    /**
     * Decodes the value stored under {@code member}'s key.
     *
     * @param value the value bytes, or {@code null} for a tombstone
     * @return the address, or empty for a tombstone
     * @throws MalformedAddressException the first problem met reading left to right
     */
    public static Optional<MemberAddress> decodeValue(MemberId member, byte @Nullable [] value) {
        Objects.requireNonNull(member, "member");
        if (value == null) {
            return Optional.empty();
        }
        Reader in = new Reader(value, "value");
        in.version();
        String url = in.string("url");
        Optional<String> problem = MemberAddress.urlProblem(url);
        if (problem.isPresent()) {
            throw new MalformedAddressException(INVALID_URL, "value url " + problem.get());
        }
        long writtenAt = in.longValue("written_at");
        in.end();
        return Optional.of(new MemberAddress(member, url, writtenAt));
    }

    /** Bounds-checked big-endian reader that turns every problem into a {@link MalformedAddressException}. */
    private static final class Reader {

        private final ByteBuffer buffer;
        private final String part;

        Reader(byte @Nullable [] bytes, String part) {
            if (bytes == null) {
                throw new MalformedAddressException(TRUNCATED, part + " is null");
            }
            this.buffer = ByteBuffer.wrap(bytes);
            this.part = part;
        }

        void version() {
            short version = shortValue("version");
            if (version != VERSION) {
                throw new MalformedAddressException(
                        UNSUPPORTED_VERSION, part + " version " + version + " is not " + VERSION);
            }
        }

        short shortValue(String field) {
            require(Short.BYTES, field);
            return buffer.getShort();
        }

        long longValue(String field) {
            require(Long.BYTES, field);
            return buffer.getLong();
        }

        String string(String field) {
            short length = shortValue(field + " length");
            if (length < 0) {
                throw new MalformedAddressException(NEGATIVE_LENGTH, part + " " + field + " length is " + length);
            }
            require(length, field);
            ByteBuffer slice = buffer.slice();
            slice.limit(length);
            buffer.position(buffer.position() + length);
            try {
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(slice)
                        .toString();
            } catch (CharacterCodingException e) {
                throw new MalformedAddressException(MALFORMED_UTF8, part + " " + field + " is not valid UTF-8");
            }
        }

        void end() {
            if (buffer.hasRemaining()) {
                throw new MalformedAddressException(
                        TRAILING_BYTES, part + " has " + buffer.remaining() + " bytes after its last field");
            }
        }

        private void require(int bytes, String field) {
            if (buffer.remaining() < bytes) {
                throw new MalformedAddressException(
                        TRUNCATED,
                        part + " " + field + " needs " + bytes + " bytes at offset " + buffer.position() + ", but "
                                + buffer.remaining() + " remain");
            }
        }
    }
}
