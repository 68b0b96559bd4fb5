package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The cluster a member pinned its topic on is part of what it pinned: two real in-process
 * clusters, and an admin whose requests go to one or the other, as through an address
 * that a disaster-recovery switch points elsewhere. Kafka's clients follow such a switch
 * without a word (ClusterSwitchIT, -Plong, shows it with a member's own clients); the
 * member must notice it, name both cluster ids, and refuse from then on.
 *
 * <p>A {@link Proxy} of {@link Admin} switches, where {@code ForwardingAdmin} cannot: its
 * delegate is fixed when it is built. Every call still reaches a real broker.
 */
class PinnedClusterIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static KafkaTestCluster a;
    private static KafkaTestCluster b;
    private static String idA;
    private static String idB;

    @BeforeAll
    static void startClusters() throws Exception {
        a = KafkaTestCluster.start();
        b = KafkaTestCluster.start();
        idA = a.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS);
        idB = b.admin().describeCluster().clusterId().get(10, TimeUnit.SECONDS);
        assertThat(idA).isNotEqualTo(idB);
    }

    @AfterAll
    static void stopClusters() {
        a.close();
        b.close();
    }

    /** An admin that asks whichever cluster {@code current} names; closing it leaves both admins open. */
    private static Admin switching(AtomicReference<KafkaTestCluster> current) {
        return switching(current, () -> {});
    }

    /** As {@link #switching(AtomicReference)}, running {@code onCall} first on every call. */
    private static Admin switching(AtomicReference<KafkaTestCluster> current, Runnable onCall) {
        return (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    onCall.run();
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(current.get().admin(), args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static TopicSpec freshTopic() {
        return TopicSpec.DEFAULTS
                .withName("pinned-" + UUID.randomUUID().toString().substring(0, 8))
                .withReplicationFactor(1)
                .withPartitions(2);
    }

    private static void createCompacted(KafkaTestCluster cluster, TopicSpec spec) throws Exception {
        cluster.admin()
                .createTopics(List.of(new NewTopic(spec.name(), spec.partitions(), (short) 1)
                        .configs(Map.of("cleanup.policy", "compact"))))
                .all()
                .get(20, TimeUnit.SECONDS);
    }

    @Test
    void anotherClusterBehindTheAddressStopsTheMemberNamingBothClusterIdsAndForGood() throws Exception {
        TopicSpec spec = freshTopic();
        // The DR cluster has "the same" topic: same name, same partitions, another topic id.
        createCompacted(b, spec);
        AtomicReference<KafkaTestCluster> behindTheAddress = new AtomicReference<>(a);
        PinnedTopic pinned = new PinnedTopic(switching(behindTheAddress), spec, TIMEOUT, null);
        assertThat(pinned.partitionCount()).isEqualTo(2);
        pinned.checkIdentity(Duration.ZERO);

        behindTheAddress.set(b);
        assertThatThrownBy(() -> pinned.checkIdentity(Duration.ZERO))
                .isExactlyInstanceOf(CoordinationConfigurationException.class)
                .hasMessageContaining("now reaches another Kafka cluster")
                .hasMessageContaining("may already have created " + spec.name() + " there with the broker's defaults")
                .hasMessageContaining(
                        "cluster " + idA + " answered when it pinned the coordination topic " + spec.name())
                .hasMessageContaining("cluster " + idB + " answers now")
                .hasMessageContaining("tell the devices that terms restart")
                .hasMessageNotContaining("deleted");
        Throwable why = catchThrowable(() -> pinned.checkIdentity(Duration.ZERO));
        assertThat(catchThrowable(pinned::partitionCount)).isSameAs(why);

        // Switched back: still refused. Whatever ran on the other cluster meanwhile is unknown to this member.
        behindTheAddress.set(a);
        assertThat(catchThrowable(() -> pinned.checkIdentity(Duration.ZERO))).isSameAs(why);
        assertThat(catchThrowable(pinned::partitionCount)).isSameAs(why);
    }

    /** Not "deleted" (which a lagging broker could say once): another cluster id is certain, so the first check stops. */
    @Test
    void anotherClusterWithoutTheTopicIsNamedAtTheFirstCheckNotAsADeletedTopic() {
        TopicSpec spec = freshTopic();
        AtomicReference<KafkaTestCluster> behindTheAddress = new AtomicReference<>(a);
        PinnedTopic pinned = new PinnedTopic(switching(behindTheAddress), spec, TIMEOUT, null);
        pinned.partitionCount();

        behindTheAddress.set(b);
        assertThatThrownBy(() -> pinned.checkIdentity(Duration.ZERO))
                .isExactlyInstanceOf(CoordinationConfigurationException.class)
                .hasMessageContaining("cluster " + idB + " answers now")
                .hasMessageNotContaining("deleted");
    }

    /**
     * The transport's own clients still reach the old cluster here; only its admin was
     * switched. A transaction of the role that fails is looked at again and reported as the
     * change; from then on the role's epoch, a challenge, a describe and a registration all
     * refuse, and nothing more is written.
     */
    @Test
    void aRoleTransactionThatFailsAfterTheSwitchSaysWhyAndNothingIsWrittenAfterIt() throws Exception {
        TopicSpec spec = freshTopic();
        createCompacted(b, spec);
        Role role = Role.of("pinned-" + UUID.randomUUID().toString().substring(0, 8));
        AtomicReference<KafkaTestCluster> behindTheAddress = new AtomicReference<>(a);
        try (KafkaCoordinationTransport transport = new KafkaCoordinationTransport(
                switching(behindTheAddress),
                new KafkaProducer<>(KafkaCoordinationTransport.registrarSettings(a.connection(), TIMEOUT)),
                r -> new KafkaProducer<>(
                        KafkaCoordinationTransport.transactionalSettings(a.connection(), r, TIMEOUT, TIMEOUT)),
                new KafkaConsumer<>(KafkaCoordinationTransport.readerSettings(a.connection())),
                spec,
                TIMEOUT)) {
            TopicPartition partition =
                    new TopicPartition(spec.name(), RolePartitioner.partitionFor(role, transport.partitionCount()));
            RoleEpoch epoch = transport.initEpoch(role);
            epoch.transact(List.of(lease(spec, partition, role)));
            a.awaitDecided(partition); // the commit marker too
            long written = a.endOffset(partition, IsolationLevel.READ_UNCOMMITTED);

            behindTheAddress.set(b);
            // A send the producer refuses at once (over max.request.size): a failure whose own words say nothing of the
            // switch.
            ProducerRecord<byte[], byte[]> tooLarge =
                    new ProducerRecord<>(spec.name(), partition.partition(), new byte[1], new byte[2 * 1024 * 1024]);
            // A failure looks again once a second at most (many roles failing at once share a check).
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThatThrownBy(() -> epoch.transact(List.of(tooLarge)))
                            .isExactlyInstanceOf(CoordinationConfigurationException.class)
                            .hasMessageContaining("cluster " + idB + " answers now")
                            .satisfies(refused -> assertThat(refused.getCause())
                                    .isInstanceOf(CoordinationException.class)
                                    .hasMessageContaining("a transaction of role " + role + " failed")));

            assertThatThrownBy(() -> epoch.transact(List.of(lease(spec, partition, role))))
                    .isExactlyInstanceOf(CoordinationConfigurationException.class)
                    .hasMessageContaining(idB);
            assertThatThrownBy(() -> transport.initEpoch(Role.of("another-" + role.name())))
                    .isExactlyInstanceOf(CoordinationConfigurationException.class)
                    .hasMessageContaining(idB);
            assertThatThrownBy(() -> transport.describeEpoch(role))
                    .isExactlyInstanceOf(CoordinationConfigurationException.class)
                    .hasMessageContaining(idB);
            assertThatThrownBy(() -> transport.register(role, MemberId.of("m"), 0L))
                    .isExactlyInstanceOf(CoordinationConfigurationException.class)
                    .hasMessageContaining(idB);
            assertThat(a.endOffset(partition, IsolationLevel.READ_UNCOMMITTED))
                    .as("nothing written after the switch")
                    .isEqualTo(written);
            epoch.close();
        }
    }

    /**
     * A fence by a newer epoch of the role (another member's InitProducerId) ends the
     * leadership at once: the member does not first ask the cluster who it is. The admin is
     * switched to the other cluster, so an identity check in the failure's path would turn
     * the fence into a configuration error, and more than the second in which a failure's
     * re-check is skipped has passed since the admin last answered.
     */
    @Test
    void aFenceByANewerEpochIsThrownAtOnceWithoutLookingAtTheCluster() throws Exception {
        TopicSpec spec = freshTopic();
        Role role = Role.of("fenced-" + UUID.randomUUID().toString().substring(0, 8));
        AtomicReference<KafkaTestCluster> behindTheAddress = new AtomicReference<>(a);
        AtomicInteger adminCalls = new AtomicInteger();
        AtomicLong lastAdminCall = new AtomicLong(System.nanoTime());
        Admin counting = switching(behindTheAddress, () -> {
            adminCalls.incrementAndGet();
            lastAdminCall.set(System.nanoTime());
        });
        try (KafkaCoordinationTransport transport = new KafkaCoordinationTransport(
                        counting,
                        new KafkaProducer<>(KafkaCoordinationTransport.registrarSettings(a.connection(), TIMEOUT)),
                        r -> new KafkaProducer<>(
                                KafkaCoordinationTransport.transactionalSettings(a.connection(), r, TIMEOUT, TIMEOUT)),
                        new KafkaConsumer<>(KafkaCoordinationTransport.readerSettings(a.connection())),
                        spec,
                        TIMEOUT);
                RoleEpoch holder = transport.initEpoch(role);
                KafkaProducer<byte[], byte[]> challenger = new KafkaProducer<>(
                        KafkaCoordinationTransport.transactionalSettings(a.connection(), role, TIMEOUT, TIMEOUT))) {
            TopicPartition partition =
                    new TopicPartition(spec.name(), RolePartitioner.partitionFor(role, transport.partitionCount()));
            holder.transact(List.of(lease(spec, partition, role)));
            challenger.initTransactions();
            behindTheAddress.set(b);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> System.nanoTime() - lastAdminCall.get()
                            > Duration.ofMillis(1_100).toNanos());
            adminCalls.set(0);

            assertThat(catchThrowable(() -> holder.transact(List.of(lease(spec, partition, role)))))
                    .isExactlyInstanceOf(FencedException.class);
            assertThat(adminCalls)
                    .as("admin calls while the fenced epoch wrote")
                    .hasValue(0);
        }
    }

    /**
     * A producer id the coordinator never gave out (INVALID_PRODUCER_ID_MAPPING) is what
     * another cluster behind the address answers. An identity check that ran just before
     * the switch must not stand for one after it: the failure is looked at again at once,
     * not only once the second in which failures share a check has passed.
     */
    @Test
    void aProducerIdTheCoordinatorDoesNotKnowRightAfterACheckIsExplainedAsTheSwitch() {
        TopicSpec spec = freshTopic();
        AtomicReference<KafkaTestCluster> behindTheAddress = new AtomicReference<>(a);
        PinnedTopic pinned = new PinnedTopic(switching(behindTheAddress), spec, TIMEOUT, null);
        pinned.partitionCount();
        Role role = Role.of("unknown-pid");
        RoleEpoch answeredByTheOtherCluster = new RoleEpoch() {
            @Override
            public Role role() {
                return role;
            }

            @Override
            public List<RecordMetadata> transact(
                    List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
                throw KafkaErrors.translate(
                        "a transaction of role " + role,
                        new InvalidPidMappingException(
                                "The producer attempted to use a producer id which is not currently assigned to its transactional id."));
            }

            @Override
            public long featureGeneration() {
                return 0;
            }

            @Override
            public boolean usable() {
                return true;
            }

            @Override
            public void close() {}
        };

        pinned.checkIdentity(Duration.ZERO);
        behindTheAddress.set(b);
        assertThatThrownBy(() -> new PinnedEpoch(answeredByTheOtherCluster, pinned).transact(List.of()))
                .isExactlyInstanceOf(CoordinationConfigurationException.class)
                .hasMessageContaining("cluster " + idB + " answers now")
                .hasCauseInstanceOf(FencedException.class);
    }

    /** A topic deleted and created again on the same cluster is still reported as before, as a topic change. */
    @Test
    void aTopicCreatedAgainOnTheSameClusterIsStillATopicChange() throws Exception {
        TopicSpec spec = freshTopic();
        PinnedTopic pinned = new PinnedTopic(a.admin(), spec, TIMEOUT, null);
        pinned.partitionCount();
        a.admin().deleteTopics(List.of(spec.name())).all().get(20, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            createCompacted(a, spec);
            return true;
        });
        // A broker's metadata may still show the old topic, or none: "deleted" once two checks say so, else "created
        // again".
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThatThrownBy(() -> pinned.checkIdentity(Duration.ZERO))
                        .isInstanceOf(TopicConfigurationException.class)
                        .hasMessageContaining("the coordination topic " + spec.name() + " was deleted")
                        .hasMessageNotContaining("another Kafka cluster"));
    }

    private static ProducerRecord<byte[], byte[]> lease(TopicSpec spec, TopicPartition partition, Role role) {
        return new ProducerRecord<>(
                spec.name(), partition.partition(), CoordinationCodec.encodeKey(CoordinationKey.lease(role)), null);
    }
}
