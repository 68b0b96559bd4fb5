package io.krabka.coordination.cli;

import io.krabka.streams.coordination.Role;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code describe}: one role, with its roster in detail. */
@Command(name = "describe", description = "one role, with its roster in detail (needs --role)")
final class DescribeCommand extends ClusterCommand {

    @Option(
            names = "--role",
            required = true,
            order = 5,
            paramLabel = "NAME",
            converter = RoleName.class,
            description = "the role to describe")
    private Role role;

    @Override
    public Integer call() {
        List<String> unreadable = new ArrayList<>();
        Report report = show(inspection -> inspection.describe(role), TextOutput::describe, unreadable);
        if (!unreadable.isEmpty()) {
            err().println("error: role " + role.name() + " cannot be shown; please report it with the warning above");
            return CoordinationCli.EXIT_FAILED;
        }
        Report.RoleView view = report.roles().get(0);
        if (!view.found()) {
            err().println("error: no record of role " + role.name() + " in partition " + view.partition() + " of topic "
                    + report.topic()
                    + ": no member registered for it (or its records were compacted away). Check --role");
            return CoordinationCli.EXIT_ROLE_NOT_FOUND;
        }
        return CoordinationCli.EXIT_OK;
    }

    /** A role name, as {@link Role#of} accepts it. */
    static final class RoleName implements ITypeConverter<Role> {
        @Override
        public Role convert(String value) {
            try {
                return Role.of(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
