package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationHealthIndicator;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;

/**
 * The starter on a broker that authenticates clients with SASL/PLAIN and authorizes
 * them with the standard (KRaft) authorizer, nothing allowed without an ACL.
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
 */
@ExtendWith(OutputCaptureExtension.class)
class SaslAuthorizationIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static final String TOPIC = "__coordination_state";
    private static final String COMMANDS = "commands";
    /** The loop's pause after a refusal (LeadershipLoop: ten times its error back-off). */
    private static final Duration DENIAL_RETRY = Duration.ofSeconds(10);
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    @TempDir
    static Path dir;
    private static KafkaProcessCluster cluster;

    private final List<ConfigurableApplicationContext> apps = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = KafkaProcessCluster.builder(dir).nodes(1)
                .listener(new KafkaProcessCluster.Listener("CLIENT", "SASL_PLAINTEXT"))
                .setting("listener.name.client.sasl.enabled.mechanisms", "PLAIN")
                .setting("listener.name.client.plain.sasl.jaas.config", PLAIN
                        + " user_admin=\"admin-secret\" user_alice=\"alice-secret\" user_mallory=\"mallory-secret\";")
                .setting("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                // ANONYMOUS is the principal of the PLAINTEXT CONTROLLER and INTERNAL listeners.
                .setting("super.users", "User:ANONYMOUS;User:admin")
                .setting("allow.everyone.if.no.acl.found", "false")
                .start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(COMMANDS, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            List<AclBinding> acls = new ArrayList<>();
            acls.add(allow("alice", ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.WRITE));
            acls.add(allow("mallory", ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.DESCRIBE));
            acls.add(allow("mallory", ResourceType.CLUSTER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE));
            for (String user : List.of("alice", "mallory")) {
                for (AclOperation operation : List.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                        AclOperation.DESCRIBE_CONFIGS)) {
                    acls.add(allow(user, ResourceType.TOPIC, TOPIC, operation));
                }
                acls.add(allow(user, ResourceType.TOPIC, COMMANDS, AclOperation.WRITE));
            }
            acls.add(allow("mallory", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE));
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            // The ACLs are metadata records: wait until the broker's authorizer serves all of them.
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    admin.describeAcls(AclBindingFilter.ANY).values().get(10, TimeUnit.SECONDS).size()
                            == acls.size());
        }
    }

    private static AclBinding allow(String user, ResourceType type, String name, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
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
                leadership.write(new ProducerRecord<>(COMMANDS, CONTROLLER.utf8(),
                        leadership.member().value().getBytes(StandardCharsets.UTF_8)));
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
            return Proxy.newProxyInstance(CoordinationTransport.class.getClassLoader(),
                    new Class<?>[] { CoordinationTransport.class }, (proxy, method, args) -> {
                        calls.computeIfAbsent(method.getName(), name -> new AtomicInteger()).incrementAndGet();
                        try {
                            return method.invoke(transport, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    private ConfigurableApplicationContext start(String user) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .web(WebApplicationType.NONE)
                .properties(Map.of(
                        "spring.kafka.bootstrap-servers", cluster.bootstrapServers("CLIENT"),
                        "spring.kafka.security.protocol", "SASL_PLAINTEXT",
                        "spring.kafka.properties.sasl.mechanism", "PLAIN",
                        "spring.kafka.properties.sasl.jaas.config",
                        PLAIN + " username=\"" + user + "\" password=\"" + user + "-secret\";",
                        "krabka.coordination.member-id", user,
                        "krabka.coordination.roles", CONTROLLER.name(),
                        "krabka.coordination.topic.replication-factor", "1",
                        "krabka.coordination.topic.allow-unsafe", "true",
                        "krabka.coordination.topic.partitions", "3"))
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
        assertThat(grant.getMember()).isEqualTo(MemberId.of("alice"));
        // Guarded writes to the commands topic go through: Write on it suffices with the role's epoch.
        await().atMost(Duration.ofSeconds(10)).until(() -> app.dispatched.get() >= 3);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            LeadershipStatus status = alice.getBean(CoordinationClient.class).describe(CONTROLLER);
            assertThat(status.holder()).contains(MemberId.of("alice"));
            assertThat(status.current()).isTrue();
            assertThat(status.token().producerId()).isEqualTo(grant.getToken().producerId());
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
        // Two and a half retry periods: still one ERROR line, still running and contending,
        // never granted, and never more than one InitProducerId per retry period.
        Duration window = DENIAL_RETRY.multipliedBy(5).dividedBy(2);
        await().during(window).atMost(window.plusSeconds(5)).untilAsserted(() -> {
            assertThat(lines(output, denial)).as("lines that report the refusal").isEqualTo(1);
            assertThat(lines(output, " ERROR ")).as("ERROR lines").isEqualTo(1);
            assertThat(mallory.isRunning()).as("context running").isTrue();
            assertThat(loop.isRunning()).as("loop running").isTrue();
            assertThat(loop.state(CONTROLLER)).isEqualTo(MemberRoleState.STANDBY);
            assertThat(app.grants).isEmpty();
            assertThat(calls.count("initEpoch")).as("InitProducerId attempts")
                    .isLessThanOrEqualTo(2 + (int) (elapsed(refusedAt) / DENIAL_RETRY.toMillis()));
        });
        // It kept trying (the single line is not a loop that gave up): one attempt per period, registered once.
        assertThat(calls.count("initEpoch")).isBetween(3, 4);
        assertThat(calls.count("register")).isEqualTo(1);
        assertThat(app.dispatched).hasValue(0);

        String line = output.getOut().lines().filter(l -> l.contains(denial)).findFirst().orElseThrow();
        assertThat(line).contains(" ERROR ")
                .contains("initializing the epoch of role controller was refused by the cluster's ACLs: "
                        + "Transactional Id authorization failed.")
                .contains("needs Write on TransactionalId:controller");

        Health health = health(mallory);
        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails().get("roles")).isEqualTo(Map.of("controller", "standby"));
        assertThat(health.getDetails().get("notAuthorized")).isEqualTo(Map.of("controller",
                "initializing the epoch of role controller was refused by the cluster's ACLs: "
                        + "Transactional Id authorization failed."));
    }

    private static long elapsed(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    private static long lines(CapturedOutput output, String fragment) {
        return output.getOut().lines().filter(line -> line.contains(fragment)).count();
    }
}
