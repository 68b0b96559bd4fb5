package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.CommonClientConfigs;
import org.awaitility.Awaitility;

/**
 * Measures how many requests an idle member sends per role and second, by client
 * (reader, admin, registrar, role producers), from the clients' own request-total
 * metrics over JMX: one holder and one standby of {@code ROLES} roles each, on one
 * in-process broker, with the library's default lease timings. Not a test: it asserts
 * nothing and runs only by hand:
 *
 * <pre>./mvnw -B -q -pl coordination-core-tests test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.krabka.streams.coordination.kafka.IdleRequestRate</pre>
 */
public final class IdleRequestRate {

    private static final int ROLES = 10;
    private static final Duration SETTLE = Duration.ofSeconds(15);
    private static final Duration MEASURE = Duration.ofSeconds(60);

    public static void main(String[] args) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            List<AutoCloseable> opened = new ArrayList<>();
            List<Contender> holders = new ArrayList<>();
            try {
                for (String member : List.of("holder", "standby")) {
                    Map<String, Object> connection = new java.util.HashMap<>(cluster.connection());
                    connection.put(CommonClientConfigs.CLIENT_ID_CONFIG, member);
                    KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                            connection,
                            io.krabka.streams.coordination.transport.TopicSpec.DEFAULTS
                                    .withReplicationFactor(1)
                                    .withPartitions(3),
                            Duration.ofSeconds(30),
                            LeaseConfig.DEFAULTS.duration());
                    CoordinationClient client =
                            new CoordinationClient(transport, LeaseConfig.DEFAULTS, InstantSource.system());
                    opened.add(transport);
                    for (int i = 0; i < ROLES; i++) {
                        Contender contender = new Contender(
                                client, Role.of("idle-" + i), MemberId.of(member), new Contender.Listener() {
                                    @Override
                                    public void granted(Leadership leadership) {}

                                    @Override
                                    public void ended(
                                            Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
                                });
                        contender.start();
                        opened.add(0, contender);
                        if (member.equals("holder")) {
                            holders.add(contender);
                        }
                    }
                    if (member.equals("holder")) {
                        // The holder takes every role before the standby starts.
                        Awaitility.await()
                                .atMost(Duration.ofSeconds(60))
                                .until(() -> holders.stream()
                                        .allMatch(c -> c.leadership().isPresent()));
                    }
                }
                // The measurement's windows: time to settle, then the time measured over.
                TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
                Map<String, Double> before = requestTotals();
                TimeUnit.MILLISECONDS.sleep(MEASURE.toMillis());
                Map<String, Double> after = requestTotals();
                System.out.printf(
                        "Requests per role per second, idle, %d roles per member, lease %s / renew %s, over %s:%n",
                        ROLES, LeaseConfig.DEFAULTS.duration(), LeaseConfig.DEFAULTS.renewInterval(), MEASURE);
                Map<String, Double> perMemberAndClient = new TreeMap<>();
                after.forEach((client, total) -> {
                    String key = client.replaceAll("-role-idle-\\d+$", "-role-*");
                    perMemberAndClient.merge(
                            key, (total - before.getOrDefault(client, 0.0)) / MEASURE.toSeconds() / ROLES, Double::sum);
                });
                perMemberAndClient.forEach((client, rate) -> System.out.printf("  %-40s %6.2f%n", client, rate));
            } finally {
                for (AutoCloseable closeable : opened) {
                    closeable.close();
                }
            }
        }
    }

    /** request-total of every client whose id starts with holder- or standby-, from JMX. */
    private static Map<String, Double> requestTotals() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Map<String, Double> totals = new TreeMap<>();
        for (String type : List.of(
                "kafka.consumer:type=consumer-metrics,*",
                "kafka.producer:type=producer-metrics,*",
                "kafka.admin.client:type=admin-client-metrics,*")) {
            for (ObjectName name : server.queryNames(new ObjectName(type), null)) {
                String client = name.getKeyProperty("client-id");
                if (client != null && (client.startsWith("holder-") || client.startsWith("standby-"))) {
                    totals.put(client, ((Number) server.getAttribute(name, "request-total")).doubleValue());
                }
            }
        }
        return totals;
    }
}
