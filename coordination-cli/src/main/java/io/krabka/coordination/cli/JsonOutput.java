package io.krabka.coordination.cli;

import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.io.SerializedString;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.core.util.DefaultIndenter;
import tools.jackson.core.util.DefaultPrettyPrinter;
import tools.jackson.core.util.Separators;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code --output json}: one document with the same shape for both commands ({@code roles}
 * holds one role for {@code describe}). Absent values are {@code null}, never left out.
 * Written by Jackson in a fixed layout that scripts and docs/OPERATIONS-CLI.md rely on:
 * fields in the order below, two-space indents, {@code "name": value}, {@code {}} and
 * {@code []} when empty, a newline at the end.
 */
final class JsonOutput {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            // Jackson 3 escapes '/' by default and writes upper-case hex: keep "/" and "\u001f" as they were.
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES, JsonWriteFeature.WRITE_HEX_UPPER_CASE)
            .build();

    private static final ObjectWriter WRITER = MAPPER.writer().with(layout()).with(new LineSeparatorEscapes());

    private JsonOutput() {}

    static String write(Report report) {
        return write(report, new ArrayList<>());
    }

    /**
     * The document, each role rendered on its own: a role that cannot be shown keeps its
     * name, {@code found} and partition, with {@code null} elsewhere and an empty roster,
     * and a line in {@code problems} and in the document's {@code warnings}.
     */
    static String write(Report report, List<String> problems) {
        ObjectNode document = MAPPER.createObjectNode();
        document.put("bootstrapServers", report.bootstrapServers());
        document.put("topic", report.topic());
        document.put("partitions", report.partitions());
        document.put("replicationFactor", report.replicationFactor());
        document.put("readAt", TextOutput.instant(report.readAt()));
        ArrayNode roles = document.putArray("roles");
        List<String> unreadable = new ArrayList<>();
        for (Report.RoleView view : report.roles()) {
            roles.add(shown(view, unreadable));
        }
        ObjectNode malformed = document.putObject("malformedRecords");
        ArrayNode partitionsRead = malformed.putArray("partitionsRead");
        report.partitionsRead().forEach(partitionsRead::add);
        malformed.put("count", report.malformedCount());
        ArrayNode examples = malformed.putArray("first");
        for (TopicReader.MalformedRecord record : report.malformed()) {
            examples.addObject()
                    .put("partition", record.partition())
                    .put("offset", record.offset())
                    .put("problem", record.problem())
                    .put("detail", record.detail());
        }
        ArrayNode warnings = document.putArray("warnings");
        report.warnings().forEach(warnings::add);
        unreadable.forEach(warnings::add);
        problems.addAll(unreadable);
        return WRITER.writeValueAsString(document) + "\n";
    }

    /** {@code document} in the layout above, for the doctor's report. */
    static String write(ObjectNode document) {
        return WRITER.writeValueAsString(document) + "\n";
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    private static ObjectNode shown(Report.RoleView view, List<String> problems) {
        String problem = view.problem();
        if (view.status() != null) {
            try {
                return role(view);
            } catch (RuntimeException e) {
                problem = "showing it failed: " + e;
            }
        }
        problems.add(TextOutput.unreadable(view, problem));
        ObjectNode role = MAPPER.createObjectNode();
        role.put("role", view.role().name());
        role.put("found", view.found());
        role.put("partition", view.partition());
        for (String field : List.of(
                "readUpTo",
                "holder",
                "holderUrl",
                "term",
                "current",
                "grantedAt",
                "deadline",
                "deadlineInMs",
                "leaseEpoch")) {
            role.putNull(field);
        }
        role.put("coordinatorAsked", view.coordinatorAsked());
        role.putNull("coordinator");
        role.putArray("roster");
        return role;
    }

    private static ObjectNode role(Report.RoleView view) {
        LeadershipStatus status = view.status();
        ObjectNode role = MAPPER.createObjectNode();
        role.put("role", status.role().name());
        role.put("found", view.found());
        role.put("partition", view.partition());
        role.put("readUpTo", status.readUpTo());
        LeaseSnapshot lease = status.lease().orElse(null);
        role.put("holder", lease == null ? null : lease.holder().value());
        // Where the holder answers HTTP, as it advertises itself on <topic>-members (describe only); else null.
        role.put("holderUrl", view.holderUrl());
        role.put("term", lease == null ? null : lease.token().term());
        // null: the cluster refused DescribeTransactions, so nobody asked the coordinator.
        role.put("current", view.coordinatorAsked() ? status.current() : null);
        role.put("grantedAt", lease == null ? null : TextOutput.instant(lease.grantedAt()));
        role.put("deadline", lease == null ? null : TextOutput.instant(lease.deadline()));
        // Saturated: a lease record may carry any deadline, Long.MIN_VALUE and Long.MAX_VALUE included.
        role.put("deadlineInMs", lease == null ? null : TextOutput.millisBetween(view.observedAt(), lease.deadline()));
        if (lease == null) {
            role.putNull("leaseEpoch");
        } else {
            role.putObject("leaseEpoch")
                    .put("producerId", lease.token().producerId())
                    .put("producerEpoch", lease.token().producerEpoch());
        }
        role.put("coordinatorAsked", view.coordinatorAsked());
        role.set(
                "coordinator", status.coordinator().map(JsonOutput::coordinator).orElse(null));
        ArrayNode roster = role.putArray("roster");
        for (RankedMember member : status.roster()) {
            roster.addObject()
                    .put("member", member.member().value())
                    .put("rank", member.rank())
                    .put("holder", member.holder())
                    .put("registrationOffset", member.registrationOffset())
                    .put("registeredAt", TextOutput.instant(member.registeredAt()));
        }
        return role;
    }

    private static ObjectNode coordinator(ProducerState state) {
        return MAPPER.createObjectNode()
                .put("producerId", state.producerId())
                .put("producerEpoch", state.producerEpoch())
                .put("state", state.state());
    }

    /** Objects and arrays one entry a line, two spaces a level; {@code "name": value}; {@code {}} and {@code []}. */
    private static DefaultPrettyPrinter layout() {
        Separators separators = Separators.createDefaultInstance()
                .withObjectNameValueSpacing(Separators.Spacing.AFTER)
                .withObjectEntrySpacing(Separators.Spacing.NONE)
                .withObjectEmptySeparator("")
                .withArrayElementSpacing(Separators.Spacing.NONE)
                .withArrayEmptySeparator("");
        DefaultIndenter indenter = new DefaultIndenter("  ", "\n");
        return new DefaultPrettyPrinter(separators).withObjectIndenter(indenter).withArrayIndenter(indenter);
    }

    /**
     * JSON's escapes, plus U+2028 and U+2029 (valid in role names): raw, they end a line
     * for JavaScript and for some log viewers.
     */
    private static final class LineSeparatorEscapes extends CharacterEscapes {

        private static final long serialVersionUID = 1L;

        private static final int[] ASCII = standardAsciiEscapesForJSON();

        @Override
        public int[] getEscapeCodesForAscii() {
            return ASCII;
        }

        @Override
        public SerializableString getEscapeSequence(int c) {
            return c == 0x2028 || c == 0x2029 ? new SerializedString(String.format("\\u%04x", c)) : null;
        }
    }
}
