package io.krabka.streams.coordination.kafka;

import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RoleNews;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher's consumer on a broker that authenticates with SASL/PLAIN and authorizes
 * with the standard authorizer: a member without Read on the coordination topic (its
 * polls are refused at once) and one whose login fails. The watcher backs off instead
 * of polling in a loop, and once Read is granted it hears the role's news.
 */
class TopicWatcherIT {

    private static final String TOPIC = "__coordination_state";
    private static final int PARTITIONS = 3;
    private static final Role ROLE = Role.of("controller");
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    @TempDir
    static Path dir;

    private static KafkaProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = KafkaProcessCluster.builder(dir)
                .nodes(1)
                .listener(new KafkaProcessCluster.Listener("CLIENT", "SASL_PLAINTEXT"))
                .setting("listener.name.client.sasl.enabled.mechanisms", "PLAIN")
                .setting(
                        "listener.name.client.plain.sasl.jaas.config",
                        PLAIN + " user_admin=\"admin-secret\" user_eve=\"eve-secret\";")
                .setting("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                // ANONYMOUS is the principal of the PLAINTEXT CONTROLLER and INTERNAL listeners.
                .setting("super.users", "User:ANONYMOUS;User:admin")
                .setting("allow.everyone.if.no.acl.found", "false")
                .start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Map<String, Object> connection(String user, String password) {
        Map<String, Object> connection = new HashMap<>();
        connection.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers("CLIENT"));
        connection.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        connection.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        connection.put(
                SaslConfigs.SASL_JAAS_CONFIG, PLAIN + " username=\"" + user + "\" password=\"" + password + "\";");
        return connection;
    }

    /** The watcher's own consumer settings, its polls counted. */
    @SuppressWarnings("unchecked")
    private static Consumer<byte[], byte[]> counted(Map<String, Object> connection, AtomicInteger polls) {
        Consumer<byte[], byte[]> real = new KafkaConsumer<>(ClientSettings.watcher(connection));
        return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
                Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
                    if (method.getName().equals("poll")) {
                        polls.incrementAndGet();
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void withoutReadOnTheTopicTheWatcherBacksOffAndHearsTheNewsOnceReadIsGranted() throws Exception {
        AtomicInteger polls = new AtomicInteger();
        List<RoleNews> heard = new CopyOnWriteArrayList<>();
        MemberId probe = MemberId.of("probe");
        try (TopicWatcher watcher =
                new TopicWatcher(TOPIC, () -> PARTITIONS, () -> counted(connection("eve", "eve-secret"), polls))) {
            watcher.watch(ROLE, heard::add);
            await().atMost(Duration.ofSeconds(30)).until(() -> polls.get() >= 2);
            // Each refused poll fails at once: in a loop that is thousands a second.
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() -> polls.get() <= 15);

            try (Admin admin = cluster.admin()) {
                List<AclBinding> acls = List.of(allow(AclOperation.READ), allow(AclOperation.DESCRIBE));
                admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> admin.describeAcls(AclBindingFilter.ANY)
                                        .values()
                                        .get(10, TimeUnit.SECONDS)
                                        .size()
                                == acls.size());
            }
            // A registration of the role, appended until the watcher (at the end of the
            // partition once it polls again, at most 10 s later) tells of it.
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                int partition = RolePartitioner.partitionFor(ROLE, PARTITIONS);
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> {
                            producer.send(new ProducerRecord<>(
                                            TOPIC,
                                            partition,
                                            CoordinationCodec.encodeKey(CoordinationKey.registration(ROLE, probe)),
                                            null))
                                    .get(10, TimeUnit.SECONDS);
                            return heard.contains(new RoleNews(false, probe));
                        });
            }
        }
    }

    /**
     * Kafka paces failed logins itself (a refused authentication closes the connection,
     * and reconnects back off), so the watcher did not spin here before its own back-off
     * either; this keeps it so.
     */
    @Test
    void aFailedLoginIsRetriedWithGrowingWaits() {
        AtomicInteger polls = new AtomicInteger();
        try (TopicWatcher watcher =
                new TopicWatcher(TOPIC, () -> PARTITIONS, () -> counted(connection("eve", "wrong-secret"), polls))) {
            watcher.watch(ROLE, news -> {});
            await().atMost(Duration.ofSeconds(30)).until(() -> polls.get() >= 2);
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() -> polls.get() <= 15);
        }
    }

    private static AclBinding allow(AclOperation operation) {
        return new AclBinding(
                new ResourcePattern(ResourceType.TOPIC, TOPIC, PatternType.LITERAL),
                new AccessControlEntry("User:eve", "*", operation, AclPermissionType.ALLOW));
    }
}
