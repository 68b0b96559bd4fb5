package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line without a cluster: help, usage errors, the command config. */
class CoordinationCliTest {

    record Result(int exitCode, String out, String err) {}

    static Result cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = CoordinationCli.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Result(exitCode, out.toString(), err.toString());
    }

    @Test
    void helpPrintsTheUsageAndSucceeds() {
        Result result = cli("--help");

        assertThat(result.exitCode()).isZero();
        assertThat(result.out())
                .contains("Usage:", "list", "describe", "doctor", "--command-config=FILE", "Exit codes");
        assertThat(result.err()).isEmpty();
    }

    @Test
    void aBadCommandLineExitsWithTwo() {
        Result result = cli("describe", "--bootstrap-server", "127.0.0.1:9092");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("error: Missing required option: '--role=NAME'", "--help");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void theBootstrapServerIsRequired() {
        Result result = cli("list");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--bootstrap-server HOST:PORT is required");
    }

    @Test
    void aMissingCommandConfigIsAUsageError(@TempDir Path dir) {
        Result result = cli(
                "list",
                "--bootstrap-server",
                "127.0.0.1:9092",
                "--command-config",
                dir.resolve("absent.properties").toString());

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("--command-config: no such file");
    }

    @Test
    void theCommandConfigMayNameTheCluster(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("client.properties");
        Files.writeString(config, "bootstrap.servers=k1:9092\nsecurity.protocol=SASL_SSL\n");

        Map<String, Object> connection = CommandLineParsingTest.shared(
                        CommandLineParsingTest.parse("list", "--command-config", config.toString()))
                .connection();
        Map<String, Object> overridden = CommandLineParsingTest.shared(CommandLineParsingTest.parse(
                        "list", "--command-config", config.toString(), "--bootstrap-server", "k2:9092"))
                .connection();

        assertThat(connection)
                .containsEntry("bootstrap.servers", "k1:9092")
                .containsEntry("security.protocol", "SASL_SSL");
        assertThat(overridden)
                .containsEntry("bootstrap.servers", "k2:9092")
                .containsEntry("security.protocol", "SASL_SSL");
    }
}
