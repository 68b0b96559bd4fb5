package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Two Spring Boot members in one JVM compete for a role on a real KRaft broker. */
class CoordinationStarterIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static KafkaTestCluster cluster;

    /** Each test gets its own coordination topic, so rosters and leases do not leak between tests. */
    @RegisterExtension
    final SpringMembers members = SpringMembers.of(MemberApp.class, () -> cluster.bootstrapServers())
            .with(
                    "spring.kafka.producer.transaction-id-prefix=tx-",
                    // An application tuning its own producers: the library's ignore it (and must still build).
                    "spring.kafka.producer.properties[linger.ms]=50",
                    "management.endpoints.web.exposure.include=coordination,health",
                    "management.endpoint.health.show-details=always",
                    "krabka.coordination.roles=controller",
                    "krabka.coordination.endpoint.show-details=always")
            .withFastLeases();

    private final String topic = members.topic();
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
        cluster.createTopic("commands", 1);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        final List<Object> events = new CopyOnWriteArrayList<>();
        final AtomicInteger dispatched = new AtomicInteger();
        final AtomicInteger interrupted = new AtomicInteger();
        volatile Leadership current;
        /** Whether the work writes as fast as it can instead of every 50 ms. */
        volatile boolean flatOut;

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            events.add(event);
        }

        @EventListener
        void fenced(LeadershipEndedEvent event) {
            events.add(event);
        }

        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher(this);
        }
    }

    /** Role-scoped work: dispatches a guarded command every 50 ms until its thread is interrupted. */
    static class Dispatcher {
        private final MemberApp app;

        Dispatcher(MemberApp app) {
            this.app = app;
        }

        @OnLeadership(role = "controller")
        void dispatch(Leadership leadership) {
            app.current = leadership;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    leadership.write(new ProducerRecord<>(
                            "commands",
                            CONTROLLER.utf8(),
                            (leadership.member() + ":" + leadership.term()).getBytes(StandardCharsets.UTF_8)));
                    app.dispatched.incrementAndGet();
                    if (!app.flatOut) {
                        TimeUnit.MILLISECONDS.sleep(50);
                    }
                }
            } catch (InterruptedException e) {
                app.interrupted.incrementAndGet();
            } catch (RuntimeException e) {
                // A fenced write: the loop ends the leadership and interrupts this thread.
                app.interrupted.incrementAndGet();
            }
        }
    }

    private static MemberApp appOf(ConfigurableApplicationContext context) {
        return context.getBean(MemberApp.class);
    }

    private static MemberRoleState state(ConfigurableApplicationContext context) {
        return context.getBean(LeadershipLoop.class).state(CONTROLLER);
    }

    private JsonNode get(ConfigurableApplicationContext context, String path) throws Exception {
        String port = context.getEnvironment().getProperty("local.server.port");
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path).isEqualTo(200);
        return JsonMapper.builder().build().readTree(response.body());
    }

    @Test
    void winnerWorksStandbyWaitsAndBothEndpointsShowTheSameHolder() throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = members.start("n2");
        await().atMost(Duration.ofSeconds(30)).until(() -> appOf(n1).dispatched.get() >= 3);
        assertThat(state(n2)).isEqualTo(MemberRoleState.STANDBY);
        assertThat(appOf(n2).dispatched).hasValue(0);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            JsonNode one = get(n1, "/actuator/coordination");
            JsonNode two = get(n2, "/actuator/coordination");
            assertThat(one.get("member").asString()).isEqualTo("n1");
            assertThat(two.get("member").asString()).isEqualTo("n2");
            for (JsonNode report : List.of(one, two)) {
                JsonNode role = report.get("roles").get("controller");
                assertThat(role.get("current").asBoolean())
                        .as("current in %s", report)
                        .isTrue();
                assertThat(role.get("holder").asString()).isEqualTo("n1");
                assertThat(role.get("token").get("term").asLong())
                        .isEqualTo(appOf(n1).current.term());
                assertThat(role.get("roster").findValuesAsString("member")).containsExactly("n1", "n2");
            }
            assertThat(one.get("roles").get("controller").get("state").asString())
                    .isEqualTo("leader");
            assertThat(two.get("roles").get("controller").get("state").asString())
                    .isEqualTo("standby");
        });
        JsonNode single = get(n2, "/actuator/coordination/controller");
        assertThat(single.get("holder").asString()).isEqualTo("n1");
        // Releasing is off by default: an HTTP error that says how to turn it on, not a 200.
        HttpResponse<String> refused = post(n1, "/actuator/coordination/controller");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(refused.body()).contains("krabka.coordination.endpoint.release-enabled=true");
        assertThat(state(n1)).isEqualTo(MemberRoleState.LEADER);
        JsonNode health = get(n1, "/actuator/health");
        assertThat(health.get("components").get("coordination").get("status").asString())
                .isEqualTo("UP");
        assertThat(health.get("components")
                        .get("coordination")
                        .get("details")
                        .get("roles")
                        .get("controller")
                        .asString())
                .isEqualTo("leader");

        // The role producer's transactional.id is the role name, not Spring Kafka's prefix.
        assertThat(cluster.admin()
                        .describeTransactions(List.of("controller"))
                        .description("controller")
                        .get(10, TimeUnit.SECONDS)
                        .producerId())
                .isEqualTo(appOf(n1).current.token().producerId());
    }

    @Test
    void whenTheBrokerFencesTheHolderItsWorkIsInterruptedAndTheEventSaysFenced() throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1");
        await().atMost(Duration.ofSeconds(30)).until(() -> appOf(n1).dispatched.get() >= 2);

        // Another producer of the role's transactional id: InitProducerId fences n1's epoch.
        try (KafkaProducer<byte[], byte[]> usurper = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                "controller",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class))) {
            usurper.initTransactions();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> appOf(n1).interrupted.get() >= 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> appOf(n1).events.size() >= 2);
        List<Object> events = appOf(n1).events;
        assertThat(events.get(0)).isInstanceOf(LeadershipGrantedEvent.class);
        assertThat(events.get(1))
                .isInstanceOfSatisfying(
                        LeadershipEndedEvent.class,
                        fenced -> assertThat(fenced.cause()).isEqualTo(LeadershipEndCause.FENCED));
        // It keeps contending: after the lease deadline it takes the role again, with a later term.
        // (Wait for the event, not the state: the state turns LEADER just before the event is published.)
        await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 3);
        LeadershipGrantedEvent first = (LeadershipGrantedEvent) events.get(0);
        assertThat(events.get(2))
                .isInstanceOfSatisfying(
                        LeadershipGrantedEvent.class,
                        again -> assertThat(again.token().supersedes(first.token()))
                                .isTrue());
    }

    @Test
    void gracefulShutdownHandsTheRoleOverBeforeTheDeadline() throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = members.start("n2");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> state(n2) == MemberRoleState.STANDBY
                        && get(n2, "/actuator/coordination")
                                        .get("roles")
                                        .get("controller")
                                        .get("roster")
                                        .size()
                                == 2);

        MemberApp first = appOf(n1);
        n1.close();
        Instant closed = Instant.now();
        List<Object> events = first.events;
        assertThat(events).hasSize(2);
        assertThat(events.get(1))
                .isInstanceOfSatisfying(
                        LeadershipEndedEvent.class,
                        released -> assertThat(released.cause()).isEqualTo(LeadershipEndCause.RELEASED));
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n2) == MemberRoleState.LEADER);
        // Well inside one lease (3 s): the standby did not wait for the deadline.
        assertThat(Duration.between(closed, Instant.now())).isLessThan(Duration.ofSeconds(3));
        await().atMost(Duration.ofSeconds(10)).until(() -> !appOf(n2).events.isEmpty());
        assertThat(appOf(n2).events.get(0)).isInstanceOf(LeadershipGrantedEvent.class);
    }

    /**
     * A release under load keeps the graceful handover: the holder writes guarded records
     * as fast as it can, the endpoint's release (twenty times, alternating holders) or a
     * SIGTERM-like context close stops it; each time the standby is granted well within
     * half a lease (the tombstone, not the deadline) and the event says RELEASED.
     */
    @Test
    void releasesAndShutdownUnderFullLoadHandTheRoleOverWithinHalfALease() throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1", "krabka.coordination.endpoint.release-enabled=true");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = members.start("n2", "krabka.coordination.endpoint.release-enabled=true");
        appOf(n1).flatOut = true;
        appOf(n2).flatOut = true;
        await().atMost(Duration.ofSeconds(30))
                .until(() -> state(n2) == MemberRoleState.STANDBY
                        && get(n2, "/actuator/coordination")
                                        .get("roles")
                                        .get("controller")
                                        .get("roster")
                                        .size()
                                == 2);
        Duration halfALease = Duration.ofMillis(1500);
        List<Duration> handovers = new java.util.ArrayList<>();
        for (int release = 0; release < 20; release++) {
            ConfigurableApplicationContext holder = state(n1) == MemberRoleState.LEADER ? n1 : n2;
            ConfigurableApplicationContext standby = holder == n1 ? n2 : n1;
            int writtenBefore = appOf(holder).dispatched.get();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> appOf(holder).dispatched.get() > writtenBefore + 5);
            int endsBefore = ends(holder).size();
            long start = System.nanoTime();
            HttpResponse<String> released = post(holder, "/actuator/coordination/controller");
            assertThat(released.body()).contains("\"released\":true");
            await().atMost(Duration.ofSeconds(10)).until(() -> state(standby) == MemberRoleState.LEADER);
            handovers.add(Duration.ofNanos(System.nanoTime() - start));
            assertThat(ends(holder))
                    .hasSize(endsBefore + 1)
                    .last()
                    .satisfies(ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED));
            // The released member rejoins behind the new holder, as a standby.
            await().atMost(Duration.ofSeconds(10)).until(() -> state(holder) == MemberRoleState.STANDBY);
        }
        System.out.println("Release to grant under full load, 20 times (ms): "
                + handovers.stream().map(Duration::toMillis).sorted().toList());
        assertThat(handovers)
                .as("release to grant, under load")
                .allSatisfy(took -> assertThat(took).isLessThan(halfALease));

        // A graceful shutdown (what SIGTERM does) of the holder writing flat out.
        ConfigurableApplicationContext holder = state(n1) == MemberRoleState.LEADER ? n1 : n2;
        ConfigurableApplicationContext standby = holder == n1 ? n2 : n1;
        MemberApp closing = appOf(holder);
        long start = System.nanoTime();
        holder.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> state(standby) == MemberRoleState.LEADER);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(halfALease.multipliedBy(2));
        assertThat(closing.events)
                .filteredOn(LeadershipEndedEvent.class::isInstance)
                .last()
                .satisfies(ended ->
                        assertThat(((LeadershipEndedEvent) ended).cause()).isEqualTo(LeadershipEndCause.RELEASED));
        assertThat(closing.events)
                .filteredOn(LeadershipEndedEvent.class::isInstance)
                .allSatisfy(ended ->
                        assertThat(((LeadershipEndedEvent) ended).cause()).isEqualTo(LeadershipEndCause.RELEASED));
    }

    private static List<LeadershipEndedEvent> ends(ConfigurableApplicationContext context) {
        return appOf(context).events.stream()
                .filter(LeadershipEndedEvent.class::isInstance)
                .map(LeadershipEndedEvent.class::cast)
                .toList();
    }

    /** A release: a JSON POST, the only kind the endpoint's write operation takes. */
    private HttpResponse<String> post(ConfigurableApplicationContext context, String path) throws Exception {
        String port = context.getEnvironment().getProperty("local.server.port");
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A topic the member may not create is one ERROR and health DOWN, not a warning every second. */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aMissingTopicThatMayNotBeCreatedIsOneClearErrorAndHealthDown(CapturedOutput output) throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1", "krabka.coordination.topic.create=false");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> output.getOut().contains("Member n1 cannot contend for role controller"));
        JsonNode health = JsonMapper.builder()
                .build()
                .readTree(http.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                                + n1.getEnvironment().getProperty("local.server.port")
                                                + "/actuator/health"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body())
                .get("components")
                .get("coordination");
        assertThat(health.get("status").asString()).isEqualTo("DOWN");
        assertThat(health.get("details").get("misconfigured").get("controller").asString())
                .contains(topic)
                // The same settings the fencing probe asks for, not a factor it would refuse.
                .contains("replication factor 3, min.insync.replicas 2");
        assertThat(output.getOut()
                        .lines()
                        .filter(line -> line.contains("cannot contend for role controller"))
                        .count())
                .isEqualTo(1);
        assertThat(state(n1)).isEqualTo(MemberRoleState.STANDBY);
    }

    /**
     * Replication 3 on this one-broker cluster: health is never up, and goes down as
     * {@code misconfigured} naming the property, not as a cluster that does not answer.
     */
    @Test
    void aReplicationFactorTheClusterCannotMeetIsMisconfiguredNamingTheProperty() throws Exception {
        // The fencing probe would stop startup on this one-broker cluster's transaction log (replication 1).
        ConfigurableApplicationContext n1 = members.start(
                "n1",
                "krabka.coordination.topic.replication-factor=3",
                "krabka.coordination.topic.allow-unsafe=false",
                "krabka.coordination.probe=warn");
        assertThat(health(n1).get("status").asString()).isIn("OUT_OF_SERVICE", "DOWN");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> health(n1).get("status").asString().equals("DOWN"));
        JsonNode health = health(n1);
        assertThat(health.get("details").has("unreachable")).isFalse();
        assertThat(health.get("details").get("misconfigured").get("controller").asString())
                .contains("replication factor 3")
                .contains("krabka.coordination.topic.replication-factor");
    }

    /**
     * The fencing probe runs once before the first grant; on this one-broker development
     * setup (replication 1, allow-unsafe) it warns, once per WARN, and its report shows in
     * the endpoint and in health.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void theFencingProbeRunsBeforeTheFirstGrantWarnsOnceAndShowsInTheEndpointAndHealth(CapturedOutput output)
            throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n1) == MemberRoleState.LEADER);
        String clusterId = cluster.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS);
        String log = output.getOut();
        assertThat(log.indexOf("Fencing probe of cluster " + clusterId + ": broker.transaction-state-log WARN"))
                .as("the probe's WARN before the member contends")
                .isNotNegative()
                .isLessThan(log.indexOf("Member n1 contends for roles"));
        assertThat(log.lines()
                        .filter(line -> line.contains("Fencing probe of cluster")
                                && line.contains("broker.transaction-state-log WARN"))
                        .count())
                .isEqualTo(1);

        JsonNode probe = get(n1, "/actuator/coordination").get("probe");
        assertThat(probe.get("mode").asString()).isEqualTo("fail");
        assertThat(probe.get("status").asString()).isEqualTo("WARN");
        assertThat(probe.get("report").get("clusterId").asString()).isEqualTo(clusterId);
        // Another test's member in this JVM may have run the live checks on this cluster already: reused, then.
        assertThat(probe.get("report").get("probeTopic").asString())
                .startsWith("coordination-")
                .endsWith("-probe");
        List<String> passed = new ArrayList<>();
        probe.get("report").get("checks").forEach(check -> {
            if (check.get("status").asString().equals("PASS")) {
                passed.add(check.get("name").asString());
            }
        });
        assertThat(passed)
                .contains("transaction-version", "live-fence", "commit-after-fence", "epoch-behaviour", "aborted-read");
        JsonNode healthProbe = health(n1).get("details").get("probe");
        assertThat(healthProbe.get("status").asString()).isEqualTo("WARN");
        assertThat(healthProbe.get("clusterId").asString()).isEqualTo(clusterId);
        assertThat(healthProbe.get("warnings").toString()).contains("broker.transaction-state-log");
    }

    /**
     * A new user who points a member at a coordination topic with unclean leader election
     * on, with the sample's development settings (replication 1, allow-unsafe): startup
     * stops, and Boot's failure report names the setting and the fix.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aCoordinationTopicWithUncleanLeaderElectionStopsStartupNamingTheSettingAndTheFix(CapturedOutput output)
            throws Exception {
        cluster.admin()
                .createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 3, (short) 1)
                        .configs(Map.of("cleanup.policy", "compact", "unclean.leader.election.enable", "true"))))
                .all()
                .get(20, TimeUnit.SECONDS);
        assertThatThrownBy(() -> members.start("n1"))
                .hasMessageContaining("Failed to start bean 'startupFencingProbe'");
        assertThat(output.getOut())
                .contains("APPLICATION FAILED TO START")
                .contains("the fencing probe of cluster")
                .contains("- topic.unclean-leader-election: " + topic + ": unclean.leader.election.enable=true")
                .contains("topic.unclean-leader-election: kafka-configs.sh --alter --entity-type topics --entity-name "
                        + topic + " --add-config unclean.leader.election.enable=false");
    }

    private JsonNode health(ConfigurableApplicationContext member) throws Exception {
        return JsonMapper.builder()
                .build()
                .readTree(http.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                                + member.getEnvironment().getProperty("local.server.port")
                                                + "/actuator/health"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body())
                .get("components")
                .get("coordination");
    }

    /** An operator adds partitions to the live coordination topic: nobody challenges, each says why, the endpoint answers. */
    @Test
    void whenTheTopicIsAlteredUnderTheMembersNobodyChallengesAndTheEndpointKeepsAnswering() throws Exception {
        ConfigurableApplicationContext n1 = members.start("n1");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = members.start("n2");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> state(n2) == MemberRoleState.STANDBY
                        && get(n2, "/actuator/coordination")
                                        .get("roles")
                                        .get("controller")
                                        .get("roster")
                                        .size()
                                == 2);
        cluster.admin()
                .createPartitions(Map.of(topic, org.apache.kafka.clients.admin.NewPartitions.increaseTo(5)))
                .all()
                .get(20, TimeUnit.SECONDS);
        for (ConfigurableApplicationContext member : List.of(n1, n2)) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> member.getBean(LeadershipLoop.class)
                                    .problem(CONTROLLER)
                                    .filter(
                                            io.krabka.streams.coordination.CoordinationConfigurationException.class
                                                    ::isInstance)
                                    .isPresent()
                            && state(member) == MemberRoleState.STANDBY);
            // At once each time; a read of the cluster since the change says what changed.
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                long start = System.nanoTime();
                JsonNode role =
                        get(member, "/actuator/coordination").get("roles").get("controller");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
                assertThat(role.get("problem").asString()).contains("changed its partition count from 3 to 5");
            });
            JsonNode health = JsonMapper.builder()
                    .build()
                    .readTree(http.send(
                                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                                    + member.getEnvironment().getProperty("local.server.port")
                                                    + "/actuator/health"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .body())
                    .get("components")
                    .get("coordination");
            assertThat(health.get("status").asString()).isEqualTo("DOWN");
            assertThat(health.get("details")
                            .get("misconfigured")
                            .get("controller")
                            .asString())
                    .contains("partition count");
        }
        // The holder's leadership ended; nobody was granted the role after the change.
        assertThat(appOf(n1).events)
                .filteredOn(LeadershipGrantedEvent.class::isInstance)
                .hasSize(1);
        assertThat(appOf(n2).events)
                .filteredOn(LeadershipGrantedEvent.class::isInstance)
                .isEmpty();
        assertThat(ends(n1))
                .singleElement()
                .satisfies(ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED));
    }
}
