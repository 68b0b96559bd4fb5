package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.Role;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CliOptionsTest {

    @Test
    void listHasTheLibraryDefaults() {
        CliOptions options = CliOptions.parse("list", "--bootstrap-server", "kafka:9092");

        assertThat(options.command()).isEqualTo(CliOptions.Command.LIST);
        assertThat(options.bootstrapServer()).isEqualTo("kafka:9092");
        assertThat(options.topic()).isEqualTo("__coordination_state");
        assertThat(options.partitions()).isEqualTo(50);
        assertThat(options.output()).isEqualTo(CliOptions.Output.TEXT);
        assertThat(options.timeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.commandConfig()).isNull();
        assertThat(options.role()).isNull();
    }

    @Test
    void describeTakesEveryFlagInEitherSpelling() {
        CliOptions options = CliOptions.parse("--bootstrap-server=a:1,b:2", "describe", "--role", "controller",
                "--command-config", "client.properties", "--topic=coordination", "--partitions", "3", "--output", "JSON",
                "--timeout", "1500ms");

        assertThat(options.command()).isEqualTo(CliOptions.Command.DESCRIBE);
        assertThat(options.bootstrapServer()).isEqualTo("a:1,b:2");
        assertThat(options.role()).isEqualTo(Role.of("controller"));
        assertThat(options.commandConfig()).isEqualTo(Path.of("client.properties"));
        assertThat(options.topic()).isEqualTo("coordination");
        assertThat(options.partitions()).isEqualTo(3);
        assertThat(options.output()).isEqualTo(CliOptions.Output.JSON);
        assertThat(options.timeout()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void durationsTakeAUnitOrAreSeconds() {
        assertThat(CliOptions.parse("list", "--timeout", "2m").timeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(CliOptions.parse("list", "--timeout=45s").timeout()).isEqualTo(Duration.ofSeconds(45));
        assertThat(CliOptions.parse("list", "--timeout", "7").timeout()).isEqualTo(Duration.ofSeconds(7));
        assertUsage("--timeout must be a positive duration", "list", "--timeout", "0s");
        assertUsage("--timeout must be a positive duration", "list", "--timeout", "soon");
        // Past Duration's range: a usage error, not an ArithmeticException out of the parser.
        assertUsage("--timeout must be a positive duration", "list", "--timeout", "9223372036854775807m");
    }

    @Test
    void helpWinsOverEverythingElse() {
        assertThat(CliOptions.parse("describe", "--help").command()).isEqualTo(CliOptions.Command.HELP);
        assertThat(CliOptions.parse("-h").command()).isEqualTo(CliOptions.Command.HELP);
        assertThat(CliOptions.parse("help").command()).isEqualTo(CliOptions.Command.HELP);
        assertThat(CliOptions.parse("list", "--help", "--partitions", "0").command()).isEqualTo(CliOptions.Command.HELP);
    }

    @Test
    void theUsageNamesEveryOptionAsTheDocsSpellIt() {
        assertThat(CliOptions.usage()).startsWith("Usage: java -jar krabka-coordination-cli.jar COMMAND --bootstrap-server HOST:PORT")
                .contains("  list ", "  describe --role NAME ", "--bootstrap-server HOST:PORT[,HOST:PORT...]", "--command-config FILE",
                        "--topic NAME", "--partitions N", "murmur2(role) % partitions", "--role NAME", "--output text|json",
                        "--timeout DURATION", "-h, --help", "Exit codes:", "  doctor ", "--roles N", "--read-only",
                        "--allow-unsafe", "doctor is the one command that writes, and only to the probe topic",
                        "4   doctor: some check warned", "5   doctor: some check failed")
                .doesNotContain("=");
    }

    @Test
    void mistakesAreUsageErrors() {
        assertUsage("no command", "--bootstrap-server", "k:9092");
        assertUsage("unknown command \"show\"", "show");
        assertUsage("describe needs --role", "describe", "--bootstrap-server", "k:9092");
        assertUsage("list shows every role", "list", "--role", "controller");
        assertUsage("--roles, --read-only and --allow-unsafe apply to doctor only", "list", "--read-only");
        assertUsage("--roles, --read-only and --allow-unsafe apply to doctor only", "describe", "--role", "a", "--roles", "3");
        assertUsage("doctor checks the cluster, not one role", "doctor", "--role", "controller");
        assertUsage("--roles must be a positive whole number", "doctor", "--roles", "0");
        assertUsage("unknown option --bootstrap-servers", "list", "--bootstrap-servers", "k:9092");
        assertUsage("unknown option --bootstrap-servers (did you mean --bootstrap-server?)", "list", "--bootstrap-servers=k:9092");
        assertUsage("--partitions must be a positive whole number", "list", "--partitions", "0");
        assertUsage("--output must be text or json", "list", "--output", "yaml");
        assertUsage("option --topic needs a value", "list", "--topic");
        assertUsage("option --topic needs a value", "list", "--topic=");
        assertUsage("option --bootstrap-server needs a value", "list", "--bootstrap-server", "");
        assertUsage("--topic must not be blank", "list", "--topic", " ");
        assertUsage("option --topic is given twice", "list", "--topic", "a", "--topic", "b");
        assertUsage("--role: invalid role", "describe", "--role", " ");
        assertUsage("unexpected argument \"describe\"", "list", "describe");
        // No argument files: "@x" is a command word like any other.
        assertUsage("unknown command \"@args\"", "@args");
    }

    private static void assertUsage(String message, String... args) {
        assertThatThrownBy(() -> CliOptions.parse(args))
                .isInstanceOfSatisfying(CliException.class, e -> assertThat(e.exitCode()).isEqualTo(CoordinationCli.EXIT_USAGE))
                .hasMessageContaining(message);
    }
}
