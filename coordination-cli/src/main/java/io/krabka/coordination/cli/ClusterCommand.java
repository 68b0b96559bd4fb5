package io.krabka.coordination.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.BiFunction;
import java.util.function.Function;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** A command against the cluster: the options it shares with the others, and its output streams. */
abstract class ClusterCommand implements Callable<Integer> {

    @ParentCommand
    private CoordinationCli cli;

    @Spec
    private CommandSpec spec;

    /** The options every command takes. */
    final SharedOptions options() {
        return cli.options();
    }

    /** Where the result goes. */
    final PrintWriter out() {
        return spec.commandLine().getOut();
    }

    /** Where warnings and errors go. */
    final PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /**
     * Reads the topic with read-only clients, prints the report as tables or JSON, then its
     * warnings. Each role is rendered on its own: one that cannot be shown is added to
     * {@code unreadable}, and the others are still shown.
     */
    final Report show(
            Function<Inspection, Report> read,
            BiFunction<Report, List<String>, String> tables,
            List<String> unreadable) {
        SharedOptions options = options();
        Report report = Inspection.read(options, read);
        out().print(options.json() ? JsonOutput.write(report, unreadable) : tables.apply(report, unreadable));
        for (String warning : report.warnings()) {
            err().println("warning: " + warning);
        }
        for (String problem : unreadable) {
            err().println("warning: " + problem);
        }
        return report;
    }
}
