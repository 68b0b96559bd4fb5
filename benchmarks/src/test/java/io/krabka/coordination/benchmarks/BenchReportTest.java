package io.krabka.coordination.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchReportTest {

    /** Surefire runs in the module's directory; the docs are beside it. */
    private static final Path DOCS = Path.of("..", "docs");

    private static final String RUN = """
            {"run": "2000-01-01T00:00:00Z", "minutes": 2.04, "machine": "2 CPUs", "load": "1-minute load average: median 1.0",
             "measures": [
              {"measure": "1 graceful handover: Contender.release() -> standby Listener.granted", "system": "krabka (Kafka)",
               "unit": "ms", "n": 30, "p50": 10.0, "p90": 20.0, "p99": 40.0, "max": 40.0},
              {"measure": "1 graceful handover", "system": "Curator LeaderLatch (ZooKeeper)",
               "unit": "ms", "n": 30, "p50": 5.0, "p90": 8.0, "p99": 80.0, "max": 80.0},
              {"measure": "3 one-record transaction", "system": "krabka (Kafka) guarded write",
               "unit": "ms", "n": 9, "p50": 1.5, "p90": 2.0, "p99": 3.0, "max": 3.0},
              {"measure": "3 one-record transaction", "system": "plain transactional KafkaProducer",
               "unit": "ms", "n": 9, "p50": 1.0, "p90": 2.0, "p99": 2.0, "max": 2.0}
             ],
             "rates": [
              {"measure": "3 one-record transactions per second", "unit": "tx/s", "guardedPerSecond": 500.0, "plainPerSecond": 1000.0},
              {"measure": "3 async send, fixed rate", "system": "krabka (Kafka) Leadership.send", "unit": "records/s",
               "offered": 6000.0, "committed": 5500.0, "sent": 1, "failed": 0, "threads": 4}
             ],
             "goals": [{"id": "1b", "goal": "handover p99 <= 30 ms", "value": "40 ms", "verdict": "missed"}]}
            """;

    @Test
    void theCommittedPageShowsTheCommittedJson() throws Exception {
        String page = Files.readString(DOCS.resolve("PERFORMANCE.md"), StandardCharsets.UTF_8);
        String json = Files.readString(DOCS.resolve("bench.json"), StandardCharsets.UTF_8);
        assertThat(BenchReport.section(page))
                .as("docs/PERFORMANCE.md's figures differ from docs/bench.json; render them again with"
                        + " BenchReport --json=../docs/bench.json --out=../docs/PERFORMANCE.md")
                .isEqualTo(BenchReport.render(json));
    }

    @Test
    void aComparisonRowCarriesThisLibrarysFigureOverItsOwn() {
        String section = BenchReport.render(RUN);
        assertThat(section)
                .contains(
                        "| graceful handover | Curator LeaderLatch (ZooKeeper) | 30 | 5.00 | 8.00 | 80 | 80 | 2.00, 0.50 |");
        assertThat(section)
                .contains(
                        "| one-record transaction | plain transactional KafkaProducer | 9 | 1.00 | 2.00 | 2.00 | 2.00 | 1.50, 1.50 |");
        // this library's own rows compare with nothing
        assertThat(section)
                .contains(
                        "| graceful handover: Contender.release() -> standby Listener.granted | krabka (Kafka) | 30 | 10 | 20 | 40 | 40 |  |");
    }

    @Test
    void theAsyncRateIsComparedWithTheOneRecordRateOfTheSameRun() {
        String section = BenchReport.render(RUN);
        assertThat(section)
                .contains(
                        "a guarded `write` committed 500 per second, a plain transactional producer 1000 (ratio 0.50)");
        assertThat(section)
                .contains("6000 offered per second, 5500 records committed per second, 1 sent, 0 failed; 11.0 times");
    }

    @Test
    void goalsShowTheirVerdictWithoutTheirId() {
        String section = BenchReport.render(RUN);
        assertThat(section)
                .contains("| handover p99 <= 30 ms | 40 ms | **missed** |")
                .doesNotContain("1b");
    }

    @Test
    void rewritingKeepsEverythingOutsideTheMarkers(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path page = dir.resolve("PERFORMANCE.md");
        Path json = dir.resolve("bench.json");
        Files.writeString(
                page, "# Title\n\nbefore\n" + BenchReport.BEGIN + "\nold figures\n" + BenchReport.END + "\nafter\n");
        Files.writeString(json, RUN);

        BenchReport.rewrite(page, json);

        String text = Files.readString(page);
        assertThat(text)
                .startsWith("# Title\n\nbefore\n" + BenchReport.BEGIN)
                .endsWith(BenchReport.END + "\nafter\n")
                .doesNotContain("old figures");
        assertThat(BenchReport.section(text)).isEqualTo(BenchReport.render(RUN));
    }

    @Test
    void aPageWithoutMarkersIsRefused() {
        assertThatThrownBy(() -> BenchReport.section("# no markers\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(BenchReport.BEGIN);
    }

    @Test
    void theReaderKeepsKeyOrderEscapesAndNesting() {
        Object parsed = BenchReport.parse(
                "{\"b\": [1, 2.5e1, -3], \"a\": {\"s\": \"q\\\"\\u00e9\\n\"}, \"t\": true, \"z\": null}");
        assertThat(parsed).isInstanceOf(Map.class);
        Map<?, ?> map = (Map<?, ?>) parsed;
        assertThat(List.copyOf(map.keySet())).isEqualTo(List.of("b", "a", "t", "z"));
        assertThat((List<?>) map.get("b"))
                .extracting(n -> ((Number) n).doubleValue())
                .containsExactly(1.0, 25.0, -3.0);
        assertThat(((Map<?, ?>) map.get("a")).get("s")).isEqualTo("q\"é\n");
        assertThat(map.get("t")).isEqualTo(Boolean.TRUE);
        assertThat(map.get("z")).isNull();
        assertThatThrownBy(() -> BenchReport.parse("{\"a\": 1} x")).isInstanceOf(IllegalArgumentException.class);
    }
}
