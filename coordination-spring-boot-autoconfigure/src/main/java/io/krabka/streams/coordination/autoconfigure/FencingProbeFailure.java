package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.probe.FencingProbeException;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.probe.ProbeCheck;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Boot's failure report for a fencing probe that failed at startup: each failed check, what it means, and its fix. */
final class FencingProbeFailure {

    private FencingProbeFailure() {}

    static FailureAnalysis analysis(FencingProbeException probed, Throwable failure) {
        FencingReport report = probed.report();
        StringBuilder description = new StringBuilder(
                        "krabka coordination will not contend: the fencing probe of cluster ")
                .append(report.clusterId())
                .append(" (")
                .append(report.bootstrapServers())
                .append(") failed ")
                .append(report.failures().size())
                .append(report.failures().size() == 1 ? " check" : " checks")
                .append(':');
        StringBuilder action = new StringBuilder();
        for (ProbeCheck check : report.failures()) {
            description
                    .append("\n  - ")
                    .append(check.name())
                    .append(": ")
                    .append(check.finding())
                    .append(". ")
                    .append(check.meaning())
                    .append('.');
            action.append(action.isEmpty() ? "" : "\n")
                    .append(check.name())
                    .append(": ")
                    .append(check.fix() == null ? "see docs/COMPATIBILITY.md for this backend" : check.fix())
                    .append('.');
        }
        action.append(
                "\nOnly on a development cluster: krabka.coordination.topic.allow-unsafe=true turns the replication and"
                        + " quorum checks into warnings; krabka.coordination.probe=warn logs failures and contends anyway.");
        return new FailureAnalysis(description.toString(), action.toString(), failure);
    }
}
