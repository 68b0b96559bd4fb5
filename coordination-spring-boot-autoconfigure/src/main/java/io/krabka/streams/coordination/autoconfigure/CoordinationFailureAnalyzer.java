package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.probe.FencingProbeException;
import org.apache.kafka.common.config.ConfigException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;

/**
 * Startup failures that come from a setting, told as the property to fix instead of a
 * stack trace: Kafka bootstrap servers that do not resolve or do not parse
 * ({@code spring.kafka.bootstrap-servers}), and the coordination topic or lease settings
 * the cluster refuses ({@code krabka.coordination.*}, named in the failure's message), and
 * a fencing probe that failed at startup (each failed check and its fix).
 * Registered in {@code META-INF/spring.factories}, as Boot loads its failure analyzers.
 */
public final class CoordinationFailureAnalyzer implements FailureAnalyzer {

    static final String BOOTSTRAP_SERVERS = "spring.kafka.bootstrap-servers";

    private final Environment environment;

    /** Boot passes the application's environment, to show the value that failed. */
    public CoordinationFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        ConfigException bootstrap = find(failure, ConfigException.class);
        if (bootstrap != null && String.valueOf(bootstrap.getMessage()).contains("bootstrap.servers")) {
            return bootstrapServers(bootstrap, failure);
        }
        FencingProbeException probed = find(failure, FencingProbeException.class);
        if (probed != null) {
            return FencingProbeFailure.analysis(probed, failure);
        }
        AmbiguousKafkaFactoriesException factories = find(failure, AmbiguousKafkaFactoriesException.class);
        if (factories != null) {
            return new FailureAnalysis(factories.getMessage() + ".", factories.action(), failure);
        }
        CoordinationConfigurationException refused = find(failure, CoordinationConfigurationException.class);
        if (refused != null) {
            return new FailureAnalysis(
                    "krabka coordination cannot start: " + refused.getMessage() + ".",
                    refused instanceof TopicConfigurationException
                            ? "Fix the coordination topic or the krabka.coordination.topic.* property named above."
                            : "Fix the setting named above (krabka.coordination.*).",
                    failure);
        }
        return null;
    }

    private FailureAnalysis bootstrapServers(ConfigException bootstrap, Throwable failure) {
        String configured = environment == null ? null : environment.getProperty(BOOTSTRAP_SERVERS);
        String unresolvable = String.valueOf(bootstrap.getMessage()).contains("resolvable")
                ? "none of them resolves to an address (a mistyped host name, or DNS that does not know it yet)"
                : "Kafka cannot parse them";
        return new FailureAnalysis(
                "The Kafka bootstrap servers "
                        + (configured == null ? "" : "'" + configured + "' ") + "cannot be used: " + unresolvable + " ("
                        + bootstrap.getMessage() + ").",
                "Set " + BOOTSTRAP_SERVERS
                        + " (or SPRING_KAFKA_BOOTSTRAP_SERVERS) to host:port pairs of brokers that this"
                        + " host can resolve, for example broker-0.kafka:9092,broker-1.kafka:9092. Client-specific"
                        + " spring.kafka.admin/producer/consumer.bootstrap-servers override it where set.",
                failure);
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
