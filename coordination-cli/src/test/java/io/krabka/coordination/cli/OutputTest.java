package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OutputTest {

    @Test
    void tablesAlignColumnsWithoutTrailingBlanks() {
        String table = new TextTable("ROLE", "HOLDER", "ROSTER").row("controller", "n0", "n0 (holder)").row("a", "-", "-").render();

        assertThat(table).isEqualTo("""
                ROLE        HOLDER  ROSTER
                controller  n0      n0 (holder)
                a           -       -
                """);
    }

    @Test
    void jsonEscapesWhatNamesMayContain() throws Exception {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("role", "a \"quoted\" \\ role\u2028");
        document.put("term", 7L);
        document.put("current", null);
        List<Object> empty = new ArrayList<>();
        document.put("roster", empty);
        document.put("nested", List.of(Map.of("ok", true)));

        JsonNode parsed = new ObjectMapper().readTree(Json.write(document));

        assertThat(parsed.get("role").asText()).isEqualTo("a \"quoted\" \\ role\u2028");
        assertThat(parsed.get("term").asLong()).isEqualTo(7);
        assertThat(parsed.get("current").isNull()).isTrue();
        assertThat(parsed.get("roster").isArray()).isTrue();
        assertThat(parsed.get("nested").get(0).get("ok").asBoolean()).isTrue();
    }

    @Test
    void remainingLeaseTimeReadsBothWays() {
        Instant now = Instant.parse("2026-01-01T00:00:10Z");

        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:14.850Z"), now)).isEqualTo("in 4.9s");
        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:08Z"), now)).isEqualTo("passed 2.0s ago");
    }
}
