package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What a new user sees at Spring Boot's default levels (INFO everywhere, no logging file of
 * their own) when a member of the starter first starts against a three-broker cluster and
 * creates its topic, a second joins, and both {@code /actuator/coordination} endpoints are
 * polled once a second: no configuration dump or version lines of the library's clients, no
 * Kafka WARN of a retry a first start causes, no assignment or seek line per poll or per
 * read (the second member is the standby of every role the first holds). And a user's own
 * {@code logging.level} brings Kafka's lines back.
 */
// Three brokers and a minute of polling: run with -Plong (the unit tests KafkaClientLogLevelsTests
// and ReadToEndTest keep the defaults and the quiet reads in the default build).
@Tag("long")
@ExtendWith(OutputCaptureExtension.class)
class QuietStartIT {

    private static final List<Role> ROLES =
            List.of(Role.of("controller"), Role.of("scheduler"), Role.of("alpha"), Role.of("beta"));
    /** How long the endpoint is polled once a second; more with -Dkrabka.quiet.poll-seconds for a measurement. */
    private static final Duration POLLED = Duration.ofSeconds(Long.getLong("krabka.quiet.poll-seconds", 12));
    /** Level, thread, logger: the pattern these tests log with, so each line names its logger in full. */
    private static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger : %msg%n";

    private static final Pattern EVENT = Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} (\\w+) +\\[.*?\\] (\\S+) : ");
    private static final Pattern CLIENT = Pattern.compile("\\[Consumer clientId=([^,\\]]+)");
    private static final Pattern SEEK = Pattern.compile("Seeking to .* (?:of|for) partition (\\S+)");
    private static final String ASSIGNED = "Assigned to partition(s):";

    private static KafkaTestCluster cluster;
    private final HttpClient http = HttpClient.newHttpClient();
    /** A topic of each test's own: each starts as a first start does, creating it. */
    private final String topic = "coordination-" + UUID.randomUUID().toString().substring(0, 8);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {}

    @BeforeAll
    static void startCluster() {
        // A transaction state log replicated as in production: the fencing probe fails startup on one replica.
        cluster = KafkaTestCluster.start(
                3, Map.of("transaction.state.log.replication.factor", "3", "transaction.state.log.min.isr", "2"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aFirstStartAndAPolledEndpointLogNoClientConfigurationNoRetryWarningsAndNoSeeks(CapturedOutput output)
            throws Exception {
        int startedAt = output.getOut().length();
        // The first member finds no topic and creates it; the second joins once the first
        // holds every role (the topic's leaders are ready then: a member that finds a topic
        // another created a moment before does not wait for them) and stands by for each.
        try (ConfigurableApplicationContext n1 = start("n1")) {
            LeadershipLoop loop1 = n1.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(90))
                    .until(() -> ROLES.stream().allMatch(role -> loop1.state(role) == MemberRoleState.LEADER));
            try (ConfigurableApplicationContext n2 = start("n2")) {
                quietWhilePolled(output, startedAt, n1, n2);
            }
        }
    }

    private void quietWhilePolled(
            CapturedOutput output, int startedAt, ConfigurableApplicationContext n1, ConfigurableApplicationContext n2)
            throws Exception {
        LeadershipLoop loop1 = n1.getBean(LeadershipLoop.class);
        LeadershipLoop loop2 = n2.getBean(LeadershipLoop.class);
        CoordinationTransport transport2 = n2.getBean(CoordinationTransport.class);
        // Started: every role held, and the second member the standby of each, its watcher
        // following each role's partition (it has seen a record there since it began).
        await().atMost(Duration.ofSeconds(90))
                .until(() -> ROLES.stream()
                        .allMatch(role -> loop1.state(role) == MemberRoleState.LEADER
                                && loop2.state(role) == MemberRoleState.STANDBY
                                && transport2.tellsEverythingSince(role, Long.MAX_VALUE)));
        String startup = output.getOut().substring(startedAt);
        // The first poll builds the describe reader: what it logs once is startup, not steady state.
        poll(n1);
        poll(n2);
        int steadyFrom = output.getOut().length();
        long pollUntil = System.nanoTime() + POLLED.toNanos();
        while (System.nanoTime() < pollUntil) {
            poll(n1);
            poll(n2);
            // The poller's cadence (a user's `curl` once a second), not a wait for something to happen.
            TimeUnit.SECONDS.sleep(1);
        }
        String steady = output.getOut().substring(steadyFrom);
        String beforeGrant = startup.substring(0, Math.max(0, startup.indexOf(" was granted role ")));
        System.out.println(
                "Lines before the first grant: " + beforeGrant.lines().count() + " " + byGroup(beforeGrant));
        System.out.println("Lines per minute while both endpoints are polled once a second: "
                + steady.lines().count() * 60 / POLLED.toSeconds() + " " + byGroup(steady));

        assertThat(startup)
                .as("configuration dumps of the library's clients")
                .doesNotContain("ProducerConfig values:", "ConsumerConfig values:", "AdminClientConfig values:")
                .as("Kafka's version lines, three per client")
                .doesNotContain("Kafka commitId:");
        assertThat(warnings(startup, "org.apache.kafka.clients."))
                .as("Kafka clients' WARN lines at a first start")
                .isEmpty();
        // The end of the second member's start may fall inside the window (a reader assigns
        // and seeks once); what must not be there is the same call again, per poll or read.
        Map<String, Long> calls = steady.lines()
                .map(QuietStartIT::assignOrSeek)
                .flatMap(Optional::stream)
                .collect(Collectors.groupingBy(call -> call, TreeMap::new, Collectors.counting()));
        assertThat(calls)
                .as("assignments and seeks per client and partition while polled")
                .allSatisfy((call, times) -> assertThat(times).as(call).isOne());
    }

    /** "client assigned [partitions]" or "client seeks partition" for such a line of Kafka's consumer. */
    private static Optional<String> assignOrSeek(String line) {
        Matcher client = CLIENT.matcher(line);
        if (!client.find()) {
            return Optional.empty();
        }
        Matcher seek = SEEK.matcher(line);
        if (seek.find()) {
            return Optional.of(client.group(1) + " seeks " + seek.group(1));
        }
        int assigned = line.indexOf(ASSIGNED);
        return assigned < 0
                ? Optional.empty()
                : Optional.of(client.group(1) + " assigned ["
                        + line.substring(assigned + ASSIGNED.length()).trim() + "]");
    }

    @Test
    void aUsersOwnLoggingLevelBringsKafkasLinesBack(CapturedOutput output) {
        int startedAt = output.getOut().length();
        try (ConfigurableApplicationContext app = start("n3", "logging.level.org.apache.kafka=INFO")) {
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            await().atMost(Duration.ofSeconds(90)).until(() -> loop.state(ROLES.get(0)) == MemberRoleState.LEADER);
            assertThat(output.getOut().substring(startedAt))
                    .contains(
                            "ProducerConfig values:",
                            "ConsumerConfig values:",
                            "AdminClientConfig values:",
                            "Kafka commitId:");
        }
    }

    private ConfigurableApplicationContext start(String member, String... more) {
        return new SpringApplicationBuilder(MemberApp.class)
                .properties(Map.of(
                        "spring.kafka.bootstrap-servers",
                        cluster.bootstrapServers(),
                        "server.port",
                        "0",
                        "management.endpoints.web.exposure.include",
                        "coordination",
                        "krabka.coordination.member-id",
                        member,
                        // Each member's clients named after it, so their lines tell the members apart.
                        "spring.kafka.client-id",
                        member,
                        "krabka.coordination.roles",
                        String.join(",", ROLES.stream().map(Role::name).toList()),
                        "krabka.coordination.endpoint.show-details",
                        "always",
                        "krabka.coordination.topic.name",
                        topic,
                        // Spring Boot's default logging, not this module's logback-test.xml.
                        "logging.config",
                        "classpath:boot-default-logback.xml",
                        "logging.pattern.console",
                        PATTERN))
                // The sample's demo timings: news on every role's partition every 2 s.
                .properties(
                        "krabka.coordination.lease.duration=6s",
                        "krabka.coordination.lease.renew-interval=2s",
                        "krabka.coordination.lease.challenge-stagger=1s")
                .properties(more)
                .run();
    }

    private void poll(ConfigurableApplicationContext app) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + app.getEnvironment().getProperty("local.server.port") + "/actuator/coordination"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
    }

    /** The WARN and ERROR lines of loggers under {@code prefix}. */
    private static List<String> warnings(String log, String prefix) {
        return log.lines()
                .filter(line -> {
                    Matcher event = EVENT.matcher(line);
                    return event.find()
                            && !event.group(1).equals("INFO")
                            && event.group(2).startsWith(prefix);
                })
                .toList();
    }

    /**
     * Lines per group of loggers, a line of a message of several lines (a configuration
     * dump) counted to its message: the library, Kafka's clients (and their configuration
     * and version lines), the brokers of the test cluster, the rest.
     */
    private static Map<String, Integer> byGroup(String log) {
        Map<String, Integer> groups = new TreeMap<>();
        String group = "other";
        for (String line : log.lines().toList()) {
            Matcher event = EVENT.matcher(line);
            if (event.find()) {
                String logger = event.group(2);
                group = logger.startsWith("io.krabka.")
                        ? "library"
                        : logger.startsWith("org.apache.kafka.clients.")
                                        || logger.startsWith("org.apache.kafka.common.")
                                ? "kafka-clients " + logger.substring(logger.lastIndexOf('.') + 1)
                                : logger.startsWith("kafka.")
                                                || logger.startsWith("org.apache.kafka.")
                                                || logger.equals("state.change.logger")
                                        ? "brokers"
                                        : "other";
            }
            groups.merge(group, 1, Integer::sum);
        }
        return groups;
    }
}
