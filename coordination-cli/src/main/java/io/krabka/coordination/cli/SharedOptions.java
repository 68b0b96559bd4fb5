package io.krabka.coordination.cli;

import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.TypeConversionException;

/**
 * The options every command takes: the cluster, the topic, the output and the timeout.
 * A mixin of the top command, inherited by each subcommand, so they may stand before or
 * after the command word.
 */
final class SharedOptions {

    /** The output formats. */
    enum Output {
        TEXT,
        JSON
    }

    @Option(
            names = "--bootstrap-server",
            order = 1,
            paramLabel = "HOST:PORT[,...]",
            scope = ScopeType.INHERIT,
            description = {"the Kafka cluster (required unless the command config", "sets bootstrap.servers)"})
    private String bootstrapServer;

    @Option(
            names = "--command-config",
            order = 2,
            paramLabel = "FILE",
            scope = ScopeType.INHERIT,
            description = {"Kafka client properties (security.protocol, ssl.*, sasl.*),", "as for Kafka's own tools"})
    private Path commandConfig;

    @Option(
            names = "--topic",
            order = 3,
            paramLabel = "NAME",
            converter = TopicName.class,
            scope = ScopeType.INHERIT,
            description = "the coordination topic (default ${DEFAULT-VALUE})")
    private String topic = CoordinationCodec.COORDINATION_STATE_TOPIC;

    // A '%' in a description is a format specifier for picocli: '%%' prints one.
    @Option(
            names = "--partitions",
            order = 4,
            paramLabel = "N",
            converter = PositiveNumber.class,
            scope = ScopeType.INHERIT,
            description = {
                "the partition count the members are configured with",
                "(krabka.coordination.topic.partitions," + " default ${DEFAULT-VALUE}); must",
                "equal the topic's: a role's partition is",
                "murmur2(role) %% partitions"
            })
    private int partitions = TopicSpec.DEFAULT_PARTITIONS;

    @Option(
            names = "--output",
            order = 6,
            paramLabel = "text|json",
            scope = ScopeType.INHERIT,
            description = "aligned tables (default) or one JSON document")
    private Output output = Output.TEXT;

    @Option(
            names = "--timeout",
            order = 7,
            paramLabel = "DURATION",
            converter = Timeout.class,
            scope = ScopeType.INHERIT,
            description = {
                "how long one cluster operation may wait before the tool",
                "gives up: 30s (default), 500ms, 2m; a bare number is seconds"
            })
    private Duration timeout = Duration.ofSeconds(30);

    // The bootstrap servers the connection was built with, to name the cluster in a failure.
    private String bootstrap = "?";

    /** The coordination topic. */
    String topic() {
        return topic;
    }

    /** The partition count the members are configured with. */
    int partitions() {
        return partitions;
    }

    /** Whether to print one JSON document rather than tables. */
    boolean json() {
        return output == Output.JSON;
    }

    /** How long one cluster operation may wait. */
    Duration timeout() {
        return timeout;
    }

    /** The cluster as the connection names it; {@code ?} before {@link #connection()}. */
    String bootstrap() {
        return bootstrap;
    }

    /** The client settings: the command config's properties, then --bootstrap-server over them. */
    Map<String, Object> connection() {
        Map<String, Object> connection = new HashMap<>();
        if (commandConfig != null) {
            Properties properties = new Properties();
            try (InputStream in = Files.newInputStream(commandConfig)) {
                properties.load(in);
            } catch (NoSuchFileException e) {
                throw CliException.usage("--command-config: no such file " + commandConfig);
            } catch (IOException | IllegalArgumentException e) {
                throw CliException.usage("--command-config: cannot read " + commandConfig + ": " + e.getMessage());
            }
            for (String name : properties.stringPropertyNames()) {
                connection.put(name, properties.getProperty(name));
            }
        }
        if (bootstrapServer != null) {
            connection.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServer);
        }
        Object servers = connection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        if (servers == null || servers.toString().isBlank()) {
            throw CliException.usage("--bootstrap-server HOST:PORT is required");
        }
        bootstrap = servers.toString();
        return connection;
    }

    static final class TopicName implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            if (value.isBlank()) {
                throw new TypeConversionException("must not be blank");
            }
            return value;
        }
    }

    /** A count: a whole number above zero. */
    static final class PositiveNumber implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                int parsed = Integer.parseInt(value);
                if (parsed > 0) {
                    return parsed;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new TypeConversionException("must be a positive whole number, not \"" + value + "\"");
        }
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, or a bare number of seconds. */
    static final class Timeout implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
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
                throw new TypeConversionException(
                        "must be a positive duration such as 30s, 500ms or 2m, not \"" + value + "\"");
            }
            return parsed;
        }
    }
}
