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
        String table = new TextTable("ROLE", "HOLDER", "ROSTER").row("controller", "n0", "n0 (holder)").row("a", "-", "-").render();

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
        LeaseSnapshot lease = new LeaseSnapshot(MemberId.of("n0"), FencingToken.of(7, 3, (short) 0), now, now.plusSeconds(6));
        LeadershipStatus status = new LeadershipStatus(role, Optional.of(lease), Optional.empty(),
                List.of(new RankedMember(MemberId.of("n0"), -1, 0, now)), 8, false);
        // coordinatorAsked false: current is unknown, so null.
        Report report = new Report("k:9092", "__coordination_state", 1, 3, now, List.of(new Report.RoleView(status, 0, false, true, now)),
                List.of(0), 0, List.of(), List.of());

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
        LeaseSnapshot lease = new LeaseSnapshot(MemberId.of("n2"), FencingToken.of(965, 1, (short) 591),
                Instant.parse("2026-12-01T14:43:10.123456Z"), Instant.parse("2026-12-01T14:43:34.374Z"));
        LeadershipStatus controller = new LeadershipStatus(Role.of("controller"), Optional.of(lease),
                Optional.of(new ProducerState(1, (short) 590, "CompleteCommit")),
                List.of(new RankedMember(MemberId.of("n2"), -1, 339, Instant.parse("2026-12-01T14:41:18.775Z")),
                        new RankedMember(MemberId.of("n1"), 0, 386, Instant.parse("2026-12-01T14:41:29.116Z"))),
                1185, true);
        LeadershipStatus odd = new LeadershipStatus(Role.of("a \"quoted\" \\ r\u00f4le/\u2028"), Optional.empty(),
                Optional.empty(), List.of(), 0, false);
        Report report = new Report("k1:9092,k2:9092", "__coordination_state", 3, 1, now,
                List.of(new Report.RoleView(controller, 2, true, true, now), new Report.RoleView(odd, 0, false, false, now)),
                List.of(0, 1, 2), 1, List.of(new TopicReader.MalformedRecord(0, 17, "unknown_kind", "key kind 9\t\u0001\n")),
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

        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:14.850Z"), now)).isEqualTo("in 4.9s");
        assertThat(TextOutput.remaining(Instant.parse("2026-01-01T00:00:08Z"), now)).isEqualTo("passed 2.0s ago");
    }
}
