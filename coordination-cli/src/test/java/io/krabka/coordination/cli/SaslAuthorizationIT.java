package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.coordination.cli.CoordinationCliTest.Result;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool on a broker that authenticates clients with SASL/PLAIN and authorizes them
 * with the standard (KRaft) authorizer, nothing allowed without an ACL: the CLI's rows of
 * docs/OPERATIONS.md (the starter's are the autoconfigure module's SaslAuthorizationIT).
 *
 * <p>member, with exactly a member's ACLs, holds {@code controller} and
 * {@code scheduler}. operator has exactly the tool's: Read and DescribeConfigs on the
 * coordination topic, Describe on {@code TransactionalId:controller} and
 * {@code TransactionalId:scheduler}. blind has those but Describe on the scheduler's
 * transactional id, glancer Describe instead of Read on the topic, and unconfigured no
 * DescribeConfigs.
 */
class SaslAuthorizationIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static final Role SCHEDULER = Role.of("scheduler");
    private static final String TOPIC = "__coordination_state";
    private static final TopicSpec SPEC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3).withAllowUnsafe(true);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";
    private static final List<String> USERS = List.of("member", "operator", "blind", "glancer", "unconfigured");

    @TempDir
    static Path dir;

    private static KafkaProcessCluster cluster;
    private static final List<AutoCloseable> opened = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void startCluster() throws Exception {
        StringBuilder users = new StringBuilder(PLAIN + " user_admin=\"admin-secret\"");
        USERS.forEach(user ->
                users.append(" user_").append(user).append("=\"").append(user).append("-secret\""));
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
        opened.add(cluster);
        List<AclBinding> acls = new ArrayList<>();
        for (Role role : List.of(CONTROLLER, SCHEDULER)) {
            acls.add(allow("member", ResourceType.TRANSACTIONAL_ID, role.name(), AclOperation.WRITE));
        }
        for (AclOperation operation :
                List.of(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE_CONFIGS)) {
            acls.add(allow("member", ResourceType.TOPIC, TOPIC, operation));
        }
        for (String user : List.of("operator", "blind", "glancer", "unconfigured")) {
            acls.add(allow(
                    user,
                    ResourceType.TOPIC,
                    TOPIC,
                    user.equals("glancer") ? AclOperation.DESCRIBE : AclOperation.READ));
            if (!user.equals("unconfigured")) {
                acls.add(allow(user, ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE_CONFIGS));
            }
            acls.add(allow(user, ResourceType.TRANSACTIONAL_ID, CONTROLLER.name(), AclOperation.DESCRIBE));
            if (!user.equals("blind")) {
                acls.add(allow(user, ResourceType.TRANSACTIONAL_ID, SCHEDULER.name(), AclOperation.DESCRIBE));
            }
        }
        try (Admin admin = cluster.admin()) {
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            // The ACLs are metadata records: wait until the broker's authorizer serves all of them.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> admin.describeAcls(AclBindingFilter.ANY)
                                    .values()
                                    .get(10, TimeUnit.SECONDS)
                                    .size()
                            == acls.size());
        }
        hold(CONTROLLER);
        hold(SCHEDULER);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        List<AutoCloseable> reversed = new ArrayList<>(opened);
        Collections.reverse(reversed);
        for (AutoCloseable closeable : reversed) {
            closeable.close();
        }
    }

    private static AclBinding allow(String user, ResourceType type, String name, AclOperation operation) {
        return new AclBinding(
                new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }

    /** The client settings of {@code user} on the SASL listener. */
    private static Map<String, Object> sasl(String user) {
        return Map.of(
                "bootstrap.servers",
                cluster.bootstrapServers("CLIENT"),
                "security.protocol",
                "SASL_PLAINTEXT",
                "sasl.mechanism",
                "PLAIN",
                "sasl.jaas.config",
                PLAIN + " username=\"" + user + "\" password=\"" + user + "-secret\";");
    }

    /** A contender of member for {@code role}, through the SASL listener; returns once granted. */
    private static void hold(Role role) throws Exception {
        KafkaCoordinationTransport transport =
                KafkaCoordinationTransport.create(sasl("member"), SPEC, Duration.ofSeconds(20), Duration.ofSeconds(20));
        opened.add(transport);
        CoordinationClient client = new CoordinationClient(transport);
        opened.add(client);
        CompletableFuture<Leadership> granted = new CompletableFuture<>();
        Contender contender = new Contender(client, role, MemberId.of("member"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                granted.complete(leadership);
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                // The tests end with the cluster.
            }
        });
        opened.add(contender);
        contender.start();
        granted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** The tool as {@code user}, its connection in a --command-config file as an operator would keep it. */
    private static Result cli(String user, String... command) throws Exception {
        Path config = dir.resolve(user + ".properties");
        StringBuilder properties = new StringBuilder();
        sasl(user).forEach((name, value) -> {
            if (!name.equals("bootstrap.servers")) {
                properties.append(name).append('=').append(value).append('\n');
            }
        });
        Files.writeString(config, properties);
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of(
                "--bootstrap-server",
                cluster.bootstrapServers("CLIENT"),
                "--partitions",
                "3",
                "--timeout",
                "20s",
                "--command-config",
                config.toString()));
        return CoordinationCliTest.cli(args.toArray(String[]::new));
    }

    private static String line(String out, String start) {
        return out.lines()
                .filter(line -> line.startsWith(start))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starts with \"" + start + "\" in:\n" + out));
    }

    @Test
    void withTheDocumentedAclsListAndDescribeShowEveryRoleAndWhetherItsHolderIsCurrent() {
        // current() is briefly false while a renewal commits: ask again rather than fail on that instant.
        await().atMost(WAIT).untilAsserted(() -> {
            Result list = cli("operator", "list");

            assertThat(list.exitCode()).as(list.err()).isZero();
            assertThat(line(list.out(), "controller ").split(" +"))
                    .startsWith("controller", Integer.toString(RolePartitioner.partitionFor(CONTROLLER, 3)), "member");
            assertThat(line(list.out(), "controller ").split(" +")[4]).isEqualTo("yes");
            assertThat(line(list.out(), "scheduler ").split(" +")[4]).isEqualTo("yes");
            assertThat(list.err()).doesNotContain("not allowed", "error");
        });
        await().atMost(WAIT).untilAsserted(() -> {
            Result describe = cli("operator", "describe", "--role", "scheduler");

            assertThat(describe.exitCode()).as(describe.err()).isZero();
            assertThat(line(describe.out(), "Holder:")).endsWith(" member");
            assertThat(line(describe.out(), "Current:")).matches("Current: +yes .*");
            assertThat(line(describe.out(), "Coordinator:")).contains("transaction state");
        });
    }

    @Test
    void withoutDescribeOnARolesTransactionalIdTheToolShowsThatRoleWithCurrentUnknown() {
        await().atMost(WAIT).untilAsserted(() -> {
            Result list = cli("blind", "list");

            assertThat(list.exitCode()).as(list.err()).isZero();
            assertThat(line(list.out(), "controller ").split(" +")[4]).isEqualTo("yes");
            assertThat(line(list.out(), "scheduler ").split(" +"))
                    .startsWith("scheduler", Integer.toString(RolePartitioner.partitionFor(SCHEDULER, 3)), "member");
            assertThat(line(list.out(), "scheduler ").split(" +")[4]).isEqualTo("unknown");
            assertThat(list.err())
                    .contains("warning: not allowed to describe the transactional id scheduler"
                            + " (DescribeTransactions): current is unknown for that role; grant Describe on TransactionalId scheduler"
                            + " to know it")
                    .doesNotContain("transactional id controller");
        });
    }

    @Test
    void withoutReadOnTheTopicTheToolFailsNamingWhatWasRefused() throws Exception {
        Result list = cli("glancer", "list");
        Result describe = cli("glancer", "describe", "--role", "controller");

        assertThat(list.exitCode()).isEqualTo(1);
        assertThat(list.out()).isEmpty();
        assertThat(list.err())
                .contains("error: the Kafka cluster at " + cluster.bootstrapServers("CLIENT") + " refused reading"
                        + " partitions [0, 1, 2] of topic __coordination_state (ACLs): Not authorized to access topics:"
                        + " [__coordination_state]. The tool needs Read and DescribeConfigs on the coordination topic, and Describe on"
                        + " the roles' transactional ids");
        assertThat(describe.exitCode()).isEqualTo(1);
        assertThat(describe.err())
                .contains("refused reading partition [" + RolePartitioner.partitionFor(CONTROLLER, 3)
                        + "] of topic __coordination_state (ACLs)");
    }

    @Test
    void withoutDescribeConfigsOnTheTopicTheToolFailsNamingWhatWasRefused() throws Exception {
        Result list = cli("unconfigured", "list");

        assertThat(list.exitCode()).isEqualTo(1);
        assertThat(list.out()).isEmpty();
        assertThat(list.err())
                .contains(
                        "error: the Kafka cluster at " + cluster.bootstrapServers("CLIENT") + " refused describing"
                                + " topic __coordination_state (ACLs): Topic authorization failed. The tool needs Read and DescribeConfigs");
    }
}
