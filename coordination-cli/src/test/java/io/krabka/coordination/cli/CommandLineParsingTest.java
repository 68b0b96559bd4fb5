package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.coordination.cli.CoordinationCliTest.Result;
import io.krabka.streams.coordination.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.ParseResult;

/** The command line as picocli parses it: subcommands, the shared options, help and mistakes. */
class CommandLineParsingTest {

    static ParseResult parse(String... args) {
        return CoordinationCli.commandLine().parseArgs(args);
    }

    static SharedOptions shared(ParseResult parsed) {
        return ((CoordinationCli) parsed.commandSpec().userObject()).options();
    }

    @Test
    void listHasTheLibraryDefaults() {
        ParseResult parsed = parse("list", "--bootstrap-server", "kafka:9092");
        SharedOptions options = shared(parsed);

        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("list");
        assertThat(options.connection()).isEqualTo(Map.of("bootstrap.servers", "kafka:9092"));
        assertThat(options.topic()).isEqualTo("__coordination_state");
        assertThat(options.partitions()).isEqualTo(50);
        assertThat(options.json()).isFalse();
        assertThat(options.timeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void describeTakesEveryFlagInEitherSpellingBeforeOrAfterTheCommand(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("client.properties");
        Files.writeString(config, "security.protocol=SASL_SSL\n");

        ParseResult parsed = parse(
                "--bootstrap-server=a:1,b:2",
                "describe",
                "--role",
                "controller",
                "--command-config",
                config.toString(),
                "--topic=coordination",
                "--partitions",
                "3",
                "--output",
                "JSON",
                "--timeout",
                "1500ms");
        SharedOptions options = shared(parsed);

        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("describe");
        assertThat(parsed.subcommand().<Role>matchedOptionValue("--role", null)).isEqualTo(Role.of("controller"));
        assertThat(options.connection())
                .isEqualTo(Map.of("bootstrap.servers", "a:1,b:2", "security.protocol", "SASL_SSL"));
        assertThat(options.topic()).isEqualTo("coordination");
        assertThat(options.partitions()).isEqualTo(3);
        assertThat(options.json()).isTrue();
        assertThat(options.timeout()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void durationsTakeAUnitOrAreSeconds() {
        assertThat(shared(parse("list", "--timeout", "2m")).timeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(shared(parse("list", "--timeout=45s")).timeout()).isEqualTo(Duration.ofSeconds(45));
        assertThat(shared(parse("list", "--timeout", "7")).timeout()).isEqualTo(Duration.ofSeconds(7));
        assertUsage("--timeout': must be a positive duration", "list", "--timeout", "0s");
        assertUsage("--timeout': must be a positive duration", "list", "--timeout", "soon");
        // Past Duration's range: a usage error, not an ArithmeticException out of the parser.
        assertUsage("--timeout': must be a positive duration", "list", "--timeout", "9223372036854775807m");
    }

    @Test
    void helpWinsOverEverythingElse() {
        assertHelp("Usage: krabka-coordination-cli describe ", "describe", "--help");
        assertHelp("Usage: krabka-coordination-cli [", "-h");
        assertHelp("Usage: krabka-coordination-cli [", "help");
        assertHelp("Usage: krabka-coordination-cli doctor ", "help", "doctor");
        assertHelp("Usage: krabka-coordination-cli list ", "list", "--help", "--partitions", "0");
    }

    @Test
    void theUsageNamesEveryOption() {
        Result top = CoordinationCliTest.cli("--help");
        Result describe = CoordinationCliTest.cli("describe", "--help");
        Result doctor = CoordinationCliTest.cli("doctor", "--help");

        assertThat(top.out())
                .contains(
                        "  list ",
                        "  describe ",
                        "  doctor ",
                        "--bootstrap-server=HOST:PORT[,...]",
                        "--command-config=FILE",
                        "--topic=NAME",
                        "--partitions=N",
                        "murmur2(role) % partitions",
                        "--output=text|json",
                        "--timeout=DURATION",
                        "-h, --help",
                        "-V, --version",
                        "Exit codes:",
                        "4   doctor: some check warned",
                        "5   doctor: some check failed",
                        "  generate-completion ");
        // Each command's help lists the shared options and the exit codes too, and its own options.
        assertThat(describe.out())
                .contains("--role=NAME", "--bootstrap-server=HOST:PORT", "3   describe found no record")
                .doesNotContain("--read-only");
        assertThat(doctor.out())
                .contains(
                        "--roles=N",
                        "--read-only",
                        "--allow-unsafe",
                        "--topic=NAME",
                        "doctor is the one command that writes, and only to the probe topic")
                .doesNotContain("--role=");
    }

    @Test
    void theVersionIsTheBuildsOwn() {
        Result result = CoordinationCliTest.cli("--version");

        assertThat(result.exitCode()).isZero();
        assertThat(result.out()).matches("krabka-coordination-cli \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\R");
    }

    @Test
    void generateCompletionPrintsABashScriptForEveryCommandAndOption() {
        Result result = CoordinationCliTest.cli("generate-completion");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out())
                .contains(
                        "complete -F _complete_krabka-coordination-cli",
                        "list",
                        "describe",
                        "doctor",
                        "--role",
                        "--read-only",
                        "--bootstrap-server");
    }

    @Test
    void mistakesAreUsageErrors() {
        assertUsage("no command: use list, describe or doctor", "--bootstrap-server", "k:9092");
        assertUsage("unknown command \"show\": use list, describe or doctor", "show");
        assertUsage("Missing required option: '--role=NAME'", "describe", "--bootstrap-server", "k:9092");
        // Each command takes its own options only.
        assertUsage("Unknown options: '--role', 'controller'", "list", "--role", "controller");
        assertUsage("Unknown option: '--read-only'", "list", "--read-only");
        assertUsage("Unknown options: '--roles', '3'", "describe", "--role", "a", "--roles", "3");
        assertUsage("Unknown options: '--role', 'controller'", "doctor", "--role", "controller");
        assertUsage(
                "Invalid value for option '--roles': must be a positive whole number, not \"0\"",
                "doctor",
                "--roles",
                "0");
        assertUsage("Possible solutions: --bootstrap-server", "list", "--bootstrap-servers", "k:9092");
        assertUsage("Unknown option: '--bootstrap-servers=k:9092'", "list", "--bootstrap-servers=k:9092");
        assertUsage(
                "Invalid value for option '--partitions': must be a positive whole number, not \"0\"",
                "list",
                "--partitions",
                "0");
        assertUsage("Invalid value for option '--output': expected one of [TEXT, JSON]", "list", "--output", "yaml");
        assertUsage("Missing required parameter for option '--topic'", "list", "--topic");
        assertUsage("Invalid value for option '--topic': must not be blank", "list", "--topic=");
        assertUsage("Invalid value for option '--topic': must not be blank", "list", "--topic", " ");
        assertUsage("option '--topic' (NAME) should be specified only once", "list", "--topic", "a", "--topic", "b");
        assertUsage("Invalid value for option '--role': ", "describe", "--role", " ");
        assertUsage("Unmatched argument at index 1: 'describe'", "list", "describe");
        // No argument files: "@x" is a command word like any other.
        assertUsage("unknown command \"@args\"", "@args");
    }

    @Test
    void anEmptyBootstrapServerIsNoCluster() {
        Result result = CoordinationCliTest.cli("list", "--bootstrap-server", "");

        assertThat(result.exitCode()).isEqualTo(CoordinationCli.EXIT_USAGE);
        assertThat(result.err()).isEqualTo("error: --bootstrap-server HOST:PORT is required" + System.lineSeparator());
    }

    private static void assertHelp(String usage, String... args) {
        Result result = CoordinationCliTest.cli(args);

        assertThat(result.exitCode()).isZero();
        assertThat(result.out()).startsWith(usage);
        assertThat(result.err()).isEmpty();
    }

    private static void assertUsage(String message, String... args) {
        Result result = CoordinationCliTest.cli(args);

        assertThat(result.exitCode()).as(result.err()).isEqualTo(CoordinationCli.EXIT_USAGE);
        assertThat(result.err()).startsWith("error: ").contains(message, "Run with --help for the usage.");
        assertThat(result.out()).isEmpty();
    }
}
