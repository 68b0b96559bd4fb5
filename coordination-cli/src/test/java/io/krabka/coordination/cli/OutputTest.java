package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OutputTest {

    @Test
    void tablesAlignColumnsWithoutTrailingBlanks() {
        String table = new TextTable("ROLE", "HOLDER", "ROSTER")
                .row("controller", "n0", "n0 (holder)")
                .row("a", "-", "-")
                .render();

        assertThat(table).isEqualTo("""
                ROLE        HOLDER  ROSTER
                controller  n0      n0 (holder)
                a           -       -
                """);
    }

    @Test
    void jsonEscapesWhatNamesMayContain() throws Exception {
        Instant now = Instant.parse("2026-01-01T00:00:10Z");
        Role role = Role.of("a \"quoted\" \\ role\u2028");
        LeaseSnapshot lease =
                new LeaseSnapshot(MemberId.of("n0"), FencingToken.of(7, 3, (short) 0), now, now.plusSeconds(6));
        LeadershipStatus status = new LeadershipStatus(
                role,
                Optional.of(lease),
                Optional.empty(),
                List.of(new RankedMember(MemberId.of("n0"), -1, 0, now)),
                8,
                false);
        // coordinatorAsked false: current is unknown, so null.
        Report report = new Report(
                "k:9092",
                "__coordination_state",
                1,
                3,
                now,
                List.of(new Report.RoleView(status, 0, false, true, now)),
                List.of(0),
                0,
                List.of(),
                List.of());

        JsonNode parsed = new ObjectMapper().readTree(JsonOutput.write(report));

        JsonNode document = parsed.get("roles").get(0);
        assertThat(document.get("role").asText()).isEqualTo("a \"quoted\" \\ role\u2028");
        assertThat(document.get("term").asLong()).isEqualTo(7);
        assertThat(document.get("current").isNull()).isTrue();
        assertThat(parsed.get("warnings").isArray()).isTrue();
        assertThat(parsed.get("warnings")).isEmpty();
        assertThat(document.get("roster").get(0).get("holder").asBoolean()).isTrue();
    }

    /**
     * The exact bytes of {@code --output json}: field names, order, two-space indents,
     * {@code "name": value}, empty containers as {@code {}} and {@code []}, and the escapes.
     */
    @Test
    void jsonDocumentIsByteForByteTheDocumentedFormat() {
        Instant now = Instant.parse("2026-12-01T14:43:29.005Z");
        LeaseSnapshot lease = new LeaseSnapshot(
                MemberId.of("n2"),
                FencingToken.of(965, 1, (short) 591),
                Instant.parse("2026-12-01T14:43:10.123456Z"),
                Instant.parse("2026-12-01T14:43:34.374Z"));
        LeadershipStatus controller = new LeadershipStatus(
                Role.of("controller"),
                Optional.of(lease),
                Optional.of(new ProducerState(1, (short) 590, "CompleteCommit")),
                List.of(
                        new RankedMember(MemberId.of("n2"), -1, 339, Instant.parse("2026-12-01T14:41:18.775Z")),
                        new RankedMember(MemberId.of("n1"), 0, 386, Instant.parse("2026-12-01T14:41:29.116Z"))),
                1185,
                true);
        LeadershipStatus odd = new LeadershipStatus(
                Role.of("a \"quoted\" \\ r\u00f4le/\u2028"), Optional.empty(), Optional.empty(), List.of(), 0, false);
        Report report = new Report(
                "k1:9092,k2:9092",
                "__coordination_state",
                3,
                1,
                now,
                List.of(
                        new Report.RoleView(controller, 2, true, true, now),
                        new Report.RoleView(odd, 0, false, false, now)),
                List.of(0, 1, 2),
                1,
                List.of(new TopicReader.MalformedRecord(0, 17, "unknown_kind", "key kind 9\t\u0001\n")),
                List.of("replication factor 1 (production needs 3)"));

        assertThat(JsonOutput.write(report)).isEqualTo(GOLDEN);
    }

    private static final String GOLDEN = """
            {
              "bootstrapServers": "k1:9092,k2:9092",
              "topic": "__coordination_state",
              "partitions": 3,
              "replicationFactor": 1,
              "readAt": "2026-12-01T14:43:29.005Z",
              "roles": [
                {
                  "role": "controller",
                  "found": true,
                  "partition": 2,
                  "readUpTo": 1185,
                  "holder": "n2",
                  "holderUrl": null,
                  "term": 965,
                  "current": true,
                  "grantedAt": "2026-12-01T14:43:10.123Z",
                  "deadline": "2026-12-01T14:43:34.374Z",
                  "deadlineInMs": 5369,
                  "leaseEpoch": {
                    "producerId": 1,
                    "producerEpoch": 591
                  },
                  "coordinatorAsked": true,
                  "coordinator": {
                    "producerId": 1,
                    "producerEpoch": 590,
                    "state": "CompleteCommit"
                  },
                  "roster": [
                    {
                      "member": "n2",
                      "rank": -1,
                      "holder": true,
                      "registrationOffset": 339,
                      "registeredAt": "2026-12-01T14:41:18.775Z"
                    },
                    {
                      "member": "n1",
                      "rank": 0,
                      "holder": false,
                      "registrationOffset": 386,
                      "registeredAt": "2026-12-01T14:41:29.116Z"
                    }
                  ]
                },
                {
                  "role": "a \\"quoted\\" \\\\ r\u00f4le/\\u2028",
                  "found": false,
                  "partition": 0,
                  "readUpTo": 0,
                  "holder": null,
                  "holderUrl": null,
                  "term": null,
                  "current": null,
                  "grantedAt": null,
                  "deadline": null,
                  "deadlineInMs": null,
                  "leaseEpoch": null,
                  "coordinatorAsked": false,
                  "coordinator": null,
                  "roster": []
                }
              ],
              "malformedRecords": {
                "partitionsRead": [
                  0,
                  1,
                  2
                ],
                "count": 1,
                "first": [
                  {
                    "partition": 0,
                    "offset": 17,
                    "problem": "unknown_kind",
                    "detail": "key kind 9\\t\\u0001\\n"
                  }
                ]
              },
              "warnings": [
                "replication factor 1 (production needs 3)"
              ]
            }
            """;

    @Test
    void remainingLeaseTimeReadsBothWays() {
        Instant now = Instant.parse("2026-01-01T00:00:10Z");

        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:14.850Z"), now))
                .isEqualTo("in 4.9s");
        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:08Z"), now))
                .isEqualTo("passed 2.0s ago");
    }

    @Test
    void remainingLeaseTimeReadsForAnyDeadlineARecordCanCarry() {
        Instant now = Instant.parse("2026-01-01T00:00:10Z");

        assertThat(TextOutput.remaining(Instant.ofEpochMilli(Long.MIN_VALUE), now))
                .startsWith("passed 9223373")
                .endsWith("s ago");
        assertThat(TextOutput.remaining(Instant.ofEpochMilli(Long.MAX_VALUE), now))
                .startsWith("in 9223370")
                .endsWith("s");
        assertThat(TextOutput.millisBetween(now, Instant.ofEpochMilli(Long.MIN_VALUE)))
                .isEqualTo(Long.MIN_VALUE);
        assertThat(TextOutput.millisBetween(now, Instant.ofEpochMilli(Long.MAX_VALUE)))
                .isEqualTo(Long.MAX_VALUE - now.toEpochMilli());
        assertThat(TextOutput.millisBetween(Instant.ofEpochMilli(-1), Instant.ofEpochMilli(Long.MAX_VALUE)))
                .isEqualTo(Long.MAX_VALUE);
        assertThat(TextOutput.millisBetween(Instant.ofEpochMilli(Long.MIN_VALUE), Instant.ofEpochMilli(Long.MAX_VALUE)))
                .isEqualTo(Long.MAX_VALUE);
        assertThat(TextOutput.millisBetween(now, now.plusMillis(1500))).isEqualTo(1500);
    }

    private static Report.RoleView leased(String name, long grantedAt, long deadline, Instant now) {
        LeaseSnapshot lease = new LeaseSnapshot(
                MemberId.of("forger"),
                FencingToken.of(3, 7, (short) 0),
                Instant.ofEpochMilli(grantedAt),
                Instant.ofEpochMilli(deadline));
        LeadershipStatus status = new LeadershipStatus(
                Role.of(name),
                Optional.of(lease),
                Optional.empty(),
                List.of(new RankedMember(MemberId.of("forger"), -1, 0, Instant.ofEpochMilli(grantedAt))),
                4,
                false);
        return new Report.RoleView(status, 0, true, true, now);
    }

    /** One well-formed lease record with extreme times must not blind the tool to the topic. */
    @Test
    void extremeLeaseTimesShowInEveryFormat() throws Exception {
        Instant now = Instant.parse("2026-12-01T14:43:29.005Z");
        long[] extremes = {Long.MIN_VALUE, Long.MAX_VALUE, 0};
        List<Report.RoleView> views = new java.util.ArrayList<>();
        views.add(leased("normal", now.toEpochMilli() - 1_000, now.toEpochMilli() + 5_000, now));
        for (long grantedAt : extremes) {
            for (long deadline : extremes) {
                views.add(leased("g" + grantedAt + "-d" + deadline, grantedAt, deadline, now));
            }
        }
        Report report =
                new Report("k:9092", "__coordination_state", 1, 3, now, views, List.of(0), 0, List.of(), List.of());
        List<String> problems = new java.util.ArrayList<>();

        String text = TextOutput.list(report, problems);
        JsonNode json = new ObjectMapper().readTree(JsonOutput.write(report, problems));
        for (Report.RoleView view : views) {
            Report one = new Report(
                    "k:9092", "__coordination_state", 1, 3, now, List.of(view), List.of(0), 0, List.of(), List.of());
            assertThat(TextOutput.describe(one, problems)).contains("Holder:", "forger", "Deadline:");
        }

        assertThat(problems).isEmpty();
        assertThat(text).contains("normal ", "(in 5.0s)", "10 roles in topic");
        assertThat(text.lines().filter(line -> line.startsWith("g")).count()).isEqualTo(9);
        assertThat(json.get("roles")).hasSize(10);
        assertThat(json.get("roles").get(0).get("deadlineInMs").asLong()).isEqualTo(5_000);
        JsonNode minimum = json.get("roles").get(1);
        assertThat(minimum.get("role").asText()).isEqualTo("g" + Long.MIN_VALUE + "-d" + Long.MIN_VALUE);
        assertThat(minimum.get("deadlineInMs").asLong()).isEqualTo(Long.MIN_VALUE);
        assertThat(minimum.get("deadline").asText())
                .isEqualTo(TextOutput.instant(Instant.ofEpochMilli(Long.MIN_VALUE)));
        assertThat(json.get("roles").get(2).get("deadlineInMs").asLong())
                .isEqualTo(Long.MAX_VALUE - now.toEpochMilli());
        assertThat(json.get("warnings")).isEmpty();
    }

    /**
     * Each role is rendered on its own: one the tool could not describe, or whose rendering
     * fails, is shown with {@code ?} (text) or nulls (JSON) and reported; the rest print.
     */
    @Test
    void aRoleThatCannotBeShownIsReportedAndTheOthersStillPrint() throws Exception {
        Instant now = Instant.parse("2026-12-01T14:43:29.005Z");
        Report.RoleView normal = leased("normal", now.toEpochMilli() - 1_000, now.toEpochMilli() + 5_000, now);
        Report.RoleView undescribed = Report.RoleView.unreadable(
                Role.of("undescribed"),
                1,
                true,
                now,
                "describing role undescribed failed: java.lang.IllegalStateException: odd");
        // No observation time: measuring the time left fails, whatever the lease says.
        Report.RoleView failing =
                new Report.RoleView(leased("failing", 0, 0, now).status(), 2, true, true, null);
        Report report = new Report(
                "k:9092",
                "__coordination_state",
                3,
                3,
                now,
                List.of(undescribed, normal, failing),
                List.of(0, 1, 2),
                0,
                List.of(),
                List.of("replication factor 3 is fine"));

        List<String> textProblems = new java.util.ArrayList<>();
        String text = TextOutput.list(report, textProblems);
        List<String> jsonProblems = new java.util.ArrayList<>();
        JsonNode json = new ObjectMapper().readTree(JsonOutput.write(report, jsonProblems));

        assertThat(text).contains("3 roles in topic");
        assertThat(text.lines()
                        .filter(line -> line.startsWith("normal "))
                        .findFirst()
                        .orElseThrow())
                .contains("forger", "(in 5.0s)");
        assertThat(text.lines()
                        .filter(line -> line.startsWith("undescribed "))
                        .findFirst()
                        .orElseThrow()
                        .split(" +"))
                .containsExactly("undescribed", "1", "?", "?", "?", "?", "?");
        assertThat(text.lines()
                        .filter(line -> line.startsWith("failing "))
                        .findFirst()
                        .orElseThrow())
                .contains("?");
        assertThat(textProblems).hasSize(2);
        assertThat(textProblems.get(0))
                .isEqualTo("role undescribed (partition 1) cannot be shown: describing role undescribed"
                        + " failed: java.lang.IllegalStateException: odd");
        assertThat(textProblems.get(1)).startsWith("role failing (partition 2) cannot be shown: showing it failed: ");
        assertThat(jsonProblems).isEqualTo(textProblems);

        assertThat(json.get("roles")).hasSize(3);
        JsonNode shown = json.get("roles").get(1);
        assertThat(shown.get("holder").asText()).isEqualTo("forger");
        for (JsonNode unreadable :
                List.of(json.get("roles").get(0), json.get("roles").get(2))) {
            // The same fields as any role, in the same order, so scripts read it as any other.
            assertThat(iterable(unreadable.fieldNames())).isEqualTo(iterable(shown.fieldNames()));
            assertThat(unreadable.get("holder").isNull()).isTrue();
            assertThat(unreadable.get("roster")).isEmpty();
        }
        assertThat(json.get("roles").get(0).get("found").asBoolean()).isTrue();
        assertThat(json.get("roles").get(0).get("partition").asInt()).isEqualTo(1);
        assertThat(json.get("warnings")).hasSize(3);
        assertThat(json.get("warnings").get(0).asText()).isEqualTo("replication factor 3 is fine");
        assertThat(json.get("warnings").get(1).asText()).isEqualTo(textProblems.get(0));

        Report alone = new Report(
                "k:9092", "__coordination_state", 3, 3, now, List.of(undescribed), List.of(1), 0, List.of(), List.of());
        List<String> describeProblems = new java.util.ArrayList<>();
        assertThat(TextOutput.describe(alone, describeProblems))
                .contains(
                        "Role:",
                        "undescribed",
                        "partition 1 of 3",
                        "Problem:",
                        "IllegalStateException: odd",
                        "Malformed records in partition 1: 0");
        assertThat(describeProblems).hasSize(1);
    }

    private static List<String> iterable(java.util.Iterator<String> names) {
        List<String> list = new java.util.ArrayList<>();
        names.forEachRemaining(list::add);
        return list;
    }
}
