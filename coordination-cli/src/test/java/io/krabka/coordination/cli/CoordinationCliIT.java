package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.krabka.coordination.cli.CoordinationCliTest.Result;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.members.MemberAddressCodec;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.File;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tool against a real in-process broker: role {@code controller} held by member n0
 * with n1 as its standby, role {@code scheduler} held by n1 alone, and one malformed record
 * in partition 0 of a three-partition coordination topic.
 */
class CoordinationCliIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static final Role SCHEDULER = Role.of("scheduler");
    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final List<AutoCloseable> opened = Collections.synchronizedList(new ArrayList<>());
    private static KafkaTestCluster cluster;
    private static long controllerTerm;
    private static long schedulerTerm;

    @BeforeAll
    static void startMembers() throws Exception {
        cluster = KafkaTestCluster.start();
        opened.add(cluster);
        CoordinationClient n0 = client();
        CoordinationClient n1 = client();
        controllerTerm = hold(n0, CONTROLLER, "n0");
        contender(n1, CONTROLLER, "n1", new CompletableFuture<>()).start();
        schedulerTerm = hold(n1, SCHEDULER, "n1");
        CoordinationClient observer = client();
        await().atMost(WAIT)
                .until(() -> observer.observe(CONTROLLER, Duration.ofMillis(500))
                                .roster()
                                .size()
                        == 2);
        writeMalformedRecord();
    }

    @AfterAll
    static void stopMembers() throws Exception {
        List<AutoCloseable> reversed = new ArrayList<>(opened);
        Collections.reverse(reversed);
        for (AutoCloseable closeable : reversed) {
            closeable.close();
        }
    }

    private static CoordinationClient client() {
        KafkaCoordinationTransport transport = cluster.transport(TOPIC);
        opened.add(transport);
        CoordinationClient client = new CoordinationClient(transport);
        opened.add(client);
        return client;
    }

    private static Contender contender(
            CoordinationClient client, Role role, String member, CompletableFuture<Leadership> granted) {
        Contender contender = new Contender(client, role, MemberId.of(member), new Contender.Listener() {
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
        return contender;
    }

    /** Starts a contender for the role and returns the term of its grant. */
    private static long hold(CoordinationClient client, Role role, String member) throws Exception {
        CompletableFuture<Leadership> granted = new CompletableFuture<>();
        contender(client, role, member, granted).start();
        return granted.get(WAIT.toSeconds(), TimeUnit.SECONDS).term();
    }

    /** A key of kind 9: neither a registration nor a lease. Members skip it; the tool must count it. */
    private static void writeMalformedRecord() throws Exception {
        Map<String, Object> settings = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            producer.send(new ProducerRecord<>(TOPIC.name(), 0, new byte[] {0, 0, 0, 9}, new byte[] {1, 2, 3}))
                    .get(30, TimeUnit.SECONDS);
        }
    }

    private static String[] args(String... command) {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of("--bootstrap-server", cluster.bootstrapServers(), "--partitions", "3", "--timeout", "20s"));
        return args.toArray(String[]::new);
    }

    private static String line(String out, String start) {
        return out.lines()
                .filter(line -> line.startsWith(start))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starts with \"" + start + "\" in:\n" + out));
    }

    private static JsonNode role(JsonNode document, Role role) {
        for (JsonNode node : document.get("roles")) {
            if (node.get("role").asText().equals(role.name())) {
                return node;
            }
        }
        throw new AssertionError("no role " + role + " in " + document);
    }

    @Test
    void listShowsEveryRoleWithHolderTermCurrentAndRoster() {
        // current() is briefly false while a renewal commits: ask again rather than fail on that instant.
        await().atMost(WAIT).untilAsserted(() -> {
            Result result = CoordinationCliTest.cli(args("list"));

            assertThat(result.exitCode()).as(result.err()).isZero();
            assertThat(line(result.out(), "ROLE "))
                    .contains("PARTITION", "HOLDER", "TERM", "CURRENT", "DEADLINE", "ROSTER");
            assertThat(line(result.out(), "controller ").split(" +"))
                    .startsWith(
                            "controller",
                            Integer.toString(RolePartitioner.partitionFor(CONTROLLER, 3)),
                            "n0",
                            Long.toString(controllerTerm),
                            "yes");
            assertThat(line(result.out(), "controller ")).contains("(in ").endsWith("n0 (holder), n1 (0)");
            assertThat(line(result.out(), "scheduler ").split(" +"))
                    .startsWith(
                            "scheduler",
                            Integer.toString(RolePartitioner.partitionFor(SCHEDULER, 3)),
                            "n1",
                            Long.toString(schedulerTerm),
                            "yes");
            assertThat(line(result.out(), "scheduler ")).endsWith("n1 (holder)");
            assertThat(result.out())
                    .contains(
                            "2 roles in topic __coordination_state (3 partitions, replication factor 1)",
                            "malformed records: 1");
            assertThat(line(result.out(), "0 ")).contains("unknown_kind", "key kind 9");
            assertThat(result.err())
                    .contains("warning: the coordination topic __coordination_state breaks the fencing"
                            + " guarantees: replication factor 1");
        });
    }

    @Test
    void listAsJson() {
        await().atMost(WAIT).untilAsserted(() -> {
            Result result = CoordinationCliTest.cli(args("list", "--output", "json"));

            assertThat(result.exitCode()).as(result.err()).isZero();
            JsonNode document = JSON.readTree(result.out());
            assertThat(document.get("topic").asText()).isEqualTo("__coordination_state");
            assertThat(document.get("partitions").asInt()).isEqualTo(3);
            assertThat(document.get("roles")).hasSize(2);
            assertThat(document.get("roles").get(0).get("role").asText()).isEqualTo("controller");
            JsonNode controller = role(document, CONTROLLER);
            assertThat(controller.get("holder").asText()).isEqualTo("n0");
            assertThat(controller.get("term").asLong()).isEqualTo(controllerTerm);
            assertThat(controller.get("current").asBoolean()).isTrue();
            assertThat(controller.get("deadlineInMs").asLong()).isPositive();
            assertThat(controller.get("coordinator").get("producerEpoch").asInt())
                    .isEqualTo(controller.get("leaseEpoch").get("producerEpoch").asInt());
            assertThat(controller.get("roster")).hasSize(2);
            assertThat(controller.get("roster").get(0).get("member").asText()).isEqualTo("n0");
            assertThat(controller.get("roster").get(0).get("rank").asInt()).isEqualTo(-1);
            assertThat(controller.get("roster").get(0).get("holder").asBoolean())
                    .isTrue();
            assertThat(controller.get("roster").get(1).get("member").asText()).isEqualTo("n1");
            assertThat(controller.get("roster").get(1).get("rank").asInt()).isZero();
            JsonNode scheduler = role(document, SCHEDULER);
            assertThat(scheduler.get("holder").asText()).isEqualTo("n1");
            assertThat(scheduler.get("term").asLong()).isEqualTo(schedulerTerm);
            assertThat(document.get("malformedRecords").get("count").asLong()).isEqualTo(1);
            assertThat(document.get("malformedRecords")
                            .get("first")
                            .get(0)
                            .get("partition")
                            .asInt())
                    .isZero();
            assertThat(document.get("malformedRecords")
                            .get("first")
                            .get(0)
                            .get("problem")
                            .asText())
                    .isEqualTo("unknown_kind");
        });
    }

    @Test
    void describeShowsOneRoleAndItsRoster() {
        await().atMost(WAIT).untilAsserted(() -> {
            Result result = CoordinationCliTest.cli(args("describe", "--role", "controller"));

            assertThat(result.exitCode()).as(result.err()).isZero();
            assertThat(line(result.out(), "Role:")).endsWith(" controller");
            assertThat(line(result.out(), "Topic:"))
                    .contains("partition " + RolePartitioner.partitionFor(CONTROLLER, 3) + " of 3");
            assertThat(line(result.out(), "Holder:")).endsWith(" n0");
            assertThat(line(result.out(), "Term:")).endsWith(" " + controllerTerm);
            assertThat(line(result.out(), "Current:")).matches("Current: +yes .*");
            assertThat(line(result.out(), "Deadline:")).contains("(in ");
            assertThat(line(result.out(), "MEMBER ")).contains("RANK", "REGISTRATION OFFSET", "REGISTERED AT");
            assertThat(line(result.out(), "n0 ").split(" +")[1]).isEqualTo("holder");
            assertThat(line(result.out(), "n1 ").split(" +")[1]).isEqualTo("0");
            assertThat(result.out()).contains("Malformed records in partition");
        });
    }

    @Test
    void describeShowsTheUrlTheHolderAdvertisesForRouting() throws Exception {
        String members = MemberAddressCodec.topicFor(TOPIC.name());
        cluster.createTopic(members, 1);
        Map<String, Object> settings = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            MemberAddress address = new MemberAddress(MemberId.of("n1"), "http://10.0.0.7:8080", 1_700_000_000_000L);
            producer.send(new ProducerRecord<>(
                            members,
                            MemberAddressCodec.encodeKey(address.member()),
                            MemberAddressCodec.encodeValue(address)))
                    .get(30, TimeUnit.SECONDS);
        }

        Result text = CoordinationCliTest.cli(args("describe", "--role", "scheduler"));
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(line(text.out(), "Holder:")).endsWith(" n1");
        assertThat(line(text.out(), "Holder URL:")).endsWith(" http://10.0.0.7:8080");
        Result json = CoordinationCliTest.cli(args("describe", "--role", "scheduler", "--output", "json"));
        assertThat(JSON.readTree(json.out())
                        .get("roles")
                        .get(0)
                        .get("holderUrl")
                        .asText())
                .isEqualTo("http://10.0.0.7:8080");
        // n0, the holder of controller, advertises nothing: no line.
        assertThat(CoordinationCliTest.cli(args("describe", "--role", "controller"))
                        .out())
                .doesNotContain("Holder URL:");
    }

    @Test
    void describeAsJsonMatchesTheCoresOwnView() throws Exception {
        LeadershipStatus expected;
        try (KafkaCoordinationTransport transport = cluster.transport(TOPIC);
                CoordinationClient client = new CoordinationClient(transport)) {
            expected = client.observe(CONTROLLER, Duration.ZERO);
        }

        Result result = CoordinationCliTest.cli(args("describe", "--role", "controller", "--output", "json"));

        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode controller = JSON.readTree(result.out()).get("roles").get(0);
        assertThat(controller.get("found").asBoolean()).isTrue();
        assertThat(controller.get("holder").asText())
                .isEqualTo(expected.holder().orElseThrow().value());
        assertThat(controller.get("term").asLong()).isEqualTo(controllerTerm);
        assertThat(controller.get("grantedAt").asText())
                .isEqualTo(TextOutput.instant(expected.grantedAt().orElseThrow()));
        assertThat(controller.get("roster")).hasSize(2);
        for (int i = 0; i < 2; i++) {
            assertThat(controller.get("roster").get(i).get("member").asText())
                    .isEqualTo(expected.roster().get(i).member().value());
            assertThat(controller.get("roster").get(i).get("registrationOffset").asLong())
                    .isEqualTo(expected.roster().get(i).registrationOffset());
        }
    }

    @Test
    void describeOfAnUnknownRoleExitsWithThree() throws Exception {
        Result result = CoordinationCliTest.cli(args("describe", "--role", "nobody", "--output", "json"));

        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(result.err()).contains("error: no record of role nobody in partition");
        JsonNode nobody = JSON.readTree(result.out()).get("roles").get(0);
        assertThat(nobody.get("found").asBoolean()).isFalse();
        assertThat(nobody.get("holder").isNull()).isTrue();
        assertThat(nobody.get("current").asBoolean()).isFalse();
        assertThat(nobody.get("roster")).isEmpty();
    }

    @Test
    void aPartitionCountOtherThanTheTopicsIsRefused() {
        Result result = CoordinationCliTest.cli("list", "--bootstrap-server", cluster.bootstrapServers());

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err())
                .contains(
                        "has 3 partitions, but --partitions is 50",
                        "murmur2(role) % partitions",
                        "pass --partitions 3");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void aMissingTopicIsAnErrorAndIsNotCreated() throws Exception {
        Result list = CoordinationCliTest.cli(args("list", "--topic", "absent_coordination"));
        Result describe =
                CoordinationCliTest.cli(args("describe", "--role", "controller", "--topic", "absent_coordination"));

        for (Result result : List.of(list, describe)) {
            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.err())
                    .contains(
                            "error: the coordination topic absent_coordination does not exist on the Kafka"
                                    + " cluster at " + cluster.bootstrapServers(),
                            "This tool never creates it");
            assertThat(result.out()).isEmpty();
        }
        assertThat(cluster.admin().listTopics().names().get(30, TimeUnit.SECONDS))
                .doesNotContain("absent_coordination");
    }

    @Test
    void anUnreachableClusterFailsWithinTheTimeout() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        long started = System.nanoTime();

        Result result = CoordinationCliTest.cli("list", "--bootstrap-server", "127.0.0.1:" + port, "--timeout", "3s");

        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err())
                .contains("error: no answer from the Kafka cluster at 127.0.0.1:" + port + " within 3s"
                        + " while describing topic __coordination_state");
        assertThat(result.out()).isEmpty();
        assertThat(took).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(15));
    }

    @Test
    void theToolTakesNoEpochAndCreatesNoTransactionalId() throws Exception {
        assertThat(CoordinationCliTest.cli(args("list")).exitCode()).isZero();
        assertThat(CoordinationCliTest.cli(args("describe", "--role", "nobody")).exitCode())
                .isEqualTo(3);

        Set<String> ids = new TreeSet<>();
        for (TransactionListing listing :
                cluster.admin().listTransactions().all().get(30, TimeUnit.SECONDS)) {
            ids.add(listing.transactionalId());
        }
        assertThat(ids).containsExactly("controller", "scheduler");
    }

    @Test
    void theExecutableJarRunsListAndExitsWithTheCode(@TempDir Path dir) throws Exception {
        Path jar = Path.of(System.getProperty("cli.jar", "target/krabka-coordination-cli.jar"));
        assertThat(jar)
                .as("the jar failsafe tests; build it with ./mvnw -f coordination-cli/pom.xml verify")
                .exists();

        Process list = jar(dir, jar, "list", "--output", "json");
        Process missing = jar(dir, jar, "describe", "--role", "controller", "--topic", "absent_coordination");

        assertThat(list.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(missing.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(list.exitValue())
                .as(Files.readString(dir.resolve("list.err")))
                .isZero();
        JsonNode controller = role(JSON.readTree(dir.resolve("list.out").toFile()), CONTROLLER);
        assertThat(controller.get("holder").asText()).isEqualTo("n0");
        assertThat(controller.get("term").asLong()).isEqualTo(controllerTerm);
        assertThat(missing.exitValue()).isEqualTo(1);
        assertThat(Files.readString(dir.resolve("describe.err"), StandardCharsets.UTF_8))
                .contains("does not exist");
    }

    private static Process jar(Path dir, Path jar, String... command) throws Exception {
        List<String> line = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString()));
        line.addAll(List.of(args(command)));
        File out = dir.resolve(command[0] + ".out").toFile();
        File err = dir.resolve(command[0] + ".err").toFile();
        return new ProcessBuilder(line).redirectOutput(out).redirectError(err).start();
    }

    @Test
    void doctorOnADevelopmentClusterPassesTheLiveChecksWarnsAboutReplicationAndWritesOnlyToTheProbeTopic()
            throws Exception {
        Result result = CoordinationCliTest.cli(args("doctor", "--allow-unsafe", "--roles", "2"));
        System.out.print("CoordinationCliIT doctor:\n" + result.out());
        assertThat(result.exitCode()).as(result.err() + result.out()).isEqualTo(CoordinationCli.EXIT_WARN);
        String clusterId = cluster.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS);
        assertThat(result.out())
                .startsWith("Cluster " + clusterId + " at " + cluster.bootstrapServers()
                        + ", coordination topic " + TOPIC.name() + "\nWrote to probe topic " + TOPIC.name()
                        + "-probe as transactional id "
                        + TOPIC.name() + "-probe-");
        assertThat(line(result.out(), "live-fence ")).contains("PASS", "was refused with ProducerFencedException");
        assertThat(line(result.out(), "aborted-read ")).contains("PASS");
        assertThat(line(result.out(), "WARN topic.replication-factor: ")).contains("Fix: re-create the topic");
        assertThat(line(result.out(), "WARN (")).contains("0 failed");
        // The members' topic holds what it held: the doctor wrote to its own topic only.
        Result list = CoordinationCliTest.cli(args("list"));
        assertThat(list.exitCode()).isZero();
        assertThat(line(list.out(), "controller")).contains("n0");
    }

    @Test
    void doctorAsJsonFailsOnReplicationOneWithoutAllowUnsafeAndExits5() throws Exception {
        Result result = CoordinationCliTest.cli(args("doctor", "--read-only", "--output", "json"));
        assertThat(result.exitCode()).as(result.err() + result.out()).isEqualTo(CoordinationCli.EXIT_FAIL);
        JsonNode document = JSON.readTree(result.out());
        assertThat(document.get("clusterId").asText())
                .isEqualTo(cluster.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS));
        assertThat(document.get("status").asText()).isEqualTo("FAIL");
        assertThat(document.get("readOnly").asBoolean()).isTrue();
        assertThat(document.get("probeTopic").isNull()).isTrue();
        JsonNode replication = null;
        for (JsonNode check : document.get("checks")) {
            if (check.get("name").asText().equals("topic.replication-factor")) {
                replication = check;
            }
            if (check.get("name").asText().equals("live-fence")) {
                assertThat(check.get("status").asText()).isEqualTo("SKIPPED");
            }
        }
        assertThat(replication).isNotNull();
        assertThat(replication.get("status").asText()).isEqualTo("FAIL");
        assertThat(replication.get("finding").asText()).isEqualTo(TOPIC.name() + ": replication factor 1");
        assertThat(replication.get("fix").asText()).contains("replication factor 3");
    }
}
