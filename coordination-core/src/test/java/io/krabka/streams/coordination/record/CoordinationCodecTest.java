package io.krabka.streams.coordination.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationRecord.Lease;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import io.krabka.streams.coordination.record.MalformedRecordException.Problem;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CoordinationCodecTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final Role CONTROLLER = Role.of("controller");
    private static final MemberId NODE_1 = MemberId.of("node-1");

    @Test
    void leaseKeyCarriesAnEmptyMemberString() {
        byte[] key = CoordinationCodec.encodeKey(CoordinationKey.lease(CONTROLLER));
        // version 0, kind 1, "controller", ""
        assertThat(HEX.formatHex(key))
                .isEqualTo("0000" + "0001" + "000a" + HEX.formatHex("controller".getBytes()) + "0000");
        assertThat(CoordinationCodec.decodeKey(key)).isEqualTo(CoordinationKey.lease(CONTROLLER));
    }

    @Test
    void registrationRoundTrips() {
        CoordinationKey key = CoordinationKey.registration(CONTROLLER, NODE_1);
        Registration value = new Registration(NODE_1, 1_700_000_000_000L);
        assertThat(CoordinationCodec.decodeKey(CoordinationCodec.encodeKey(key)))
                .isEqualTo(key);
        assertThat(CoordinationCodec.decodeValue(RecordKind.REGISTRATION, CoordinationCodec.encodeValue(value)))
                .contains(value);
    }

    @Test
    void leaseRoundTripsAtTheExtremesOfTheToken() {
        Lease value = new Lease(NODE_1, (1L << 32) + 42, Short.MAX_VALUE, 1_700_000_000_000L, 1_700_000_030_000L);
        byte[] bytes = CoordinationCodec.encodeValue(value);
        assertThat(bytes).hasSize(2 + 2 + 6 + 8 + 2 + 8 + 8);
        assertThat(CoordinationCodec.decodeValue(RecordKind.LEASE, bytes)).contains(value);
    }

    @Test
    void nullValueIsATombstone() {
        assertThat(CoordinationCodec.decodeValue(RecordKind.LEASE, null)).isEmpty();
        assertThat(CoordinationCodec.decodeValue(RecordKind.REGISTRATION, null)).isEqualTo(Optional.empty());
    }

    @Test
    void nonBmpCharacterIsStandardUtf8NotModifiedUtf8() throws IOException {
        MemberId crab = MemberId.of("🦀");
        byte[] value = CoordinationCodec.encodeValue(new Registration(crab, 0));
        // Standard UTF-8: 4 bytes F0 9F A6 80.
        assertThat(HEX.formatHex(value)).startsWith("0000" + "0004" + "f09fa680");
        // DataOutput.writeUTF would write a surrogate pair, 6 bytes, which a strict decoder refuses.
        ByteArrayOutputStream modified = new ByteArrayOutputStream();
        new DataOutputStream(modified).writeUTF("🦀");
        assertThat(HEX.formatHex(modified.toByteArray())).isEqualTo("0006" + "eda0beedb680");
        byte[] withModifiedUtf8 = HEX.parseHex("0000" + "0006eda0beedb680" + "0000000000000000");
        assertThatThrownBy(() -> CoordinationCodec.decodeValue(RecordKind.REGISTRATION, withModifiedUtf8))
                .isInstanceOfSatisfying(
                        MalformedRecordException.class,
                        e -> assertThat(e.problem()).isEqualTo(Problem.MALFORMED_UTF8));
        assertThat(CoordinationCodec.decodeValue(RecordKind.REGISTRATION, value))
                .get()
                .extracting(CoordinationRecord::member)
                .isEqualTo(crab);
    }

    @Test
    void hostileLengthIsReportedAsTruncatedWithoutAllocating() {
        // A registration value whose member claims 32767 bytes but has 3.
        byte[] hostile = HEX.parseHex("0000" + "7fff" + "616263");
        assertThatThrownBy(() -> CoordinationCodec.decodeValue(RecordKind.REGISTRATION, hostile))
                .isInstanceOfSatisfying(MalformedRecordException.class, e -> {
                    assertThat(e.problem()).isEqualTo(Problem.TRUNCATED);
                    assertThat(e).hasMessageContaining("member needs 32767 bytes at offset 4, but 3 remain");
                });
    }

    @Test
    void eachProblemIsNamedInTheMessage() {
        assertProblem(
                () -> CoordinationCodec.decodeKey(HEX.parseHex("0001")), Problem.UNSUPPORTED_VERSION, "key version 1");
        assertProblem(
                () -> CoordinationCodec.decodeKey(HEX.parseHex("0000")), Problem.TRUNCATED, "key kind needs 2 bytes");
        assertProblem(() -> CoordinationCodec.decodeKey(HEX.parseHex("00000002")), Problem.UNKNOWN_KIND, "key kind 2");
        assertProblem(
                () -> CoordinationCodec.decodeKey(HEX.parseHex("00000000ffff")),
                Problem.NEGATIVE_LENGTH,
                "role length is -1");
        assertProblem(() -> CoordinationCodec.decodeKey(HEX.parseHex("000000000000")), Problem.INVALID_NAME, "role");
        assertProblem(
                () -> CoordinationCodec.decodeKey(HEX.parseHex("0000000100017800017900")),
                Problem.INVALID_NAME,
                "lease key's member must be empty");
        assertProblem(
                () -> CoordinationCodec.decodeKey(HEX.parseHex("00000001000178000000")),
                Problem.TRAILING_BYTES,
                "1 bytes");
        assertProblem(
                () -> CoordinationCodec.decodeValue(
                        RecordKind.LEASE,
                        HEX.parseHex("00000001" + "78" + "ffffffffffffffff" + "0000" + "0000000000000000"
                                + "0000000000000000")),
                Problem.NEGATIVE_TOKEN,
                "producer_id is -1");
        assertProblem(() -> CoordinationCodec.decodeKey(null), Problem.TRUNCATED, "null");
    }

    private static void assertProblem(Runnable decode, Problem problem, String messagePart) {
        assertThatThrownBy(decode::run).isInstanceOfSatisfying(MalformedRecordException.class, e -> {
            assertThat(e.problem()).isEqualTo(problem);
            assertThat(e.getMessage()).startsWith(problem.code() + ": ").contains(messagePart);
        });
    }
}
