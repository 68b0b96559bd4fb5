package io.krabka.coordination.cli;

import java.util.ArrayList;
import picocli.CommandLine.Command;

/** {@code list}: every role that has records in the topic, one line each. */
@Command(name = "list", description = "every role that has records in the topic")
final class ListCommand extends ClusterCommand {

    @Override
    public Integer call() {
        // A role that cannot be shown is a warning: list shows the others and succeeds.
        show(Inspection::list, TextOutput::list, new ArrayList<>());
        return CoordinationCli.EXIT_OK;
    }
}
