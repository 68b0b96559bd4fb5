package io.krabka.streams.coordination.members;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.krabka.streams.coordination.MemberId;
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
 * Asserts every case of {@code golden-vectors/member-addresses.json} both ways. The
 * vectors come from {@code golden-vectors/generate_member_addresses.py}, written from the
 * layout in golden-vectors/README.md; they are never regenerated from this codec.
 */
class MemberAddressVectorsTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final JsonNode VECTORS = load();

    private static JsonNode load() {
        Path path = Path.of("../golden-vectors/member-addresses.json");
        try {
            return new ObjectMapper().readTree(Files.readString(path));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the golden vectors at " + path.toAbsolutePath(), e);
        }
    }

    @Test
    void theVectorsUseEveryProblemOfTheCodecAndNoOther() {
        assertThat(list("invalid").stream().map(c -> c.get("error").asText()).distinct())
                .containsExactlyInAnyOrderElementsOf(Stream.of(MalformedAddressException.Problem.values())
                        .map(MalformedAddressException.Problem::code)
                        .toList());
        assertThat(list("records").stream().filter(r -> r.get("value").isNull()))
                .isNotEmpty();
    }

    @Test
    void theTopicIsNamedAfterTheCoordinationTopic() {
        assertThat(MemberAddressCodec.topicFor("__coordination_state")).isEqualTo("__coordination_state-members");
    }

    @TestFactory
    Stream<DynamicTest> everyRecordEncodesToItsBytesAndDecodesToItsFields() {
        return list("records").stream()
                .map(vector -> DynamicTest.dynamicTest(name(vector), () -> {
                    MemberId member = MemberId.of(vector.get("member").asText());
                    assertThat(HEX.formatHex(MemberAddressCodec.encodeKey(member)))
                            .isEqualTo(vector.get("key").asText());
                    assertThat(MemberAddressCodec.decodeKey(
                                    HEX.parseHex(vector.get("key").asText())))
                            .isEqualTo(member);
                    JsonNode value = vector.get("value");
                    if (value.isNull()) {
                        assertThat(MemberAddressCodec.decodeValue(member, null)).isEmpty();
                        return;
                    }
                    MemberAddress address = new MemberAddress(
                            member,
                            vector.get("url").asText(),
                            vector.get("written_at").asLong());
                    assertThat(HEX.formatHex(MemberAddressCodec.encodeValue(address)))
                            .isEqualTo(value.asText());
                    assertThat(MemberAddressCodec.decodeValue(member, HEX.parseHex(value.asText())))
                            .contains(address);
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyInvalidCaseFailsWithItsNamedProblem() {
        MemberId member = MemberId.of("node-1");
        return list("invalid").stream()
                .map(vector -> DynamicTest.dynamicTest(name(vector), () -> {
                    byte[] bytes = HEX.parseHex(vector.get("hex").asText());
                    Runnable decode = switch (vector.get("part").asText()) {
                        case "key" -> () -> MemberAddressCodec.decodeKey(bytes);
                        case "value" -> () -> MemberAddressCodec.decodeValue(member, bytes);
                        default -> throw new AssertionError("unknown part in " + vector);
                    };
                    assertThatThrownBy(decode::run)
                            .isInstanceOfSatisfying(
                                    MalformedAddressException.class,
                                    e -> assertThat(e.problem().code())
                                            .as(e.getMessage())
                                            .isEqualTo(vector.get("error").asText()));
                }));
    }

    @Test
    void anAddressThatBreaksTheUrlRulesIsRefusedWhenBuiltNamingTheProblem() {
        assertThatThrownBy(() -> new MemberAddress(MemberId.of("n1"), "ftp://10.0.0.1", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ftp://10.0.0.1")
                .hasMessageContaining("http:// or https://");
        assertThatThrownBy(() -> new MemberAddress(MemberId.of("n1"), "http://10.0.0.1/a b", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+0020");
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
