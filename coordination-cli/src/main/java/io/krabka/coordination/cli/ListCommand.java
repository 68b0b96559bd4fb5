package io.krabka.coordination.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code list}: every role that has records in the topic, one line each. */
@Command(name = "list", description = "every role that has records in the topic")
final class ListCommand implements Callable<Integer> {

    @ParentCommand
    private CoordinationCli cli;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        SharedOptions options = cli.options();
        Report report = Inspection.read(options, Inspection::list);
        // Each role is rendered on its own: one that cannot be shown is reported, and the others still are.
        List<String> unreadable = new ArrayList<>();
        String shown = options.json() ? JsonOutput.write(report, unreadable) : TextOutput.list(report, unreadable);
        Inspection.print(spec.commandLine(), shown, report, unreadable);
        return CoordinationCli.EXIT_OK;
    }
}
