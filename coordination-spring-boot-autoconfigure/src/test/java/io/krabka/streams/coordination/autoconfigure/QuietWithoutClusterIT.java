package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A member whose cluster goes away keeps its log readable: with Spring Boot's default levels
 * (INFO everywhere), a member that held two roles on a real broker logs about a hundred lines a
 * minute once the broker is gone, from every logger together. On the Kafka clients' own
 * defaults the admin client alone logged thousands of "Rebootstrapping with Cluster" lines a
 * minute (docs/OPERATIONS.md, "When the cluster is gone").
 */
class QuietWithoutClusterIT {

    /** About ten times what one member logs a minute, from every logger (measured 104; 17 654 before, docs/OPERATIONS.md). */
    private static final long LINES_PER_MINUTE_BOUND = 1_000;
    /** After the broker stops: the clients notice, the contenders report once per role. */
    private static final Duration SETTLE = Duration.ofSeconds(10);
    /** Longer than the clients' longest reconnect backoff (10 s, plus 20% jitter): every client's retry cycle is in it. */
    private static final Duration WINDOW = Duration.ofSeconds(12);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    /** Counts log events per logger while {@link #counting} is set. */
    static final class CountingAppender extends AppenderBase<ILoggingEvent> {
        final Map<String, LongAdder> lines = new ConcurrentHashMap<>();
        volatile boolean counting;

        @Override
        protected void append(ILoggingEvent event) {
            if (counting) {
                lines.computeIfAbsent(event.getLoggerName(), name -> new LongAdder())
                        .increment();
            }
        }
    }

    @Test
    void aMemberWhoseBrokerStoppedLogsTensOfLinesAMinuteNotThousandsAndStopsInTime() throws Exception {
        KafkaTestCluster cluster = KafkaTestCluster.start();
        ConfigurableApplicationContext app = null;
        CountingAppender appender = new CountingAppender();
        Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        try {
            app = new SpringApplicationBuilder(MemberApp.class)
                    .properties(Map.of(
                            "spring.kafka.bootstrap-servers", cluster.bootstrapServers(),
                            "spring.main.web-application-type", "none",
                            "krabka.coordination.member-id", "n1",
                            "krabka.coordination.roles", "controller,scheduler",
                            "krabka.coordination.topic.replication-factor", "1",
                            "krabka.coordination.topic.allow-unsafe", "true",
                            "krabka.coordination.topic.partitions", "3",
                            // Spring Boot's default levels, not this module's quieter logback-test.xml.
                            "logging.level.root", "INFO",
                            "logging.level.org.apache.kafka", "INFO",
                            "logging.level.org.springframework", "INFO"))
                    .run();
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            // Every client has talked to the broker: the admin, the registrar, the reader, the
            // watcher and both roles' producers.
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> loop.state(Role.of("controller")) == MemberRoleState.LEADER
                            && loop.state(Role.of("scheduler")) == MemberRoleState.LEADER);

            cluster.close();
            cluster = null;
            appender.setContext(root.getLoggerContext());
            appender.start();
            root.addAppender(appender);
            // Measurement windows, not waits for something to happen.
            TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
            appender.counting = true;
            TimeUnit.MILLISECONDS.sleep(WINDOW.toMillis());
            appender.counting = false;

            Map<String, Long> perMinute = new TreeMap<>();
            appender.lines.forEach((logger, count) -> perMinute.put(logger, count.sum() * 60_000 / WINDOW.toMillis()));
            long total = perMinute.values().stream().mapToLong(Long::longValue).sum();
            System.out.println("Lines per minute with the broker gone: " + total + " " + perMinute);
            assertThat(total)
                    .as("lines a minute per logger: %s", perMinute)
                    .isLessThanOrEqualTo(LINES_PER_MINUTE_BOUND);

            // And it is gone within work-stop-timeout (10 s by default) + 5 s while the cluster
            // is gone: the stop gives up on a pass still blocked 2.5 s after the work's timeout,
            // and the transport closes its clients side by side, 1 s each (17 s before, with a
            // 5 s slack and the clients closed one after another; four minutes before the
            // transport bounded its clients' close at all).
            long closing = System.nanoTime();
            app.close();
            app = null;
            Duration closed = Duration.ofNanos(System.nanoTime() - closing);
            System.out.println("Context closed in " + closed.toMillis() + " ms with the broker gone");
            assertThat(closed).as("context close with the broker gone").isLessThanOrEqualTo(Duration.ofSeconds(10 + 5));
        } finally {
            root.detachAppender(appender);
            if (app != null) {
                app.close();
            }
            if (cluster != null) {
                cluster.close();
            }
        }
    }
}
