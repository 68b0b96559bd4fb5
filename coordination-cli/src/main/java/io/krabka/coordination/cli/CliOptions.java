package io.krabka.coordination.cli;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.OverwrittenOptionException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The command line, declared for picocli: one command word and {@code --flag value} or
 * {@code --flag=value} options, in any order, each at most once. {@link #parse} is the
 * only way to get one; the usage text is generated from the same declarations.
 */
@CommandLine.Command(name = "krabka-coordination-cli", synopsisHeading = "Usage: ",
        customSynopsis = "java -jar krabka-coordination-cli.jar COMMAND --bootstrap-server HOST:PORT [OPTIONS]",
        description = {
            "",
            "A read-only view of the krabka coordination topic: who holds each role, under which",
            "term, until when, whether the transaction coordinator confirms the holder (current),",
            "and the roster of standbys with their ranks. list and describe never write to the",
            "topic, never register, never initialize a producer id, and never create the topic.",
            "",
            "doctor is the one command that writes, and only to the probe topic <topic>-probe",
            "(created on first use, one hour retention) under a scratch transactional id",
            "<topic>-probe-<random>: it checks that the cluster fences a superseded producer and",
            "hides aborted records, besides the topic's and the brokers' settings. It never",
            "writes to the coordination topic; with --read-only it writes nothing.",
            "",
            "Commands:",
            "  list                      every role that has records in the topic",
            "  describe --role NAME      one role, with its roster in detail",
            "  doctor                    the fencing probe: PASS, WARN or FAIL for each check"},
        optionListHeading = "%nOptions:%n", sortOptions = false, usageHelpWidth = 100,
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done",
            "1:the cluster or the topic failed (unreachable, missing topic, partition count%nmismatch, refused by ACLs), or describe could not show the role",
            "2:bad command line",
            "3:describe found no record of the role",
            "4:doctor: some check warned, none failed",
            "5:doctor: some check failed: do not contend on this cluster until it is fixed"})
final class CliOptions {

    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    /** The commands. */
    enum Command {
        LIST, DESCRIBE, DOCTOR, HELP
    }

    /** The output formats. */
    enum Output {
        TEXT, JSON
    }

    // The option names, shared by the declarations and the messages of their converters.
    private static final String BOOTSTRAP_SERVER = "--bootstrap-server";
    private static final String COMMAND_CONFIG = "--command-config";
    private static final String TOPIC = "--topic";
    private static final String PARTITIONS = "--partitions";
    private static final String ROLE = "--role";
    private static final String OUTPUT = "--output";
    private static final String TIMEOUT = "--timeout";
    private static final String ROLES = "--roles";
    private static final String READ_ONLY = "--read-only";
    private static final String ALLOW_UNSAFE = "--allow-unsafe";

    @Parameters(index = "0", arity = "0..1", paramLabel = "COMMAND", hidden = true, converter = CommandWord.class)
    private Command command;

    @Option(names = BOOTSTRAP_SERVER, order = 1, paramLabel = "HOST:PORT[,HOST:PORT...]", converter = BootstrapValue.class,
            description = {"the Kafka cluster (required unless the command config", "sets bootstrap.servers)"})
    private String bootstrapServer;

    @Option(names = COMMAND_CONFIG, order = 2, paramLabel = "FILE", converter = PathValue.class,
            description = {"Kafka client properties (security.protocol, ssl.*, sasl.*),", "as for Kafka's own tools"})
    private Path commandConfig;

    @Option(names = TOPIC, order = 3, paramLabel = "NAME", converter = TopicValue.class,
            description = "the coordination topic (default __coordination_state)")
    private String topic = CoordinationCodec.COORDINATION_STATE_TOPIC;

    // A '%' in a description is a format specifier for picocli: '%%' prints one.
    @Option(names = PARTITIONS, order = 4, paramLabel = "N", converter = PartitionsValue.class,
            description = {"the partition count the members are configured with", "(krabka.coordination.topic.partitions, default 50); must",
                "equal the topic's: a role's partition is", "murmur2(role) %% partitions"})
    private int partitions = TopicSpec.DEFAULT_PARTITIONS;

    @Option(names = ROLE, order = 5, paramLabel = "NAME", converter = RoleValue.class, description = "the role to describe")
    private Role role;

    @Option(names = OUTPUT, order = 6, paramLabel = "text|json", converter = OutputValue.class,
            description = "aligned tables (default) or one JSON document")
    private Output output = Output.TEXT;

    @Option(names = TIMEOUT, order = 7, paramLabel = "DURATION", converter = TimeoutValue.class,
            description = {"how long one cluster operation may wait before the tool", "gives up: 30s (default), 500ms, 2m; a bare number is seconds"})
    private Duration timeout = DEFAULT_TIMEOUT;

    @Option(names = ROLES, order = 8, paramLabel = "N", converter = RolesValue.class,
            description = {"doctor: how many roles a member contends for, for the", "connection estimate (default: not given)"})
    private int roles;

    @Option(names = READ_ONLY, order = 9, description = {"doctor: write nothing; the live fence and the", "aborted-read canary are skipped"})
    private boolean readOnly;

    @Option(names = ALLOW_UNSAFE, order = 10, description = {"doctor: a development cluster (as", "krabka.coordination.topic.allow-unsafe):"
        + " settings", "that void the quorum claim WARN instead of FAIL"})
    private boolean allowUnsafe;

    @Option(names = {"-h", "--help"}, order = 11, usageHelp = true, description = "this text")
    private boolean help;

    private CliOptions() {
    }

    /** What to show. */
    Command command() {
        return command;
    }

    /** The Kafka cluster, as {@code HOST:PORT[,HOST:PORT...]}; null when only the command config names it. */
    String bootstrapServer() {
        return bootstrapServer;
    }

    /** A client properties file (TLS, SASL), or null. */
    Path commandConfig() {
        return commandConfig;
    }

    /** The coordination topic. */
    String topic() {
        return topic;
    }

    /** The partition count the members are configured with. */
    int partitions() {
        return partitions;
    }

    /** The role to describe; null for {@code list}. */
    Role role() {
        return role;
    }

    /** The output format. */
    Output output() {
        return output;
    }

    /** How long one cluster operation may wait. */
    Duration timeout() {
        return timeout;
    }

    /** doctor: the role count of a member, for the connection estimate; 0 when not given. */
    int roles() {
        return roles;
    }

    /** doctor: whether to skip the checks that write. */
    boolean readOnly() {
        return readOnly;
    }

    /** doctor: whether unsafe topic and broker settings are accepted with a WARN. */
    boolean allowUnsafe() {
        return allowUnsafe;
    }

    /**
     * Parses the arguments. {@code -h}, {@code --help} or the word {@code help} give
     * {@link Command#HELP}, even when a mistake follows them on the line.
     *
     * @throws CliException with exit code 2 when they are not a valid command line; the
     *     message names the option or argument at fault
     */
    static CliOptions parse(String... args) {
        CliOptions options = new CliOptions();
        CommandLine line = commandLine(options);
        try {
            line.parseArgs(args);
        } catch (ParameterException e) {
            if (options.help) {
                return help();
            }
            throw CliException.usage(message(e, options));
        }
        if (options.help || options.command == Command.HELP) {
            return help();
        }
        if (options.command == null) {
            throw CliException.usage("no command: use list, describe or doctor");
        }
        if (options.command != Command.DOCTOR && (options.roles != 0 || options.readOnly || options.allowUnsafe)) {
            throw CliException.usage(ROLES + ", " + READ_ONLY + " and " + ALLOW_UNSAFE + " apply to doctor only");
        }
        if (options.command == Command.DOCTOR && options.role != null) {
            throw CliException.usage("doctor checks the cluster, not one role: leave out " + ROLE);
        }
        if (options.command == Command.DESCRIBE && options.role == null) {
            throw CliException.usage("describe needs --role NAME");
        }
        if (options.command == Command.LIST && options.role != null) {
            throw CliException.usage("list shows every role; use describe --role " + options.role.name() + " for one");
        }
        return options;
    }

    /** The usage text, generated from the declarations above. */
    static String usage() {
        return commandLine(new CliOptions()).getUsageMessage(Help.Ansi.OFF);
    }

    private static CliOptions help() {
        CliOptions help = new CliOptions();
        help.command = Command.HELP;
        return help;
    }

    private static CommandLine commandLine(CliOptions options) {
        CommandLine line = new CommandLine(options);
        // "@file" is an argument like any other: no argument files.
        line.setExpandAtFiles(false);
        line.setUsageHelpLongOptionsMaxWidth(24);
        // The usage shows "--flag VALUE", the spelling the docs use; both spellings parse.
        line.setHelpFactory((spec, colors) -> new Help(spec, colors) {
            @Override
            public Help.IParamLabelRenderer parameterLabelRenderer() {
                return new SpaceSeparatedLabels();
            }
        });
        return line;
    }

    /** The message for a picocli refusal, in the words the tool has always used. */
    private static String message(ParameterException e, CliOptions options) {
        if (e.getCause() instanceof TypeConversionException conversion) {
            return conversion.getMessage();
        }
        if (e instanceof OverwrittenOptionException overwritten) {
            return "option " + name(overwritten.getOverwritten()) + " is given twice";
        }
        if (e instanceof MissingParameterException missing && !missing.getMissing().isEmpty()
                && missing.getMissing().get(0).isOption()) {
            return "option " + name(missing.getMissing().get(0)) + " needs a value";
        }
        if (e instanceof UnmatchedArgumentException unmatched && !unmatched.getUnmatched().isEmpty()) {
            String argument = unmatched.getUnmatched().get(0);
            if (argument.startsWith("-")) {
                int equals = argument.indexOf('=');
                String flag = equals > 0 ? argument.substring(0, equals) : argument;
                List<String> suggestions = unmatched.getSuggestions();
                return "unknown option " + flag + (suggestions.isEmpty() ? "" : " (did you mean " + suggestions.get(0) + "?)");
            }
            if (options.command != null) {
                return "unexpected argument \"" + argument + "\" after the command " + options.command.name().toLowerCase(Locale.ROOT);
            }
        }
        return e.getMessage();
    }

    private static String name(ArgSpec arg) {
        return arg instanceof OptionSpec option ? option.longestName() : arg.paramLabel();
    }

    /**
     * One option's converter: refuses an empty value the way every option does, and
     * throws the tool's message as a {@link TypeConversionException}.
     */
    private abstract static class Value<T> implements ITypeConverter<T> {

        private final String option;

        Value(String option) {
            this.option = option;
        }

        @Override
        public final T convert(String value) {
            if (value.isEmpty()) {
                throw new TypeConversionException("option " + option + " needs a value");
            }
            return parse(option, value);
        }

        abstract T parse(String option, String value);
    }

    static final class BootstrapValue extends Value<String> {
        BootstrapValue() {
            super(BOOTSTRAP_SERVER);
        }

        @Override
        String parse(String option, String value) {
            return value;
        }
    }

    static final class PathValue extends Value<Path> {
        PathValue() {
            super(COMMAND_CONFIG);
        }

        @Override
        Path parse(String option, String value) {
            return Path.of(value);
        }
    }

    static final class TopicValue extends Value<String> {
        TopicValue() {
            super(TOPIC);
        }

        @Override
        String parse(String option, String value) {
            if (value.isBlank()) {
                throw new TypeConversionException(option + " must not be blank");
            }
            return value;
        }
    }

    static final class PartitionsValue extends Value<Integer> {
        PartitionsValue() {
            super(PARTITIONS);
        }

        @Override
        Integer parse(String option, String value) {
            try {
                int parsed = Integer.parseInt(value);
                if (parsed > 0) {
                    return parsed;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new TypeConversionException(option + " must be a positive whole number, not \"" + value + "\"");
        }
    }

    static final class RolesValue extends Value<Integer> {
        RolesValue() {
            super(ROLES);
        }

        @Override
        Integer parse(String option, String value) {
            try {
                int parsed = Integer.parseInt(value);
                if (parsed > 0) {
                    return parsed;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new TypeConversionException(option + " must be a positive whole number, not \"" + value + "\"");
        }
    }

    static final class RoleValue extends Value<Role> {
        RoleValue() {
            super(ROLE);
        }

        @Override
        Role parse(String option, String value) {
            try {
                return Role.of(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(option + ": " + e.getMessage());
            }
        }
    }

    static final class OutputValue extends Value<Output> {
        OutputValue() {
            super(OUTPUT);
        }

        @Override
        Output parse(String option, String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "text" -> Output.TEXT;
                case "json" -> Output.JSON;
                default -> throw new TypeConversionException(option + " must be text or json, not \"" + value + "\"");
            };
        }
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, or a bare number of seconds. */
    static final class TimeoutValue extends Value<Duration> {
        TimeoutValue() {
            super(TIMEOUT);
        }

        @Override
        Duration parse(String option, String value) {
            String text = value.trim().toLowerCase(Locale.ROOT);
            Duration parsed = null;
            try {
                if (text.endsWith("ms")) {
                    parsed = Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
                } else if (text.endsWith("s")) {
                    parsed = Duration.ofSeconds(Long.parseLong(text.substring(0, text.length() - 1)));
                } else if (text.endsWith("m")) {
                    parsed = Duration.ofMinutes(Long.parseLong(text.substring(0, text.length() - 1)));
                } else {
                    parsed = Duration.ofSeconds(Long.parseLong(text));
                }
            } catch (NumberFormatException | ArithmeticException e) {
                // reported below
            }
            if (parsed == null || parsed.isNegative() || parsed.isZero() || parsed.toMillis() > Integer.MAX_VALUE) {
                throw new TypeConversionException(option + " must be a positive duration such as 30s, 500ms or 2m, not \""
                        + value + "\"");
            }
            return parsed;
        }
    }

    /** The command word: {@code list}, {@code describe}, or {@code help}. */
    static final class CommandWord implements ITypeConverter<Command> {
        @Override
        public Command convert(String word) {
            return switch (word) {
                case "list" -> Command.LIST;
                case "describe" -> Command.DESCRIBE;
                case "doctor" -> Command.DOCTOR;
                case "help" -> Command.HELP;
                default -> throw new TypeConversionException("unknown command \"" + word + "\": use list, describe or doctor");
            };
        }
    }

    /** Labels as {@code --flag VALUE}: every option here takes exactly one value. */
    private static final class SpaceSeparatedLabels implements Help.IParamLabelRenderer {
        @Override
        public Help.Ansi.Text renderParameterLabel(ArgSpec arg, Help.Ansi ansi, List<Help.Ansi.IStyle> styles) {
            String label = arg.arity().max() == 0 ? "" : (arg.isOption() ? " " : "") + arg.paramLabel();
            return ansi.new Text(label);
        }

        @Override
        public String separator() {
            return " ";
        }
    }
}
