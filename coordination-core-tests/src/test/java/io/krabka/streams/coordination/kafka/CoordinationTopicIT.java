package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The coordination topic is created safe, an unsafe one is refused by name, and a dead cluster times out cleanly. */
class CoordinationTopicIT {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    private static String freshTopic() {
        return "coordination-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static void createTopic(String name, int replicas, Map<String, String> configs) throws Exception {
        cluster.admin()
                .createTopics(List.of(new NewTopic(name, 1, (short) replicas).configs(configs)))
                .all()
                .get(20, TimeUnit.SECONDS);
    }

    private static int partitionCount(TopicSpec spec) {
        try (KafkaCoordinationTransport transport = cluster.transport(spec)) {
            return transport.partitionCount();
        }
    }

    @Test
    void missingTopicIsCreatedCompactedWithoutUncleanElectionAndWithCreateTime() throws Exception {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName(freshTopic())
                .withReplicationFactor(1)
                .withPartitions(4);
        assertThat(partitionCount(spec)).isEqualTo(4);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        Config config = cluster.admin()
                .describeConfigs(List.of(resource))
                .values()
                .get(resource)
                .get(20, TimeUnit.SECONDS);
        assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        assertThat(config.get("unclean.leader.election.enable").value()).isEqualTo("false");
        assertThat(config.get("message.timestamp.type").value()).isEqualTo("CreateTime");
        assertThat(config.get("min.insync.replicas").value()).isEqualTo("1");
    }

    @Test
    void minInsyncReplicasIsTwoFromThreeReplicasOn() {
        assertThat(TopicSpec.DEFAULTS.requiredMinInsyncReplicas()).isEqualTo(2);
        assertThat(TopicSpec.DEFAULTS.withReplicationFactor(1).requiredMinInsyncReplicas())
                .isEqualTo(1);
    }

    @Test
    void topicWithADeletePolicyIsRefusedNamingTheSetting() throws Exception {
        String name = freshTopic();
        createTopic(name, 1, Map.of("cleanup.policy", "delete"));
        assertThatThrownBy(
                        () -> partitionCount(TopicSpec.DEFAULTS.withName(name).withReplicationFactor(1)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("cleanup.policy=delete (must be compact)")
                .hasMessageContaining("kafka-topics.sh --delete --topic " + name);
    }

    /** As a broker creates it on first use, on a development cluster that allows an unsafe topic. */
    @Test
    void aTopicABrokerCreatedWithItsDefaultsIsRefusedSayingToDeleteIt() throws Exception {
        String name = freshTopic();
        createTopic(name, 1, Map.of());
        assertThatThrownBy(() -> partitionCount(TopicSpec.DEFAULTS
                        .withName(name)
                        .withReplicationFactor(1)
                        .withPartitions(3)
                        .withAllowUnsafe(true)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("has 1 partitions, but this member is configured for 3")
                .hasMessageContaining("auto.create.topics.enable=true")
                .hasMessageContaining("kafka-topics.sh --delete --topic " + name)
                .hasMessageNotContaining("set it to 1");
    }

    @Test
    void topicWithUncleanElectionIsRefusedNamingTheSetting() throws Exception {
        String name = freshTopic();
        createTopic(name, 1, Map.of("cleanup.policy", "compact", "unclean.leader.election.enable", "true"));
        assertThatThrownBy(
                        () -> partitionCount(TopicSpec.DEFAULTS.withName(name).withReplicationFactor(1)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("unclean.leader.election.enable=true (must be false)");
    }

    @Test
    void topicWithTooFewReplicasIsRefusedUnlessUnsafeTopicsAreAllowed() throws Exception {
        String name = freshTopic();
        createTopic(name, 1, Map.of("cleanup.policy", "compact", "unclean.leader.election.enable", "false"));
        TopicSpec wantsThree = TopicSpec.DEFAULTS.withName(name).withPartitions(1);
        assertThatThrownBy(() -> partitionCount(wantsThree))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("replication factor 1 (must be at least 3)");
        assertThat(partitionCount(wantsThree.withAllowUnsafe(true))).isEqualTo(1);
    }

    /** One broker and replication 3: a setting to fix, named, not a cluster that "does not answer". */
    @Test
    void aReplicationFactorAboveTheBrokerCountIsRefusedNamingTheProperty() {
        assertThatThrownBy(() ->
                        partitionCount(TopicSpec.DEFAULTS.withName(freshTopic()).withPartitions(1)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("with replication factor 3")
                .hasMessageContaining("krabka.coordination.topic.replication-factor");
    }

    @Test
    void missingTopicIsRefusedWhenCreationIsDisabled() {
        assertThatThrownBy(() ->
                        partitionCount(TopicSpec.DEFAULTS.withName(freshTopic()).withCreate(false)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("does not exist and creating it is disabled");
    }

    @Test
    void unreachableClusterGivesATimeoutThatSaysSoAndLeavesNoThreadsBehind() throws Exception {
        int deadPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            deadPort = socket.getLocalPort();
        }
        String clientId = "unreachable-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Object> connection = Map.of(
                CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + deadPort,
                CommonClientConfigs.CLIENT_ID_CONFIG,
                clientId);
        KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                connection, TopicSpec.DEFAULTS.withReplicationFactor(1), Duration.ofSeconds(2), Duration.ofSeconds(10));
        try (CoordinationClient client = new CoordinationClient(transport)) {
            assertThatThrownBy(() -> client.tryAcquire(Role.of("unreachable"), MemberId.of("a")))
                    .isInstanceOf(CoordinationTimeoutException.class)
                    .hasMessageContaining("got no answer from the cluster in time");
        } finally {
            transport.close();
        }
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                        .noneMatch(thread -> thread.getName().contains(clientId)));
    }

    @Test
    void aTopicWhosePartitionCountDiffersFromTheConfiguredOneIsRefusedNamingBoth() throws Exception {
        String name = freshTopic();
        createTopic(name, 1, Map.of("cleanup.policy", "compact"));
        assertThatThrownBy(() -> partitionCount(TopicSpec.DEFAULTS
                        .withName(name)
                        .withReplicationFactor(1)
                        .withPartitions(3)))
                .isInstanceOf(TopicConfigurationException.class)
                .hasMessageContaining("has 1 partitions, but this member is configured for 3")
                .hasMessageContaining("krabka.coordination.topic.partitions");
        // allow-unsafe waives durability checks, not the topic's identity.
        assertThatThrownBy(() -> partitionCount(TopicSpec.DEFAULTS
                        .withName(name)
                        .withReplicationFactor(1)
                        .withPartitions(3)
                        .withAllowUnsafe(true)))
                .isInstanceOf(TopicConfigurationException.class);
    }

    /**
     * A topic that changes under running members (partitions added, or deleted and created
     * again) would move roles to other partitions and restart terms: the holder ends its
     * leadership without writing, the standby never challenges, and both say why.
     */
    @Test
    void whenTheTopicChangesUnderRunningMembersNobodyChallengesAndEverybodySaysWhy() throws Exception {
        for (String change : List.of("alter", "recreate", "autocreate")) {
            TopicSpec spec = TopicSpec.DEFAULTS
                    .withName(freshTopic())
                    .withReplicationFactor(1)
                    .withPartitions(2);
            Role role = Role.of("pinned-" + change);
            List<String> grants = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Throwable> ends = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (KafkaCoordinationTransport ta = cluster.transport(spec);
                    KafkaCoordinationTransport tb = cluster.transport(spec);
                    CoordinationClient a = new CoordinationClient(ta);
                    CoordinationClient b = new CoordinationClient(tb);
                    Contender holder = new Contender(a, role, MemberId.of("a"), recording(grants, ends));
                    Contender standby = new Contender(b, role, MemberId.of("b"), recording(grants, ends))) {
                holder.start();
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> holder.leadership().isPresent());
                standby.start();
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> b.observe(role, Duration.ZERO).roster().size() == 2);
                if (change.equals("alter")) {
                    cluster.admin()
                            .createPartitions(Map.of(spec.name(), NewPartitions.increaseTo(5)))
                            .all()
                            .get(20, TimeUnit.SECONDS);
                } else if (change.equals("recreate")) {
                    cluster.admin().deleteTopics(List.of(spec.name())).all().get(20, TimeUnit.SECONDS);
                    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                        cluster.admin()
                                .createTopics(List.of(new NewTopic(spec.name(), 2, (short) 1)
                                        .configs(Map.of("cleanup.policy", "compact"))))
                                .all()
                                .get(20, TimeUnit.SECONDS);
                        return true;
                    });
                } else {
                    // As after a development broker lost its data: some producer's send makes
                    // the broker create the topic again, with its defaults.
                    cluster.admin().deleteTopics(List.of(spec.name())).all().get(20, TimeUnit.SECONDS);
                    try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(
                            KafkaCoordinationTransport.registrarSettings(
                                    cluster.connection(), Duration.ofSeconds(20)))) {
                        await().atMost(Duration.ofSeconds(30))
                                .ignoreExceptions()
                                .until(() -> {
                                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                                                    spec.name(), new byte[1], new byte[1]))
                                            .get(10, TimeUnit.SECONDS);
                                    return true;
                                });
                    }
                }
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> holder.problem().orElse(null) instanceof TopicConfigurationException
                                && standby.problem().orElse(null) instanceof TopicConfigurationException
                                && holder.leadership().isEmpty()
                                && !ends.isEmpty());
                assertThat(ends).hasSize(1);
                if (change.equals("autocreate")) {
                    // Its renewal may have waited on a partition the new topic does not have, and
                    // expired first; either way it ended, and says why it does not contend again.
                    assertThat(holder.problem().orElseThrow().getMessage()).contains("deleted");
                } else {
                    assertThat(ends.get(0)).isInstanceOf(TopicConfigurationException.class);
                    assertThat(ends.get(0).getMessage())
                            .contains(change.equals("alter") ? "partition count from 2 to 5" : "deleted");
                }
                assertThat(standby.problem().orElseThrow().getMessage())
                        .contains(change.equals("alter") ? "partition count" : "deleted");
                assertThat(grants).as("nobody challenged after the change").containsExactly("a");
            }
        }
    }

    /**
     * An operator alters a setting the guarantees rest on while members run: each member
     * names the setting (health: misconfigured) and goes on, since the brokers still fence
     * every deposed writer; restoring it clears the problem.
     */
    @Test
    @Tag("long") // two safety-check intervals (15 s each) of waiting, about 45 s: -Plong
    void aTopicAlteredToBreakTheGuaranteesWhileMembersRunIsNamedAndNobodyLosesTheRole() throws Exception {
        TopicSpec spec = TopicSpec.DEFAULTS
                .withName(freshTopic())
                .withReplicationFactor(1)
                .withPartitions(2);
        Role role = Role.of("altered-settings");
        List<String> grants = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Throwable> ends = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (KafkaCoordinationTransport ta = cluster.transport(spec);
                KafkaCoordinationTransport tb = cluster.transport(spec);
                CoordinationClient a = new CoordinationClient(ta);
                CoordinationClient b = new CoordinationClient(tb);
                Contender holder = new Contender(a, role, MemberId.of("a"), recording(grants, ends));
                Contender standby = new Contender(b, role, MemberId.of("b"), recording(grants, ends))) {
            holder.start();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> holder.leadership().isPresent());
            standby.start();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> b.observe(role, Duration.ZERO).roster().size() == 2);
            long term = holder.leadership().orElseThrow().term();

            alter(spec, Map.of("cleanup.policy", "delete", "unclean.leader.election.enable", "true"));
            Duration within = PinnedTopic.SAFETY_CHECK_INTERVAL.multipliedBy(4);
            await().atMost(within)
                    .until(() -> holder.problem().orElse(null) instanceof TopicConfigurationException
                            && standby.problem().orElse(null) instanceof TopicConfigurationException);
            assertThat(standby.problem().orElseThrow().getMessage())
                    .contains(spec.name(), "cleanup.policy=delete", "unclean.leader.election.enable=true");
            assertThat(holder.leadership())
                    .as("the holder keeps its role")
                    .hasValueSatisfying(held -> assertThat(held.term()).isEqualTo(term));

            alter(spec, Map.of("cleanup.policy", "compact", "unclean.leader.election.enable", "false"));
            await().atMost(within)
                    .until(() -> holder.problem().isEmpty() && standby.problem().isEmpty());
            assertThat(grants).as("nobody challenged").containsExactly("a");
            assertThat(ends).isEmpty();
        }
    }

    /**
     * Members of one role on another coordination topic: a member of this topic that finds
     * the role's epoch moved by a writer it never sees can name where that writer writes.
     */
    @Test
    void theOtherCoordinationTopicOfARoleIsFoundFromTheProducerThatMovesItsEpoch() throws Exception {
        TopicSpec here = TopicSpec.DEFAULTS
                .withName(freshTopic())
                .withReplicationFactor(1)
                .withPartitions(2);
        TopicSpec there = TopicSpec.DEFAULTS
                .withName(freshTopic())
                .withReplicationFactor(1)
                .withPartitions(3);
        Role role = Role.of("two-topics");
        try (KafkaCoordinationTransport ours = cluster.transport(here);
                KafkaCoordinationTransport theirs = cluster.transport(there);
                CoordinationClient elsewhere = new CoordinationClient(theirs)) {
            Leadership held = elsewhere.acquire(role, MemberId.of("elsewhere"), Duration.ofSeconds(30));
            long producerId = ours.describeEpoch(role).orElseThrow().producerId();
            assertThat(producerId).isEqualTo(held.token().producerId());

            assertThat(ours.otherTopicWrittenBy(role, producerId)).contains(there.name());
            assertThat(ours.otherTopicWrittenBy(role, producerId + 1_000_000)).isEmpty();
        }
    }

    private static void alter(TopicSpec spec, Map<String, String> settings) throws Exception {
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        List<org.apache.kafka.clients.admin.AlterConfigOp> ops = settings.entrySet().stream()
                .map(e -> new org.apache.kafka.clients.admin.AlterConfigOp(
                        new org.apache.kafka.clients.admin.ConfigEntry(e.getKey(), e.getValue()),
                        org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))
                .toList();
        cluster.admin().incrementalAlterConfigs(Map.of(topic, ops)).all().get(20, TimeUnit.SECONDS);
    }

    private static Contender.Listener recording(List<String> grants, List<Throwable> ends) {
        return recording(grants, ends, new java.util.concurrent.CopyOnWriteArrayList<>());
    }

    /** A listener that adds each granted member to {@code grants}, and each end's failure and cause to {@code ends} and {@code causes}. */
    static Contender.Listener recording(List<String> grants, List<Throwable> ends, List<LeadershipEndCause> causes) {
        return new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                grants.add(leadership.member().value());
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                causes.add(cause);
                ends.add(failure);
            }
        };
    }
}
