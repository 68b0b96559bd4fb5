package io.krabka.coordination.cli;

import io.krabka.streams.coordination.CoordinationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.kafka.common.KafkaException;
import picocli.AutoComplete.GenerateCompletion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code krabka-coordination-cli}: a read-only view of the coordination topic for
 * operators, in the spirit of {@code kafka-transactions.sh}.
 *
 * <pre>
 * java -jar krabka-coordination-cli.jar list --bootstrap-server HOST:PORT [--partitions N]
 * java -jar krabka-coordination-cli.jar describe --role NAME --bootstrap-server HOST:PORT [--output json]
 * java -jar krabka-coordination-cli.jar doctor --bootstrap-server HOST:PORT [--output json] [--read-only]
 * </pre>
 *
 * {@code list} and {@code describe} never write to the topic, never register, never run
 * InitProducerId and never create the topic: their clients are one admin and
 * {@code read_committed} consumers without a group. {@code doctor} runs the core's
 * {@code FencingProbe}, which writes to its probe topic only ({@link Doctor}).
 */
// scope = INHERIT: the subcommands share the help options, the version, the layout and the exit codes of this one.
@Command(
        name = "krabka-coordination-cli",
        scope = ScopeType.INHERIT,
        mixinStandardHelpOptions = true,
        versionProvider = CoordinationCli.Version.class,
        sortOptions = false,
        synopsisSubcommandLabel = "COMMAND",
        descriptionHeading = "%n",
        subcommands = {
            ListCommand.class,
            DescribeCommand.class,
            Doctor.class,
            HelpCommand.class,
            GenerateCompletion.class
        },
        description = {
            "A read-only view of the krabka coordination topic: who holds each role, under which",
            "term, until when, whether the transaction coordinator confirms the holder (current),",
            "and the roster of standbys with their ranks. list and describe never write to the",
            "topic, never register, never initialize a producer id, and never create the topic.",
            "doctor writes only to a probe topic of its own: see doctor --help.",
            "",
            "Run it as java -jar krabka-coordination-cli.jar COMMAND [OPTIONS]. The options",
            "below may stand before or after the command; a command's own options follow it."
        },
        commandListHeading = "%nCommands:%n",
        optionListHeading = "%nOptions:%n",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done",
            "1:the cluster or the topic failed (unreachable, missing topic, partition count%nmismatch, refused by ACLs), or describe could not show the role",
            "2:bad command line",
            "3:describe found no record of the role",
            "4:doctor: some check warned, none failed",
            "5:doctor: some check failed: do not contend on this cluster until it is fixed"
        })
public final class CoordinationCli implements Runnable {

    /** Done. */
    static final int EXIT_OK = 0;
    /**
     * The cluster or the topic failed: unreachable, missing topic, partition count mismatch,
     * ACLs; or {@code describe} could not show its role.
     */
    static final int EXIT_FAILED = 1;
    /** A bad command line. */
    static final int EXIT_USAGE = 2;
    /** {@code describe} found no record of the role in its partition. */
    static final int EXIT_ROLE_NOT_FOUND = 3;
    /** {@code doctor}: some check warned, none failed. */
    static final int EXIT_WARN = 4;
    /** {@code doctor}: some check failed. */
    static final int EXIT_FAIL = 5;

    @Spec
    private CommandSpec spec;

    @Mixin
    private SharedOptions options;

    private CoordinationCli() {}

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs one command line, printing the result to {@code out} and problems to
     * {@code err}; returns the exit code.
     */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        try {
            return commandLine().setOut(out).setErr(err).execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** The command line of the tool, with its subcommands, ready to parse or execute. */
    static CommandLine commandLine() {
        CoordinationCli cli = new CoordinationCli();
        CommandLine line = new CommandLine(cli);
        // "@file" is an argument like any other: no argument files.
        line.setExpandAtFiles(false);
        line.setCaseInsensitiveEnumValuesAllowed(true);
        line.setUsageHelpWidth(100);
        line.setUsageHelpLongOptionsMaxWidth(24);
        line.setParameterExceptionHandler(CoordinationCli::badCommandLine);
        line.setExecutionExceptionHandler((failure, failed, parsed) -> failed(failure, failed, cli.options));
        return line;
    }

    /** No command word: the tool does nothing on its own. */
    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "no command: use list, describe or doctor");
    }

    /** The options every command shares. */
    SharedOptions options() {
        return options;
    }

    /** A refused command line: one line naming the mistake, exit code {@value #EXIT_USAGE}; help wins over mistakes. */
    private static int badCommandLine(ParameterException e, String[] args) {
        CommandLine line = e.getCommandLine();
        if (line.isUsageHelpRequested()) {
            line.usage(line.getOut());
            return EXIT_OK;
        }
        PrintWriter err = line.getErr();
        if (line.getParent() == null
                && e instanceof UnmatchedArgumentException unmatched
                && !unmatched.isUnknownOption()) {
            err.println(
                    "error: unknown command \"" + unmatched.getUnmatched().get(0) + "\": use list, describe or doctor");
        } else {
            err.println("error: " + e.getMessage());
        }
        UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Run with --help for the usage.");
        return EXIT_USAGE;
    }

    /** A command that failed: one line on stderr, and the exit code that says why. */
    private static int failed(Exception failure, CommandLine line, SharedOptions options) {
        PrintWriter err = line.getErr();
        if (failure instanceof CliException e) {
            err.println("error: " + e.getMessage());
            return e.exitCode();
        }
        if (failure instanceof CoordinationException || failure instanceof KafkaException) {
            err.println("error: "
                    + Failures.of(line.getCommandName(), failure, options.bootstrap(), options.timeout())
                            .getMessage());
            return EXIT_FAILED;
        }
        err.println("error: unexpected failure, please report it: " + failure);
        failure.printStackTrace(err);
        return EXIT_FAILED;
    }

    /** The version Maven wrote into {@code krabka-coordination-cli.properties} at build time. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            Properties properties = new Properties();
            try (InputStream in = CoordinationCli.class.getResourceAsStream("/krabka-coordination-cli.properties")) {
                properties.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new String[] {"krabka-coordination-cli " + properties.getProperty("version")};
        }
    }
}
