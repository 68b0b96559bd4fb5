package io.krabka.coordination.cli;

import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --output json}: one document with the same shape for both commands ({@code roles}
 * holds one role for {@code describe}). Absent values are {@code null}, never left out.
 */
final class JsonOutput {

    private JsonOutput() {
    }

    static String write(Report report) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("bootstrapServers", report.bootstrapServers());
        document.put("topic", report.topic());
        document.put("partitions", report.partitions());
        document.put("replicationFactor", report.replicationFactor());
        document.put("readAt", TextOutput.instant(report.readAt()));
        List<Object> roles = new ArrayList<>();
        for (Report.RoleView view : report.roles()) {
            roles.add(role(view));
        }
        document.put("roles", roles);
        Map<String, Object> malformed = new LinkedHashMap<>();
        malformed.put("partitionsRead", report.partitionsRead());
        malformed.put("count", report.malformedCount());
        List<Object> examples = new ArrayList<>();
        for (TopicReader.MalformedRecord record : report.malformed()) {
            Map<String, Object> example = new LinkedHashMap<>();
            example.put("partition", record.partition());
            example.put("offset", record.offset());
            example.put("problem", record.problem());
            example.put("detail", record.detail());
            examples.add(example);
        }
        malformed.put("first", examples);
        document.put("malformedRecords", malformed);
        document.put("warnings", report.warnings());
        return Json.write(document);
    }

    private static Map<String, Object> role(Report.RoleView view) {
        LeadershipStatus status = view.status();
        Map<String, Object> role = new LinkedHashMap<>();
        role.put("role", status.role().name());
        role.put("found", view.found());
        role.put("partition", view.partition());
        role.put("readUpTo", status.readUpTo());
        LeaseSnapshot lease = status.lease().orElse(null);
        role.put("holder", lease == null ? null : lease.holder().value());
        role.put("term", lease == null ? null : lease.token().term());
        // null: the cluster refused DescribeTransactions, so nobody asked the coordinator.
        role.put("current", view.coordinatorAsked() ? status.current() : null);
        role.put("grantedAt", lease == null ? null : TextOutput.instant(lease.grantedAt()));
        role.put("deadline", lease == null ? null : TextOutput.instant(lease.deadline()));
        role.put("deadlineInMs", lease == null ? null : Duration.between(view.observedAt(), lease.deadline()).toMillis());
        Map<String, Object> leaseEpoch = null;
        if (lease != null) {
            leaseEpoch = new LinkedHashMap<>();
            leaseEpoch.put("producerId", lease.token().producerId());
            leaseEpoch.put("producerEpoch", lease.token().producerEpoch());
        }
        role.put("leaseEpoch", leaseEpoch);
        role.put("coordinatorAsked", view.coordinatorAsked());
        role.put("coordinator", status.coordinator().map(JsonOutput::coordinator).orElse(null));
        List<Object> roster = new ArrayList<>();
        for (RankedMember member : status.roster()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("member", member.member().value());
            entry.put("rank", member.rank());
            entry.put("holder", member.holder());
            entry.put("registrationOffset", member.registrationOffset());
            entry.put("registeredAt", TextOutput.instant(member.registeredAt()));
            roster.add(entry);
        }
        role.put("roster", roster);
        return role;
    }

    private static Map<String, Object> coordinator(ProducerState state) {
        Map<String, Object> coordinator = new LinkedHashMap<>();
        coordinator.put("producerId", state.producerId());
        coordinator.put("producerEpoch", state.producerEpoch());
        coordinator.put("state", state.state());
        return coordinator;
    }
}
