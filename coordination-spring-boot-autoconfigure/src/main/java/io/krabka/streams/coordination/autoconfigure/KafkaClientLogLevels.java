package io.krabka.streams.coordination.autoconfigure;

import java.util.List;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggerConfiguration;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;

/**
 * The starter's default levels for the two Kafka loggers that print boilerplate for every
 * client the member builds: {@code org.apache.kafka.common.config.AbstractConfig} (each
 * client's whole configuration, 91-116 lines, at INFO) and
 * {@code org.apache.kafka.common.utils.AppInfoParser} (the Kafka version, commit id and
 * start time of each client, and a line when it closes). A member builds an admin client,
 * a registrar, a reader, a watcher, a producer per role, a consumer per
 * {@code @LeaderListener} and a describe reader: 569 of the 605 lines a member and its
 * clients logged before its first grant were these ({@code QuietStartIT}: four roles,
 * three brokers). Both are set to WARN, so their WARN and ERROR lines (a configuration
 * provider that cannot be loaded, an mbean that cannot be registered) still show.
 *
 * <p>Kafka logs these through one static logger per class, not per client, so the
 * levels quiet the application's own Kafka clients (and an embedded broker's
 * configuration) too. That is why they are defaults and nothing more: a level set for one
 * of these loggers or any logger above it ({@code org.apache.kafka}, say), by
 * {@code logging.level.*}, a logging configuration file or anything else that configured
 * the logging system before, wins and the starter leaves that logger alone. Runs right
 * after Spring Boot initialized logging ({@link LoggingApplicationListener}), before any
 * client is built; {@code krabka.coordination.enabled=false} turns it off with the rest of
 * the starter.
 */
public final class KafkaClientLogLevels implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

    /** The loggers this lowers to WARN where nothing else set a level for them. */
    static final List<String> LOGGERS =
            List.of("org.apache.kafka.common.config.AbstractConfig", "org.apache.kafka.common.utils.AppInfoParser");

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        if (!event.getEnvironment().getProperty("krabka.coordination.enabled", Boolean.class, true)) {
            return;
        }
        apply(LoggingSystem.get(event.getSpringApplication().getClassLoader()));
    }

    /** Sets the defaults on {@code logging}; one that cannot tell or set levels is left as it is. */
    static void apply(LoggingSystem logging) {
        try {
            for (String logger : LOGGERS) {
                if (!configured(logging, logger)) {
                    logging.setLogLevel(logger, LogLevel.WARN);
                }
            }
        } catch (UnsupportedOperationException cannot) {
            // A logging system of the application's own that does not do levels.
        }
    }

    /** Whether something set a level for {@code logger} or a logger above it (the root aside: it always has one). */
    private static boolean configured(LoggingSystem logging, String logger) {
        for (String name = logger;
                !name.isEmpty();
                name = name.contains(".") ? name.substring(0, name.lastIndexOf('.')) : "") {
            // Null where the logging system knows no such logger yet (Log4j 2) or none at all.
            LoggerConfiguration configuration = logging.getLoggerConfiguration(name);
            if (configuration != null && configuration.getConfiguredLevel() != null) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int getOrder() {
        return LoggingApplicationListener.DEFAULT_ORDER + 1;
    }
}
