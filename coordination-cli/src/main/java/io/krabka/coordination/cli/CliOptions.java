package io.krabka.coordination.cli;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The parsed command line. A plain parser: {@code --flag value} or {@code --flag=value},
 * one command word, nothing else.
 *
 * @param command what to show
 * @param bootstrapServer the Kafka cluster, as {@code HOST:PORT[,HOST:PORT...]}; null when
 *     only the command config names it
 * @param commandConfig a client properties file (TLS, SASL), or null
 * @param topic the coordination topic
 * @param partitions the partition count the members are configured with
 * @param role the role to describe; null for {@code list}
 * @param output the output format
 * @param timeout how long one cluster operation may wait
 */
record CliOptions(Command command, String bootstrapServer, Path commandConfig, String topic, int partitions, Role role,
        Output output, Duration timeout) {

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    /** The commands. */
    enum Command {
        LIST, DESCRIBE, HELP
    }

    /** The output formats. */
    enum Output {
        TEXT, JSON
    }

    CliOptions {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(timeout, "timeout");
    }

    static final String USAGE = """
            Usage: java -jar krabka-coordination-cli.jar COMMAND --bootstrap-server HOST:PORT [OPTIONS]

            A read-only view of the krabka coordination topic: who holds each role, under which
            term, until when, whether the transaction coordinator confirms the holder (current),
            and the roster of standbys with their ranks. It never writes to the topic, never
            registers, never initializes a producer id, and never creates the topic.

            Commands:
              list                      every role that has records in the topic
              describe --role NAME      one role, with its roster in detail

            Options:
              --bootstrap-server HOST:PORT[,HOST:PORT...]
                                        the Kafka cluster (required unless the command config
                                        sets bootstrap.servers)
              --command-config FILE     Kafka client properties (security.protocol, ssl.*, sasl.*),
                                        as for Kafka's own tools
              --topic NAME              the coordination topic (default __coordination_state)
              --partitions N            the partition count the members are configured with
                                        (krabka.coordination.topic.partitions, default 50); must
                                        equal the topic's: a role's partition is
                                        murmur2(role) % partitions
              --role NAME               the role to describe
              --output text|json        aligned tables (default) or one JSON document
              --timeout DURATION        how long one cluster operation may wait before the tool
                                        gives up: 30s (default), 500ms, 2m; a bare number is seconds
              -h, --help                this text

            Exit codes: 0 done; 1 the cluster or the topic failed (unreachable, missing topic,
            partition count mismatch, refused by ACLs); 2 bad command line; 3 describe found no
            record of the role.
            """;

    /**
     * Parses the arguments.
     *
     * @throws CliException with exit code 2 when they are not a valid command line
     */
    static CliOptions parse(String... args) {
        Command command = null;
        String bootstrap = null;
        Path commandConfig = null;
        String topic = CoordinationCodec.COORDINATION_STATE_TOPIC;
        int partitions = TopicSpec.DEFAULT_PARTITIONS;
        Role role = null;
        Output output = Output.TEXT;
        Duration timeout = DEFAULT_TIMEOUT;
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                return help();
            }
            if (!arg.startsWith("-")) {
                if (command != null) {
                    throw CliException.usage("unexpected argument \"" + arg + "\" after the command " + name(command));
                }
                command = command(arg);
                continue;
            }
            String flag = arg;
            String value;
            int equals = arg.indexOf('=');
            if (arg.startsWith("--") && equals > 0) {
                flag = arg.substring(0, equals);
                value = arg.substring(equals + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                value = null;
            }
            if (!FLAGS.contains(flag)) {
                throw CliException.usage("unknown option " + flag);
            }
            if (seen.contains(flag)) {
                throw CliException.usage("option " + flag + " is given twice");
            }
            seen.add(flag);
            if (value == null || value.isEmpty()) {
                throw CliException.usage("option " + flag + " needs a value");
            }
            switch (flag) {
                case "--bootstrap-server" -> bootstrap = value;
                case "--command-config" -> commandConfig = Path.of(value);
                case "--topic" -> topic = requireTopic(value);
                case "--partitions" -> partitions = positive(flag, value);
                case "--role" -> role = role(value);
                case "--output" -> output = output(value);
                case "--timeout" -> timeout = duration(flag, value);
                default -> throw new IllegalStateException("unhandled option " + flag);
            }
        }
        if (command == null) {
            throw CliException.usage("no command: use list or describe");
        }
        if (command == Command.DESCRIBE && role == null) {
            throw CliException.usage("describe needs --role NAME");
        }
        if (command == Command.LIST && role != null) {
            throw CliException.usage("list shows every role; use describe --role " + role.name() + " for one");
        }
        return new CliOptions(command, bootstrap, commandConfig, topic, partitions, role, output, timeout);
    }

    private static final List<String> FLAGS = List.of("--bootstrap-server", "--command-config", "--topic", "--partitions",
            "--role", "--output", "--timeout");

    private static CliOptions help() {
        return new CliOptions(Command.HELP, null, null, CoordinationCodec.COORDINATION_STATE_TOPIC,
                TopicSpec.DEFAULT_PARTITIONS, null, Output.TEXT, DEFAULT_TIMEOUT);
    }

    private static Command command(String word) {
        return switch (word) {
            case "list" -> Command.LIST;
            case "describe" -> Command.DESCRIBE;
            case "help" -> Command.HELP;
            default -> throw CliException.usage("unknown command \"" + word + "\": use list or describe");
        };
    }

    private static String name(Command command) {
        return command.name().toLowerCase(Locale.ROOT);
    }

    private static String requireTopic(String value) {
        if (value.isBlank()) {
            throw CliException.usage("--topic must not be blank");
        }
        return value;
    }

    private static Role role(String value) {
        try {
            return Role.of(value);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--role: " + e.getMessage());
        }
    }

    private static Output output(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "text" -> Output.TEXT;
            case "json" -> Output.JSON;
            default -> throw CliException.usage("--output must be text or json, not \"" + value + "\"");
        };
    }

    private static int positive(String flag, String value) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed > 0) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw CliException.usage(flag + " must be a positive whole number, not \"" + value + "\"");
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, or a bare number of seconds. */
    static Duration duration(String flag, String value) {
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
        } catch (NumberFormatException e) {
            // reported below
        }
        if (parsed == null || parsed.isNegative() || parsed.isZero() || parsed.toMillis() > Integer.MAX_VALUE) {
            throw CliException.usage(flag + " must be a positive duration such as 30s, 500ms or 2m, not \"" + value + "\"");
        }
        return parsed;
    }
}
