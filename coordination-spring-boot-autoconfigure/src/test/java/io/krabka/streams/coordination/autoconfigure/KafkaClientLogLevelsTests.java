package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.bootstrap.DefaultBootstrapContext;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.mock.env.MockEnvironment;

/**
 * The starter's defaults for Kafka's configuration and app-info loggers: WARN where
 * nothing set a level for them or a logger above them, and nothing where something did.
 * On this module's Logback, whose levels the tests set and put back.
 */
class KafkaClientLogLevelsTests {

    private static final String CONFIG = "org.apache.kafka.common.config.AbstractConfig";
    private static final String APP_INFO = "org.apache.kafka.common.utils.AppInfoParser";
    private static final String[] TOUCHED = {
        CONFIG,
        APP_INFO,
        "org.apache.kafka.common.config",
        "org.apache.kafka.common",
        "org.apache.kafka",
        "org.apache",
        "org"
    };

    private final LoggerContext logback = (LoggerContext) LoggerFactory.getILoggerFactory();
    private final Map<String, Level> before = new HashMap<>();

    @BeforeEach
    void unsetTheKafkaLevels() {
        // This module's logback-test.xml sets org.apache.kafka to WARN: as if nothing had.
        for (String name : TOUCHED) {
            before.put(name, logback.getLogger(name).getLevel());
            logback.getLogger(name).setLevel(null);
        }
    }

    @AfterEach
    void restoreTheLevels() {
        before.forEach((name, level) -> logback.getLogger(name).setLevel(level));
    }

    private static void prepare(MockEnvironment environment) {
        new KafkaClientLogLevels()
                .onApplicationEvent(new ApplicationEnvironmentPreparedEvent(
                        new DefaultBootstrapContext(), new SpringApplication(), new String[0], environment));
    }

    @Test
    void bothLoggersAreSetToWarnWhereNothingSetALevel() {
        prepare(new MockEnvironment());

        assertThat(logback.getLogger(CONFIG).getLevel()).isEqualTo(Level.WARN);
        assertThat(logback.getLogger(APP_INFO).getLevel()).isEqualTo(Level.WARN);
        assertThat(logback.getLogger("org.apache.kafka").getLevel())
                .as("nothing above them")
                .isNull();
    }

    @Test
    void aLevelSetForTheLoggerItselfStays() {
        logback.getLogger(CONFIG).setLevel(Level.INFO);

        prepare(new MockEnvironment());

        assertThat(logback.getLogger(CONFIG).getLevel()).isEqualTo(Level.INFO);
        assertThat(logback.getLogger(APP_INFO).getLevel()).as("the other one").isEqualTo(Level.WARN);
    }

    @Test
    void aLevelSetForALoggerAboveThemLeavesBothToInheritIt() {
        logback.getLogger("org.apache.kafka").setLevel(Level.DEBUG);

        prepare(new MockEnvironment());

        assertThat(logback.getLogger(CONFIG).getLevel()).isNull();
        assertThat(logback.getLogger(CONFIG).getEffectiveLevel()).isEqualTo(Level.DEBUG);
        assertThat(logback.getLogger(APP_INFO).getLevel()).isNull();
    }

    @Test
    void aDisabledStarterSetsNothing() {
        prepare(new MockEnvironment().withProperty("krabka.coordination.enabled", "false"));

        assertThat(logback.getLogger(CONFIG).getLevel()).isNull();
        assertThat(logback.getLogger(APP_INFO).getLevel()).isNull();
    }

    @Test
    void aLoggingSystemThatDoesNotDoLevelsIsLeftAlone() {
        LoggingSystem withoutLevels = new LoggingSystem() {
            @Override
            public void beforeInitialize() {}
        };

        assertThatNoException().isThrownBy(() -> KafkaClientLogLevels.apply(withoutLevels));
    }

    @Test
    void itRunsRightAfterSpringBootSetUpLogging() {
        assertThat(new KafkaClientLogLevels().getOrder())
                .isGreaterThan(org.springframework.boot.context.logging.LoggingApplicationListener.DEFAULT_ORDER);
    }
}
