package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.actuate.CoordinationHealthIndicator;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;

/**
 * The starter on a broker that authenticates clients with SASL/PLAIN and authorizes
 * them with the standard (KRaft) authorizer, nothing allowed without an ACL: each user
 * has exactly the ACLs docs/OPERATIONS.md gives it, or those minus one.
 *
 * <p>alice has exactly the ACLs a member needs for role {@code controller}: Write on
 * {@code TransactionalId:controller}; Read, Write, Create and DescribeConfigs on the
 * coordination topic; Write on the topic its guarded writes go to. Describe is implied by
 * Read and Write, and IdempotentWrite on the cluster by Write on any topic, so neither is
 * granted. mallory has every one of those, plus the implied ones granted explicitly,
 * except Write on {@code TransactionalId:controller}.
 *
 * <p>alice is granted the role and dispatches. mallory registers, is refused at its
 * InitProducerId, logs that once, keeps running as a standby, tries again once per retry
 * period (counted on the auto-configured transport), and its health is down.
 *
 * <p>piper is a member of role {@code router} whose {@link LeaderListener} pipeline reads
 * {@code requests} and writes {@code routed}: a member's ACLs, plus Read on its input and
 * on {@code Group:router-pipeline}, Write on its output and on {@code requests.DLT}, and,
 * for its endpoint, Describe on {@code TransactionalId:controller}. pat and pam run
 * pipelines of their own with one pipeline ACL missing each.
 */
@ExtendWith(OutputCaptureExtension.class)
class SaslAuthorizationIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static final String TOPIC = "__coordination_state";
    private static final String COMMANDS = "commands";
    /** piper's pipeline: role, input, output. */
    private static final Role ROUTER = Role.of("router");

    private static final String REQUESTS = "requests";
    private static final String ROUTED = "routed";
    /** pat's pipeline, without any ACL on its group. */
    private static final Role AUDITOR = Role.of("auditor");

    private static final String AUDITS = "audits";
    private static final String AUDITED = "audited";
    /** pam's pipeline, without Write on its output. */
    private static final Role ARCHIVER = Role.of("archiver");

    private static final String ARCHIVES = "archives";
    private static final String ARCHIVED = "archived";
    private static final String DEAD_LETTERS = ".DLT";
    /** The loop's pause after a refusal (LeadershipLoop: ten times its error back-off). */
    private static final Duration DENIAL_RETRY = Duration.ofSeconds(10);

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    @TempDir
    static Path dir;

    private static KafkaProcessCluster cluster;

    private final List<ConfigurableApplicationContext> apps = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        StringBuilder users = new StringBuilder(PLAIN + " user_admin=\"admin-secret\"");
        for (String user : List.of("alice", "mallory", "piper", "pat", "pam")) {
            users.append(" user_").append(user).append("=\"").append(user).append("-secret\"");
        }
        cluster = KafkaProcessCluster.builder(dir)
                .nodes(1)
                .listener(new KafkaProcessCluster.Listener("CLIENT", "SASL_PLAINTEXT"))
                .setting("listener.name.client.sasl.enabled.mechanisms", "PLAIN")
                .setting("listener.name.client.plain.sasl.jaas.config", users + ";")
                .setting("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                // ANONYMOUS is the principal of the PLAINTEXT CONTROLLER and INTERNAL listeners.
                .setting("super.users", "User:ANONYMOUS;User:admin")
                .setting("allow.everyone.if.no.acl.found", "false")
                .start();
        try (Admin admin = cluster.admin()) {
            List<NewTopic> topics = new ArrayList<>(List.of(
                    new NewTopic(COMMANDS, 1, (short) 1),
                    new NewTopic(REQUESTS, 2, (short) 1),
                    new NewTopic(ROUTED, 1, (short) 1),
                    new NewTopic(REQUESTS + DEAD_LETTERS, 1, (short) 1)));
            for (String topic : List.of(AUDITS, AUDITED, ARCHIVES, ARCHIVED)) {
                topics.add(new NewTopic(topic, 1, (short) 1));
            }
            admin.createTopics(topics).all().get(30, TimeUnit.SECONDS);
            List<AclBinding> acls = new ArrayList<>();
            acls.add(allow("alice", ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.WRITE));
            acls.add(allow("mallory", ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.DESCRIBE));
            acls.add(allow("mallory", ResourceType.CLUSTER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE));
            for (String user : List.of("alice", "mallory")) {
                acls.addAll(coordinationTopic(user));
                acls.add(allow(user, ResourceType.TOPIC, COMMANDS, AclOperation.WRITE));
            }
            acls.add(allow("mallory", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE));
            // The table's rows for a member, its pipeline and its endpoint, nothing more.
            acls.add(allow("piper", ResourceType.TRANSACTIONAL_ID, ROUTER.name(), AclOperation.WRITE));
            acls.addAll(coordinationTopic("piper"));
            acls.add(allow("piper", ResourceType.TOPIC, REQUESTS, AclOperation.READ));
            acls.add(allow("piper", ResourceType.GROUP, PipelineSettings.defaultGroupId(ROUTER), AclOperation.READ));
            acls.add(allow("piper", ResourceType.TOPIC, ROUTED, AclOperation.WRITE));
            acls.add(allow("piper", ResourceType.TOPIC, REQUESTS + DEAD_LETTERS, AclOperation.WRITE));
            acls.add(allow("piper", ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.DESCRIBE));
            // pat: all of those for its own pipeline but the group's.
            acls.add(allow("pat", ResourceType.TRANSACTIONAL_ID, AUDITOR.name(), AclOperation.WRITE));
            acls.addAll(coordinationTopic("pat"));
            acls.add(allow("pat", ResourceType.TOPIC, AUDITS, AclOperation.READ));
            acls.add(allow("pat", ResourceType.TOPIC, AUDITED, AclOperation.WRITE));
            // pam: all of them but Write on its output.
            acls.add(allow("pam", ResourceType.TRANSACTIONAL_ID, ARCHIVER.name(), AclOperation.WRITE));
            acls.addAll(coordinationTopic("pam"));
            acls.add(allow("pam", ResourceType.TOPIC, ARCHIVES, AclOperation.READ));
            acls.add(allow("pam", ResourceType.GROUP, PipelineSettings.defaultGroupId(ARCHIVER), AclOperation.READ));
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            // The ACLs are metadata records: wait until the broker's authorizer serves all of them.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> admin.describeAcls(AclBindingFilter.ANY)
                                    .values()
                                    .get(10, TimeUnit.SECONDS)
                                    .size()
                            == acls.size());
        }
    }

    /** What every member needs on the coordination topic (Create: whichever member comes first creates it). */
    private static List<AclBinding> coordinationTopic(String user) {
        return Stream.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS)
                .map(operation -> allow(user, ResourceType.TOPIC, TOPIC, operation))
                .toList();
    }

    private static AclBinding allow(String user, ResourceType type, String name, AclOperation operation) {
        return new AclBinding(
                new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeApps() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        final List<LeadershipGrantedEvent> grants = new CopyOnWriteArrayList<>();
        final AtomicInteger dispatched = new AtomicInteger();

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            grants.add(event);
        }

        @Bean
        Dispatcher dispatcher() {
            return new Dispatcher(dispatched);
        }

        @Bean
        static TransportCalls transportCalls() {
            return new TransportCalls();
        }
    }

    /** Role-scoped work: a guarded write to the commands topic every 100 ms. */
    static final class Dispatcher {

        private final AtomicInteger dispatched;

        Dispatcher(AtomicInteger dispatched) {
            this.dispatched = dispatched;
        }

        @OnLeadership(role = "controller")
        void dispatch(Leadership leadership) throws InterruptedException {
            while (!Thread.currentThread().isInterrupted()) {
                leadership.write(new ProducerRecord<>(
                        COMMANDS, CONTROLLER.utf8(), leadership.member().value().getBytes(StandardCharsets.UTF_8)));
                dispatched.incrementAndGet();
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    /** Counts the calls the leadership loop makes on the auto-configured transport, per method. */
    static final class TransportCalls implements BeanPostProcessor {

        private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

        int count(String method) {
            AtomicInteger count = calls.get(method);
            return count == null ? 0 : count.get();
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            if (!(bean instanceof CoordinationTransport transport)) {
                return bean;
            }
            return Proxy.newProxyInstance(
                    CoordinationTransport.class.getClassLoader(),
                    new Class<?>[] {CoordinationTransport.class},
                    (proxy, method, args) -> {
                        calls.computeIfAbsent(method.getName(), name -> new AtomicInteger())
                                .incrementAndGet();
                        try {
                            return method.invoke(transport, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    /** A pipeline member: events, and a {@link Router} for {@code test.role} from {@code test.input} to {@code test.output}. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class PipelineApp {

        final List<LeadershipGrantedEvent> grants = new CopyOnWriteArrayList<>();
        final List<LeadershipEndedEvent> ends = new CopyOnWriteArrayList<>();

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            grants.add(event);
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            ends.add(event);
        }

        @Bean
        Router router(Environment environment) {
            return new Router(environment.getRequiredProperty("test.output"));
        }
    }

    /** One routed record per request; a request named "poison" throws, so it goes to the dead-letter topic. */
    static final class Router {

        private final String output;

        Router(String output) {
            this.output = output;
        }

        @LeaderListener(role = "${test.role}", topics = "${test.input}")
        ProducerRecord<String, String> route(ConsumerRecord<String, String> request) {
            if (request.value().equals("poison")) {
                throw new IllegalArgumentException("cannot route " + request.value());
            }
            return new ProducerRecord<>(output, request.key(), request.value() + " routed");
        }
    }

    private ConfigurableApplicationContext start(String user) {
        return start(MemberApp.class, user, Map.of("krabka.coordination.roles", CONTROLLER.name()));
    }

    private ConfigurableApplicationContext startPipeline(String user, Role role, String input, String output) {
        return start(
                PipelineApp.class,
                user,
                Map.of(
                        "krabka.coordination.roles",
                        role.name(),
                        "test.role",
                        role.name(),
                        "test.input",
                        input,
                        "test.output",
                        output));
    }

    private ConfigurableApplicationContext start(Class<?> application, String user, Map<String, String> more) {
        Map<String, Object> properties = new HashMap<>(Map.of(
                "spring.kafka.bootstrap-servers",
                cluster.bootstrapServers("CLIENT"),
                "spring.kafka.security.protocol",
                "SASL_PLAINTEXT",
                "spring.kafka.properties.sasl.mechanism",
                "PLAIN",
                "spring.kafka.properties.sasl.jaas.config",
                PLAIN + " username=\"" + user + "\" password=\"" + user + "-secret\";",
                "krabka.coordination.member-id",
                user,
                "krabka.coordination.topic.replication-factor",
                "1",
                "krabka.coordination.topic.allow-unsafe",
                "true",
                "krabka.coordination.topic.partitions",
                "3",
                "management.endpoints.web.exposure.include",
                "coordination"));
        properties.putAll(more);
        ConfigurableApplicationContext app = new SpringApplicationBuilder(application)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
        apps.add(app);
        return app;
    }

    private static Health health(ConfigurableApplicationContext app) {
        return app.getBean(CoordinationHealthIndicator.class).health(true);
    }

    @Test
    void aMemberWithTheNeededAclsIsGrantedTheRoleAndDispatches() {
        ConfigurableApplicationContext alice = start("alice");
        MemberApp app = alice.getBean(MemberApp.class);

        await().atMost(Duration.ofSeconds(30)).until(() -> !app.grants.isEmpty());
        LeadershipGrantedEvent grant = app.grants.get(0);
        assertThat(grant.member()).isEqualTo(MemberId.of("alice"));
        // Guarded writes to the commands topic go through: Write on it suffices with the role's epoch.
        await().atMost(Duration.ofSeconds(10)).until(() -> app.dispatched.get() >= 3);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            LeadershipStatus status = alice.getBean(CoordinationClient.class).describe(CONTROLLER);
            assertThat(status.holder()).contains(MemberId.of("alice"));
            assertThat(status.current()).isTrue();
            assertThat(status.token().producerId()).isEqualTo(grant.token().producerId());
        });
        Health health = health(alice);
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails().get("roles")).isEqualTo(Map.of("controller", "leader"));
    }

    @Test
    void withoutWriteOnTheTransactionalIdAMemberIsRefusedLogsItOnceRetriesSlowlyAndReportsDown(CapturedOutput output) {
        ConfigurableApplicationContext mallory = start("mallory");
        MemberApp app = mallory.getBean(MemberApp.class);
        TransportCalls calls = mallory.getBean(TransportCalls.class);
        LeadershipLoop loop = mallory.getBean(LeadershipLoop.class);
        String denial = "Member mallory is not authorized to take role controller";

        await().atMost(Duration.ofSeconds(30)).until(() -> lines(output, denial) == 1);
        long refusedAt = System.nanoTime();
        // One and a half retry periods: still one ERROR line, still running and contending,
        // never granted, and never more than one InitProducerId per retry period.
        Duration window = DENIAL_RETRY.multipliedBy(3).dividedBy(2);
        await().during(window).atMost(window.plusSeconds(5)).untilAsserted(() -> {
            assertThat(lines(output, denial))
                    .as("lines that report the refusal")
                    .isEqualTo(1);
            assertThat(lines(output, " ERROR ")).as("ERROR lines").isEqualTo(1);
            assertThat(mallory.isRunning()).as("context running").isTrue();
            assertThat(loop.isRunning()).as("loop running").isTrue();
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.STANDBY);
            assertThat(app.grants).isEmpty();
            assertThat(calls.count("initEpoch"))
                    .as("InitProducerId attempts")
                    .isLessThanOrEqualTo(2 + (int) (elapsed(refusedAt) / DENIAL_RETRY.toMillis()));
        });
        // It kept trying (the single line is not a loop that gave up): one attempt per period, registered once.
        assertThat(calls.count("initEpoch")).isBetween(2, 3);
        assertThat(calls.count("register")).isEqualTo(1);
        assertThat(app.dispatched).hasValue(0);

        String line = output.getOut()
                .lines()
                .filter(l -> l.contains(denial))
                .findFirst()
                .orElseThrow();
        assertThat(line)
                .contains(" ERROR ")
                .contains("initializing the epoch of role controller was refused by the cluster's ACLs: "
                        + "Transactional Id authorization failed.")
                .contains("needs Write on TransactionalId:controller");

        Health health = health(mallory);
        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails().get("roles")).isEqualTo(Map.of("controller", "standby"));
        assertThat(health.getDetails().get("notAuthorized"))
                .isEqualTo(Map.of(
                        "controller",
                        "initializing the epoch of role controller was refused by the cluster's ACLs: "
                                + "Transactional Id authorization failed."));
    }

    @Test
    void aPipelineMemberWithTheDocumentedAclsCommitsEachInputOnceAndItsEndpointAnswersForAnotherRole()
            throws Exception {
        ConfigurableApplicationContext alice = start("alice");
        ConfigurableApplicationContext piper = startPipeline("piper", ROUTER, REQUESTS, ROUTED);
        PipelineApp app = piper.getBean(PipelineApp.class);
        String group = PipelineSettings.defaultGroupId(ROUTER);

        await().atMost(WAIT).until(() -> app.grants.size() == 1);
        send(REQUESTS, "r0", "r1", "r2", "poison", "r3", "r4");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(read(ROUTED))
                    .containsExactlyInAnyOrder("r0 routed", "r1 routed", "r2 routed", "r3 routed", "r4 routed");
            assertThat(read(REQUESTS + DEAD_LETTERS)).containsExactly("poison");
            assertThat(committed(group)).isEqualTo(ends(REQUESTS));
        });
        // Released and granted again, it resumes from the offsets it committed in its group.
        assertThat(piper.getBean(LeadershipLoop.class).release(ROUTER)).isTrue();
        await().atMost(WAIT).until(() -> app.grants.size() == 2);
        send(REQUESTS, "r5", "r6");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(read(ROUTED))
                    .containsExactlyInAnyOrder(
                            "r0 routed", "r1 routed", "r2 routed", "r3 routed", "r4 routed", "r5 routed", "r6 routed");
            assertThat(committed(group)).isEqualTo(ends(REQUESTS));
        });
        assertThat(app.ends)
                .singleElement()
                .satisfies(ended -> assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED));

        // Its endpoint answers for its own role and, with Describe on its transactional id, for alice's.
        CoordinationEndpoint endpoint = piper.getBean(CoordinationEndpoint.class);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(endpoint.coordination(SecurityContext.NONE)
                                .roles()
                                .get(ROUTER.name()))
                        .satisfies(router -> {
                            assertThat(router.problem()).isNull();
                            assertThat(router.holder()).isEqualTo("piper");
                        }));
        await().atMost(WAIT).untilAsserted(() -> {
            CoordinationEndpoint.RoleReport controller = endpoint.role(SecurityContext.NONE, CONTROLLER.name());
            assertThat(controller.problem()).isNull();
            assertThat(controller.holder()).isEqualTo("alice");
            assertThat(controller.current()).isTrue();
            assertThat(controller.state()).isEqualTo("not-configured");
        });
        // alice has no Describe on TransactionalId:router: her endpoint names the refusal.
        CoordinationEndpoint.RoleReport router =
                alice.getBean(CoordinationEndpoint.class).role(SecurityContext.NONE, ROUTER.name());
        assertThat(router.problem()).contains("(role router) was refused by the cluster's ACLs", "transactionalId");
    }

    @Test
    void aPipelineWithoutAnAclItNeedsCommitsNothingAndSaysWhichWasRefused(CapturedOutput output) throws Exception {
        ConfigurableApplicationContext pat = startPipeline("pat", AUDITOR, AUDITS, AUDITED);
        startPipeline("pam", ARCHIVER, ARCHIVES, ARCHIVED);
        send(AUDITS, "a0");
        send(ARCHIVES, "b0");

        // pat, without Read on its group, cannot fetch the group's offsets: its work fails and the leadership ends.
        PipelineApp app = pat.getBean(PipelineApp.class);
        await().atMost(WAIT).until(() -> !app.ends.isEmpty());
        LeadershipEndedEvent ended = app.ends.get(0);
        assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED);
        String refusal =
                "@LeaderListener " + Router.class.getName() + ".route() of role auditor was refused by the cluster's"
                        + " ACLs: Not authorized to access group: auditor-pipeline. Its pipeline needs Read on topic(s) [audits],"
                        + " Read on Group:auditor-pipeline, and Write on every topic it writes (its outputs, and <input>.DLT for dead"
                        + " letters)";
        assertThat(ended.failure().orElseThrow())
                .isInstanceOf(CoordinationAuthorizationException.class)
                .hasMessage(refusal);
        // Named once, shown in health, and taken again only after the refusal back-off (it crash-looped every second).
        await().atMost(WAIT)
                .until(() -> output.getOut()
                        .contains("The work of role auditor was refused by the cluster, so pat"
                                + " gives the role up and takes it again in 10 s at the earliest: " + refusal));
        assertThat(pat.getBean(LeadershipLoop.class).problem(AUDITOR))
                .get()
                .isInstanceOf(CoordinationAuthorizationException.class);
        // pam, without Write on its output, has its transaction refused and aborted, offsets with it: the work ends
        // too.
        await().atMost(WAIT)
                .until(() -> output.getOut()
                        .contains("The work of role archiver was refused by the cluster, so pam"
                                + " gives the role up and takes it again in 10 s at the earliest: a transaction of role archiver was refused by"
                                + " the cluster's ACLs: Not authorized to access topics: [archived]"));

        assertThat(read(AUDITED)).isEmpty();
        assertThat(read(ARCHIVED)).isEmpty();
        assertThat(committed(PipelineSettings.defaultGroupId(AUDITOR))).isEmpty();
        assertThat(committed(PipelineSettings.defaultGroupId(ARCHIVER))).isEmpty();
    }

    /** Writes values to {@code topic} as the super user, keyed by themselves. */
    private static void send(String topic, String... values) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
            for (String value : values) {
                producer.send(new ProducerRecord<>(topic, value, value)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Every committed value of {@code topic}, read as the super user. */
    private static List<String> read(String topic) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(partition -> new TopicPartition(topic, partition.partition()))
                    .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // read_committed: up to the last stable offsets.
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long giveUpAt = System.nanoTime() + WAIT.toNanos();
            while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))
                    && System.nanoTime() - giveUpAt < 0) {
                consumer.poll(Duration.ofMillis(100)).forEach(record -> values.add(record.value()));
            }
        }
        return values;
    }

    /** The offsets committed in {@code group}, per partition. */
    private static Map<TopicPartition, Long> committed(String group) throws Exception {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS)
                    .forEach((partition, offset) -> offsets.put(partition, offset.offset()));
            return offsets;
        }
    }

    /** The end offset of every partition of {@code topic}. */
    private static Map<TopicPartition, Long> ends(String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(topic)
                    .partitions()
                    .forEach(partition ->
                            latest.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest()));
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(latest)
                    .all()
                    .get(30, TimeUnit.SECONDS)
                    .forEach((partition, info) -> ends.put(partition, info.offset()));
            return ends;
        }
    }

    private static long elapsed(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    private static long lines(CapturedOutput output, String fragment) {
        return output.getOut().lines().filter(line -> line.contains(fragment)).count();
    }
}
