package io.krabka.coordination.cli;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.probe.FencingReport;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.KafkaException;

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
public final class CoordinationCli {

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

    private CoordinationCli() {
    }

    public static void main(String[] args) {
        int exitCode = run(args, System.out, System.err);
        System.out.flush();
        System.exit(exitCode);
    }

    /**
     * Runs one command line, printing the result to {@code out} and problems to
     * {@code err}; returns the exit code.
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        CliOptions options;
        try {
            options = CliOptions.parse(args);
        } catch (CliException e) {
            err.println("error: " + e.getMessage());
            err.println("Run with --help for the usage.");
            return e.exitCode();
        }
        if (options.command() == CliOptions.Command.HELP) {
            out.print(CliOptions.usage());
            return EXIT_OK;
        }
        String bootstrap = "?";
        try {
            Map<String, Object> connection = connection(options);
            bootstrap = String.valueOf(connection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
            if (options.command() == CliOptions.Command.DOCTOR) {
                FencingReport probed = Doctor.run(connection, options);
                out.print(options.output() == CliOptions.Output.JSON ? Doctor.json(probed) : Doctor.text(probed));
                return Doctor.exitCode(probed);
            }
            Report report;
            try (ReadOnlyCluster cluster = new ReadOnlyCluster(connection, options.timeout())) {
                Inspection inspection = new Inspection(cluster, options, bootstrap);
                report = options.command() == CliOptions.Command.LIST ? inspection.list() : inspection.describe(options.role());
            }
            boolean json = options.output() == CliOptions.Output.JSON;
            // Each role is rendered on its own: one that cannot be shown is reported, and the others still are.
            List<String> unreadable = new ArrayList<>();
            if (json) {
                out.print(JsonOutput.write(report, unreadable));
            } else {
                out.print(options.command() == CliOptions.Command.LIST ? TextOutput.list(report, unreadable)
                        : TextOutput.describe(report, unreadable));
            }
            for (String warning : report.warnings()) {
                err.println("warning: " + warning);
            }
            for (String problem : unreadable) {
                err.println("warning: " + problem);
            }
            if (options.command() == CliOptions.Command.DESCRIBE && !unreadable.isEmpty()) {
                err.println("error: role " + options.role().name() + " cannot be shown; please report it with the warning above");
                return EXIT_FAILED;
            }
            if (options.command() == CliOptions.Command.DESCRIBE && !report.roles().get(0).found()) {
                Report.RoleView view = report.roles().get(0);
                err.println("error: no record of role " + options.role().name() + " in partition " + view.partition() + " of topic "
                        + report.topic() + ": no member registered for it (or its records were compacted away). Check --role");
                return EXIT_ROLE_NOT_FOUND;
            }
            return EXIT_OK;
        } catch (CliException e) {
            err.println("error: " + e.getMessage());
            return e.exitCode();
        } catch (CoordinationException | KafkaException e) {
            err.println("error: " + Failures.of(options.command().name().toLowerCase(Locale.ROOT), e, bootstrap,
                    options.timeout()).getMessage());
            return EXIT_FAILED;
        } catch (RuntimeException e) {
            err.println("error: unexpected failure, please report it: " + e);
            e.printStackTrace(err);
            return EXIT_FAILED;
        }
    }

    /** The client settings: the command config's properties, then --bootstrap-server over them. */
    static Map<String, Object> connection(CliOptions options) {
        Map<String, Object> connection = new HashMap<>();
        if (options.commandConfig() != null) {
            Properties properties = new Properties();
            try (InputStream in = Files.newInputStream(options.commandConfig())) {
                properties.load(in);
            } catch (NoSuchFileException e) {
                throw CliException.usage("--command-config: no such file " + options.commandConfig());
            } catch (IOException | IllegalArgumentException e) {
                throw CliException.usage("--command-config: cannot read " + options.commandConfig() + ": " + e.getMessage());
            }
            for (String name : properties.stringPropertyNames()) {
                connection.put(name, properties.getProperty(name));
            }
        }
        if (options.bootstrapServer() != null) {
            connection.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, options.bootstrapServer());
        }
        Object servers = connection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        if (servers == null || servers.toString().isBlank()) {
            throw CliException.usage("--bootstrap-server HOST:PORT is required");
        }
        return connection;
    }
}
