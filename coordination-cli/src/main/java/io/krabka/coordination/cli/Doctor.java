package io.krabka.coordination.cli;

import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.probe.ProbeCheck;
import io.krabka.streams.coordination.probe.ProbeStatus;
import io.krabka.streams.coordination.transport.TopicSpec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code doctor}: runs the core's {@link FencingProbe} against the cluster and prints its
 * report. The one command that writes, and only to the probe topic
 * ({@code <topic>-probe}) under a scratch transactional id, never to the coordination
 * topic; {@code --read-only} writes nothing.
 */
@Command(
        name = "doctor",
        description = "the fencing probe: PASS, WARN or FAIL for each check",
        footerHeading = "%n",
        footer = {
            "doctor is the one command that writes, and only to the probe topic <topic>-probe",
            "(created on first use, one hour retention) under a scratch transactional id",
            "<topic>-probe-<random>: it checks that the cluster fences a superseded producer and",
            "hides aborted records, besides the topic's and the brokers' settings. It never",
            "writes to the coordination topic; with --read-only it writes nothing."
        })
final class Doctor extends ClusterCommand {

    @Option(
            names = "--roles",
            order = 8,
            paramLabel = "N",
            converter = SharedOptions.PositiveNumber.class,
            description = {"how many roles a member contends for, for the", "connection estimate (default: not given)"})
    private int roles;

    @Option(
            names = "--read-only",
            order = 9,
            description = {"write nothing; the live fence and the", "aborted-read canary are skipped"})
    private boolean readOnly;

    @Option(
            names = "--allow-unsafe",
            order = 10,
            description = {
                "a development cluster (as krabka.coordination.topic.allow-unsafe):",
                "settings that void the quorum claim WARN instead of FAIL"
            })
    private boolean allowUnsafe;

    @Override
    public Integer call() {
        SharedOptions options = options();
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName(options.topic())
                .withPartitions(options.partitions())
                .withReplicationFactor(allowUnsafe ? 1 : TopicSpec.DEFAULT_REPLICATION_FACTOR)
                .withAllowUnsafe(allowUnsafe);
        FencingReport report = FencingProbe.builder(options.connection())
                .topic(topic)
                .timeout(options.timeout())
                .roles(roles)
                .readOnly(readOnly)
                .build()
                .run();
        out().print(options.json() ? json(report) : text(report));
        return exitCode(report);
    }

    /** 0 when every check passed, {@value CoordinationCli#EXIT_WARN} when some warn, {@value CoordinationCli#EXIT_FAIL} when some failed. */
    static int exitCode(FencingReport report) {
        return switch (report.status()) {
            case FAIL -> CoordinationCli.EXIT_FAIL;
            case WARN -> CoordinationCli.EXIT_WARN;
            default -> CoordinationCli.EXIT_OK;
        };
    }

    /** For people: what was checked, a table of the checks, then what each WARN and FAIL means and its fix. */
    static String text(FencingReport report) {
        StringBuilder out = new StringBuilder();
        out.append("Cluster ")
                .append(report.clusterId())
                .append(" at ")
                .append(report.bootstrapServers())
                .append(", coordination topic ")
                .append(report.topic())
                .append('\n');
        out.append(
                report.readOnly()
                        ? "Read-only: nothing written\n"
                        : "Wrote to probe topic " + report.probeTopic() + " as transactional id "
                                + report.transactionalId() + "\n");
        out.append('\n');
        TextTable table = new TextTable("CHECK", "STATUS", "FINDING");
        for (ProbeCheck check : report.checks()) {
            table.row(check.name(), check.status().name(), check.finding());
        }
        out.append(table.render());
        boolean first = true;
        for (ProbeCheck check : report.checks()) {
            if (check.status() == ProbeStatus.WARN || check.status() == ProbeStatus.FAIL) {
                out.append(first ? "\n" : "")
                        .append(check.status())
                        .append(' ')
                        .append(check.name())
                        .append(": ")
                        .append(check.meaning())
                        .append('.')
                        .append(check.fix() == null ? "" : " Fix: " + check.fix() + ".")
                        .append('\n');
                first = false;
            }
        }
        out.append('\n')
                .append(report.status())
                .append(" (")
                .append(report.failures().size())
                .append(" failed, ")
                .append(report.warnings().size())
                .append(" warned, ")
                .append(report.skipped().size())
                .append(" skipped) in ")
                .append(report.tookMillis())
                .append(" ms\n");
        return out.toString();
    }

    /** For scripts and issues: the whole report as one JSON document. */
    static String json(FencingReport report) {
        ObjectNode document = JsonOutput.object();
        document.put("clusterId", report.clusterId());
        document.put("bootstrapServers", report.bootstrapServers());
        document.put("topic", report.topic());
        document.put("probeTopic", report.probeTopic());
        document.put("transactionalId", report.transactionalId());
        document.put("readOnly", report.readOnly());
        document.put("startedAt", TextOutput.instant(report.startedAt()));
        document.put("tookMillis", report.tookMillis());
        document.put("status", report.status().name());
        ArrayNode checks = document.putArray("checks");
        for (ProbeCheck check : report.checks()) {
            checks.addObject()
                    .put("name", check.name())
                    .put("status", check.status().name())
                    .put("finding", check.finding())
                    .put("meaning", check.meaning())
                    .put("fix", check.fix());
        }
        return JsonOutput.write(document);
    }
}
