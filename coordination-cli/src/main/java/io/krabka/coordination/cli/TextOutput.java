package io.krabka.coordination.cli;

import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The default output: aligned tables. */
final class TextOutput {

    private static final String NONE = "-";
    /** The cells of a role that cannot be shown. */
    static final String UNREADABLE = "?";

    private TextOutput() {}

    /** {@code list}: one line per role, then the malformed records. */
    static String list(Report report) {
        return list(report, new ArrayList<>());
    }

    /**
     * {@code list}, each role rendered on its own: a role that cannot be shown gets a row
     * of {@value #UNREADABLE} and a line in {@code problems}, and the others are shown.
     */
    static String list(Report report, List<String> problems) {
        StringBuilder out = new StringBuilder();
        if (report.roles().isEmpty()) {
            out.append("No roles in topic ").append(report.topic()).append(".\n");
        } else {
            TextTable table =
                    new TextTable("ROLE", "PARTITION", "HOLDER", "TERM", "CURRENT", "DEADLINE", "ROSTER (RANK)");
            for (Report.RoleView view : report.roles()) {
                table.row(listRow(view, problems));
            }
            out.append(table.render());
        }
        out.append('\n').append(summary(report)).append('\n');
        malformed(report, out);
        return out.toString();
    }

    private static String[] listRow(Report.RoleView view, List<String> problems) {
        String problem = view.problem();
        LeadershipStatus status = view.status();
        if (status != null) {
            try {
                return new String[] {
                    status.role().name(),
                    Integer.toString(view.partition()),
                    holder(status),
                    term(status),
                    current(view),
                    deadline(status, view.observedAt()),
                    roster(status.roster())
                };
            } catch (RuntimeException e) {
                problem = "showing it failed: " + e;
            }
        }
        problems.add(unreadable(view, problem));
        return new String[] {
            view.role().name(),
            Integer.toString(view.partition()),
            UNREADABLE,
            UNREADABLE,
            UNREADABLE,
            UNREADABLE,
            UNREADABLE
        };
    }

    /** The line {@code problems} gets for a role that cannot be shown. */
    static String unreadable(Report.RoleView view, String problem) {
        return "role " + view.role().name() + " (partition " + view.partition() + ") cannot be shown: " + problem;
    }

    /** {@code describe}: the role's fields, its roster, then the malformed records of its partition. */
    static String describe(Report report) {
        return describe(report, new ArrayList<>());
    }

    /** {@code describe}; a role that cannot be shown is shown with why, and a line in {@code problems}. */
    static String describe(Report report, List<String> problems) {
        Report.RoleView view = report.roles().get(0);
        String problem = view.problem();
        if (view.status() != null) {
            try {
                return describe(report, view);
            } catch (RuntimeException e) {
                problem = "showing it failed: " + e;
            }
        }
        problems.add(unreadable(view, problem));
        TextTable fields = new TextTable();
        fields.row("Role:", view.role().name());
        fields.row("Topic:", report.topic() + ", partition " + view.partition() + " of " + report.partitions());
        fields.row("Problem:", problem);
        StringBuilder out = new StringBuilder(fields.render()).append('\n');
        out.append("Malformed records in partition ")
                .append(view.partition())
                .append(": ")
                .append(report.malformedCount())
                .append('\n');
        malformed(report, out);
        return out.toString();
    }

    private static String describe(Report report, Report.RoleView view) {
        LeadershipStatus status = view.status();
        TextTable fields = new TextTable();
        fields.row("Role:", status.role().name());
        fields.row(
                "Topic:",
                report.topic() + ", partition " + view.partition() + " of " + report.partitions()
                        + ", read up to offset " + status.readUpTo());
        fields.row(
                "Holder:",
                status.holder().isPresent()
                        ? status.holder().get().value()
                        : NONE + " (no lease: nobody holds the role)");
        if (view.holderUrl() != null) {
            fields.row("Holder URL:", view.holderUrl());
        }
        fields.row("Term:", term(status));
        fields.row("Current:", current(view) + currentNote(view));
        fields.row("Coordinator:", coordinator(view));
        fields.row("Lease epoch:", status.lease().map(TextOutput::leaseEpoch).orElse(NONE));
        fields.row("Granted at:", status.grantedAt().map(TextOutput::instant).orElse(NONE));
        fields.row("Deadline:", deadline(status, view.observedAt()));
        StringBuilder out = new StringBuilder(fields.render()).append('\n');
        if (status.roster().isEmpty()) {
            out.append("Roster: empty (no member is registered for the role)\n");
        } else {
            TextTable roster = new TextTable("MEMBER", "RANK", "REGISTRATION OFFSET", "REGISTERED AT");
            for (RankedMember member : status.roster()) {
                roster.row(
                        member.member().value(),
                        member.holder() ? "holder" : Integer.toString(member.rank()),
                        Long.toString(member.registrationOffset()),
                        instant(member.registeredAt()));
            }
            out.append(roster.render());
        }
        out.append('\n')
                .append("Malformed records in partition ")
                .append(view.partition())
                .append(": ")
                .append(report.malformedCount())
                .append('\n');
        malformed(report, out);
        return out.toString();
    }

    private static String summary(Report report) {
        int roles = report.roles().size();
        return roles + (roles == 1 ? " role" : " roles") + " in topic " + report.topic() + " (" + report.partitions()
                + " partitions, replication factor " + report.replicationFactor() + ") at " + instant(report.readAt())
                + "; malformed records: " + report.malformedCount();
    }

    private static void malformed(Report report, StringBuilder out) {
        if (report.malformed().isEmpty()) {
            return;
        }
        TextTable table = new TextTable("PARTITION", "OFFSET", "PROBLEM", "DETAIL");
        for (TopicReader.MalformedRecord record : report.malformed()) {
            table.row(
                    Integer.toString(record.partition()),
                    Long.toString(record.offset()),
                    record.problem(),
                    record.detail());
        }
        out.append('\n').append(table.render());
        if (report.malformedCount() > report.malformed().size()) {
            out.append("... and ")
                    .append(report.malformedCount() - report.malformed().size())
                    .append(" more\n");
        }
    }

    static String holder(LeadershipStatus status) {
        return status.holder().map(member -> member.value()).orElse(NONE);
    }

    static String term(LeadershipStatus status) {
        return status.lease().map(lease -> Long.toString(lease.token().term())).orElse(NONE);
    }

    static String current(Report.RoleView view) {
        if (!view.coordinatorAsked()) {
            return "unknown";
        }
        return view.status().current() ? "yes" : "no";
    }

    private static String currentNote(Report.RoleView view) {
        LeadershipStatus status = view.status();
        if (!view.coordinatorAsked()) {
            return " (the cluster refused DescribeTransactions for the role)";
        }
        if (status.current()) {
            return " (the transaction coordinator's epoch is one the holder's lease records carry)";
        }
        if (status.lease().isEmpty()) {
            return " (no lease)";
        }
        if (status.coordinator().isEmpty()) {
            return " (the transaction coordinator knows no transactional id "
                    + status.role().name() + ")";
        }
        return " (no lease record carries the coordinator's epoch: a challenger took a newer one, or the holder is"
                + " committing or was just granted; describe again to tell)";
    }

    private static String coordinator(Report.RoleView view) {
        if (!view.coordinatorAsked()) {
            return "not asked (refused)";
        }
        return view.status()
                .coordinator()
                .map(TextOutput::producer)
                .orElse(NONE + " (no transactional id " + view.status().role().name() + ")");
    }

    private static String producer(ProducerState state) {
        return "producer " + state.producerId() + ", epoch " + state.producerEpoch() + ", transaction state "
                + state.state();
    }

    private static String leaseEpoch(LeaseSnapshot lease) {
        return "producer " + lease.token().producerId() + ", epoch "
                + lease.token().producerEpoch() + " (the epoch the newest lease record carries)";
    }

    static String deadline(LeadershipStatus status, Instant now) {
        return status.deadline()
                .map(deadline -> instant(deadline) + " (" + remaining(deadline, now) + ")")
                .orElse(NONE);
    }

    /**
     * {@code in 4.8s} or {@code passed 2.0s ago}: the holder's clock against this machine's.
     * Any deadline a lease record can carry, {@code Long.MIN_VALUE} or {@code Long.MAX_VALUE}
     * milliseconds included, reads without overflow.
     */
    static String remaining(Instant deadline, Instant now) {
        Duration left = Duration.between(now, deadline);
        long millis = millisBetween(now, deadline);
        double seconds = millis == Long.MIN_VALUE || millis == Long.MAX_VALUE
                ? Math.abs((double) left.getSeconds())
                : Math.abs(millis) / 1000.0;
        String amount = String.format(Locale.ROOT, "%.1fs", seconds);
        return left.isNegative() ? "passed " + amount + " ago" : "in " + amount;
    }

    /**
     * The milliseconds from {@code from} to {@code to}, saturated at {@code Long.MIN_VALUE}
     * and {@code Long.MAX_VALUE}: a lease's times are whatever its writer put there, and
     * {@link Duration#toMillis()} overflows for two instants that far apart.
     */
    static long millisBetween(Instant from, Instant to) {
        Duration between = Duration.between(from, to);
        try {
            return between.toMillis();
        } catch (ArithmeticException overflow) {
            return between.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    static String roster(List<RankedMember> roster) {
        if (roster.isEmpty()) {
            return NONE;
        }
        return roster.stream()
                .map(member -> member.member().value() + (member.holder() ? " (holder)" : " (" + member.rank() + ")"))
                .collect(Collectors.joining(", "));
    }

    static String instant(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MILLIS).toString();
    }
}
