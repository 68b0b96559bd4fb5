package io.krabka.coordination.compat.boot41;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.spring.LeaderListener;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.core.SpringVersion;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A user's application on Spring Boot 4.1: the starter built on Boot 4.0, everything else
 * from Boot 4.1's BOM, against a Kafka 4.4.0 broker JVM. Two members: the holder works and
 * the standby waits, the endpoint shows both, a {@link LeaderListener} turns each request
 * into one command, the broker fences a holder whose epoch was taken, and a graceful
 * shutdown hands the role over.
 */
class SpringBoot41ApplicationIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static KafkaProcessCluster broker;
    private static Admin admin;

    private final List<ConfigurableApplicationContext> apps = new CopyOnWriteArrayList<>();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startBroker() throws Exception {
        String classPath = Files.readString(Path.of(System.getProperty("broker.classpath.file")))
                .trim();
        // Kept after the run for the broker's log, so emptied first: a node formatted by an
        // earlier run refuses the new run's cluster id.
        Path dir = Path.of("target", "broker").toAbsolutePath();
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }
        broker = KafkaProcessCluster.builder(dir).classPath(classPath).start();
        admin = broker.admin();
    }

    @AfterAll
    static void stopBroker() {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @AfterEach
    void closeApps() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        final List<Object> events = new CopyOnWriteArrayList<>();
        final AtomicInteger dispatched = new AtomicInteger();

        @Value("${test.work}")
        String workTopic;

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            events.add(event);
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            events.add(event);
        }

        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher(this);
        }

        @Bean
        RequestListener requestListener() {
            return new RequestListener();
        }
    }

    /** Role-scoped work: one guarded command, then it holds the role until its thread is interrupted. */
    static class Dispatcher {
        private final MemberApp app;

        Dispatcher(MemberApp app) {
            this.app = app;
        }

        @OnLeadership(role = "controller")
        void dispatch(Leadership leadership) {
            try {
                leadership.write(new ProducerRecord<>(
                        app.workTopic,
                        CONTROLLER.utf8(),
                        Long.toString(leadership.term()).getBytes(StandardCharsets.UTF_8)));
                app.dispatched.incrementAndGet();
                new CountDownLatch(1).await();
            } catch (InterruptedException | RuntimeException e) {
                // Interrupted when the leadership ends; a fenced write ends it too.
            }
        }
    }

    /** One command per request, through Spring Kafka's serializers, on the leader only. */
    static class RequestListener {
        @LeaderListener(role = "controller", topics = "${test.requests}")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request, Leadership leadership) {
            return new ProducerRecord<>(
                    request.topic().replace("requests", "commands"),
                    request.key(),
                    request.value() + "," + leadership.member().value());
        }
    }

    private ConfigurableApplicationContext start(String member) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .properties(Map.of(
                        "spring.kafka.bootstrap-servers", broker.bootstrapServers(),
                        "server.port", "0",
                        "management.endpoints.web.exposure.include", "coordination,health",
                        "krabka.coordination.member-id", member,
                        "krabka.coordination.roles", "controller"))
                .properties(
                        "krabka.coordination.lease.duration=3s",
                        "krabka.coordination.lease.renew-interval=1s",
                        "krabka.coordination.lease.challenge-stagger=1s",
                        "krabka.coordination.topic.name=coordination-" + suffix,
                        "krabka.coordination.topic.partitions=3",
                        "krabka.coordination.topic.replication-factor=1",
                        "krabka.coordination.topic.allow-unsafe=true",
                        "krabka.coordination.endpoint.show-details=always",
                        "test.requests=requests-" + suffix,
                        "test.work=work-" + suffix)
                .run();
        apps.add(app);
        return app;
    }

    @Test
    void theApplicationRunsOnBoot41sSpringAndKafkaClients() {
        assertThat(SpringBootVersion.getVersion()).isEqualTo(System.getProperty("expected.spring-boot.version"));
        assertThat(AppInfoParser.getVersion()).isEqualTo(System.getProperty("expected.kafka-clients.version"));
        System.out.printf(
                "Spring Boot %s, Spring Framework %s, kafka-clients %s%n",
                SpringBootVersion.getVersion(), SpringVersion.getVersion(), AppInfoParser.getVersion());
    }

    @Test
    void holderWorksListenerAnswersStandbyWaitsFencingEndsTheHolderAndShutdownHandsOver() throws Exception {
        // The listener's dead-letter topic too: a @LeaderListener checks that it exists when granted.
        admin.createTopics(List.of(
                        new NewTopic("requests-" + suffix, 1, (short) 1),
                        new NewTopic("commands-" + suffix, 1, (short) 1),
                        new NewTopic("requests-" + suffix + ".DLT", 1, (short) 1),
                        new NewTopic("work-" + suffix, 1, (short) 1)))
                .all()
                .get(30, TimeUnit.SECONDS);
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(Duration.ofSeconds(60))
                .until(() -> state(n1) == MemberRoleState.LEADER
                        && appOf(n1).dispatched.get() == 1);
        ConfigurableApplicationContext n2 = start("n2");
        await().atMost(Duration.ofSeconds(30)).until(() -> state(n2) == MemberRoleState.STANDBY);

        // The endpoint of both members: the same holder, both on the roster.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (ConfigurableApplicationContext app : List.of(n1, n2)) {
                JsonNode role = get(app, "/actuator/coordination").get("roles").get("controller");
                assertThat(role.get("current").asBoolean()).isTrue();
                assertThat(role.get("holder").asString()).isEqualTo("n1");
                assertThat(role.get("roster").findValuesAsString("member")).containsExactly("n1", "n2");
            }
        });

        // The leader's listener answers each request once.
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>("requests-" + suffix, "k" + i, "r" + i))
                        .get(10, TimeUnit.SECONDS);
            }
        }
        await().atMost(Duration.ofSeconds(30))
                .until(() -> committed("commands-" + suffix).size() == 20);
        assertThat(committed("commands-" + suffix))
                .extracting(ConsumerRecord::value)
                .allSatisfy(command -> assertThat(command).endsWith(",n1"))
                .doesNotHaveDuplicates();

        // Another producer of the role's transactional id takes n1's epoch: the broker fences n1.
        try (KafkaProducer<byte[], byte[]> usurper = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                CONTROLLER.name(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class))) {
            usurper.initTransactions();
        }
        List<Object> events = appOf(n1).events;
        await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 2);
        assertThat(events.get(1))
                .isInstanceOfSatisfying(
                        LeadershipEndedEvent.class,
                        fenced -> assertThat(fenced.cause()).isEqualTo(LeadershipEndCause.FENCED));

        // Whoever holds the role after the lease deadline, a graceful shutdown hands it to the other.
        // The state turns LEADER before the grant event reaches the listener (events are
        // delivered on the callback executor): wait for both.
        await().atMost(Duration.ofSeconds(30))
                .until(() -> holdsWithItsGrantDelivered(n1) || holdsWithItsGrantDelivered(n2));
        ConfigurableApplicationContext holder = holdsWithItsGrantDelivered(n1) ? n1 : n2;
        ConfigurableApplicationContext other = holder == n1 ? n2 : n1;
        LeadershipGrantedEvent held = lastGrant(appOf(holder).events);
        holder.close();
        await().atMost(Duration.ofSeconds(30)).until(() -> state(other) == MemberRoleState.LEADER);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> lastGrant(appOf(other).events) != null
                        && lastGrant(appOf(other).events).token().supersedes(held.token()));
    }

    /** Whether {@code member} leads and the last event its app received is that leadership's grant. */
    private boolean holdsWithItsGrantDelivered(ConfigurableApplicationContext member) {
        List<Object> events = List.copyOf(appOf(member).events);
        return state(member) == MemberRoleState.LEADER
                && !events.isEmpty()
                && events.get(events.size() - 1) instanceof LeadershipGrantedEvent;
    }

    private static LeadershipGrantedEvent lastGrant(List<Object> events) {
        LeadershipGrantedEvent last = null;
        for (Object event : events) {
            if (event instanceof LeadershipGrantedEvent granted) {
                last = granted;
            }
        }
        return last;
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

    /** The committed records of a one-partition topic. */
    private static List<ConsumerRecord<String, String>> committed(String topic) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            List<ConsumerRecord<String, String>> records = new ArrayList<>();
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            return records;
        }
    }
}
