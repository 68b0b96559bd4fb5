package io.krabka.streams.coordination.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationRecord.Lease;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Asserts every case of {@code golden-vectors/coordination-state.json} both ways. The
 * vectors are written from the spec by {@code golden-vectors/generate.py}, which shares
 * no code with this module; they are never regenerated from the codec.
 */
class GoldenVectorsTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final JsonNode VECTORS = load();

    private static JsonNode load() {
        Path path = Path.of(System.getProperty("golden.vectors", "../golden-vectors/coordination-state.json"));
        try {
            return new ObjectMapper().readTree(Files.readString(path));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the golden vectors at " + path.toAbsolutePath(), e);
        }
    }

    @Test
    void vectorsCoverWhatTheFormatPromises() {
        List<JsonNode> records = list("records");
        assertThat(records.stream()
                        .filter(r -> r.get("kind").asText().equals("registration")
                                && !r.get("value").isNull()))
                .hasSizeGreaterThanOrEqualTo(2);
        assertThat(records.stream()
                        .filter(r -> r.get("kind").asText().equals("lease")
                                && !r.get("value").isNull())
                        .map(r -> r.get("producer_epoch").asInt()))
                .contains(0, 32767);
        assertThat(records.stream()
                        .filter(r -> r.has("producer_id"))
                        .map(r -> r.get("producer_id").asLong()))
                .anyMatch(id -> id > (1L << 32));
        assertThat(records.stream()
                        .filter(r -> r.get("value").isNull())
                        .map(r -> r.get("kind").asText()))
                .contains("registration", "lease");
        assertThat(records.stream()
                        .map(r -> r.path("role").asText() + r.path("member").asText()))
                .anyMatch(name -> name.codePoints().anyMatch(Character::isSupplementaryCodePoint));
        assertThat(list("invalid").stream().map(c -> c.get("error").asText()).distinct())
                .containsExactlyInAnyOrderElementsOf(Stream.of(MalformedRecordException.Problem.values())
                        .filter(p -> p != MalformedRecordException.Problem.MEMBER_MISMATCH)
                        .map(MalformedRecordException.Problem::code)
                        .toList());
        assertThat(list("partitions"))
                .hasSizeGreaterThanOrEqualTo(5)
                .anyMatch(c -> c.get("role").asText().chars().anyMatch(ch -> ch > 127));
    }

    @TestFactory
    Stream<DynamicTest> everyRecordEncodesToItsBytesAndDecodesToItsFields() {
        return list("records").stream()
                .map(vector -> DynamicTest.dynamicTest(name(vector), () -> {
                    CoordinationKey key = expectedKey(vector);
                    byte[] keyBytes = HEX.parseHex(vector.get("key").asText());
                    assertThat(HEX.formatHex(CoordinationCodec.encodeKey(key)))
                            .isEqualTo(vector.get("key").asText());
                    assertThat(CoordinationCodec.decodeKey(keyBytes)).isEqualTo(key);

                    JsonNode value = vector.get("value");
                    if (value.isNull()) {
                        assertThat(CoordinationCodec.decodeValue(key.kind(), null))
                                .isEmpty();
                        return;
                    }
                    CoordinationRecord record = expectedRecord(key.kind(), vector);
                    assertThat(HEX.formatHex(CoordinationCodec.encodeValue(record)))
                            .isEqualTo(value.asText());
                    assertThat(CoordinationCodec.decodeValue(key.kind(), HEX.parseHex(value.asText())))
                            .contains(record);
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyInvalidCaseFailsWithItsNamedProblem() {
        return list("invalid").stream()
                .map(vector -> DynamicTest.dynamicTest(name(vector), () -> {
                    byte[] bytes = HEX.parseHex(vector.get("hex").asText());
                    String part = vector.get("part").asText();
                    Runnable decode = switch (part) {
                        case "key" -> () -> CoordinationCodec.decodeKey(bytes);
                        case "registration-value" ->
                            () -> CoordinationCodec.decodeValue(RecordKind.REGISTRATION, bytes);
                        case "lease-value" -> () -> CoordinationCodec.decodeValue(RecordKind.LEASE, bytes);
                        default -> throw new AssertionError("unknown part " + part);
                    };
                    assertThatThrownBy(decode::run)
                            .isInstanceOfSatisfying(
                                    MalformedRecordException.class,
                                    e -> assertThat(e.problem().code())
                                            .as(e.getMessage())
                                            .isEqualTo(vector.get("error").asText()));
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyRoleLandsInItsPartition() {
        return list("partitions").stream()
                .map(vector -> DynamicTest.dynamicTest(
                        name(vector),
                        () -> assertThat(RolePartitioner.partitionFor(
                                        Role.of(vector.get("role").asText()),
                                        vector.get("partitions").asInt()))
                                .isEqualTo(vector.get("partition").asInt())));
    }

    private static CoordinationKey expectedKey(JsonNode vector) {
        Role role = Role.of(vector.get("role").asText());
        return switch (vector.get("kind").asText()) {
            case "registration" ->
                CoordinationKey.registration(
                        role, MemberId.of(vector.get("member").asText()));
            case "lease" -> CoordinationKey.lease(role);
            default -> throw new AssertionError("unknown kind in " + vector);
        };
    }

    private static CoordinationRecord expectedRecord(RecordKind kind, JsonNode vector) {
        MemberId member = MemberId.of(vector.get("member").asText());
        if (kind == RecordKind.REGISTRATION) {
            return new Registration(member, vector.get("registered_at").asLong());
        }
        return new Lease(
                member,
                vector.get("producer_id").asLong(),
                (short) vector.get("producer_epoch").asInt(),
                vector.get("granted_at").asLong(),
                vector.get("deadline").asLong());
    }

    private static List<JsonNode> list(String field) {
        List<JsonNode> out = new ArrayList<>();
        VECTORS.get(field).forEach(out::add);
        assertThat(out).as(field).isNotEmpty();
        return out;
    }

    private static String name(JsonNode vector) {
        return "#" + vector.get("id").asInt() + " " + vector.path("comment").asText("");
    }
}
