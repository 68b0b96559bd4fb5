package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Grant order on Kafka 4.x facts that break producer-id-first ordering: a real
 * producer-id regression (the role's coordinator moves to a broker with a lower id
 * block and the transactional id expires) and a real epoch rollover (~32 767
 * transactions under transaction version 2).
 */
class TokenOrderIT {

    private static final TopicPartition TRANSACTION_LOG = new TopicPartition("__transaction_state", 0);
    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start(
                2,
                Map.of(
                        "transactional.id.expiration.ms", "4000",
                        "transaction.remove.expired.transaction.cleanup.interval.ms", "500"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aGrantWithALowerProducerIdStillSupersedesEveryEarlierToken() throws Exception {
        // Each broker hands out producer ids from its own block. Find out, rather than
        // assume, which broker's block is the higher one: init one id with the
        // transaction log on each broker and compare.
        // (The first InitProducerId also creates the transaction log.)
        long idOnA = initProbe("probe-a");
        int brokerA = leaderOfTransactionLog();
        int brokerB = brokerA == 0 ? 1 : 0;
        moveTransactionLogTo(brokerB);
        long idOnB = initProbe("probe-b");
        int high = idOnB > idOnA ? brokerB : brokerA;
        int low = high == brokerA ? brokerB : brokerA;
        Role role = Role.of("regression");
        ManualClock clock = new ManualClock();

        // Grant 1 with the coordinator on the other broker: it allocates the next block.
        moveTransactionLogTo(high);
        Leadership first;
        try (KafkaCoordinationTransport transport = cluster.transport(TOPIC);
                CoordinationClient a = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock)) {
            first = a.tryAcquire(role, MemberId.of("a")).orElseThrow();
            first.close();
        }
        assertThat(first.token().producerId()).isGreaterThan(Math.min(idOnA, idOnB));
        await().atMost(Duration.ofSeconds(30)).until(() -> !transactionalIdKnown(role));

        // Grant 2 with the coordinator back on the first broker: a lower producer id.
        moveTransactionLogTo(low);
        try (KafkaCoordinationTransport transport = cluster.transport(TOPIC);
                CoordinationClient b = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock)) {
            Leadership second = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(30));
            assertThat(second.token().producerId()).isLessThan(first.token().producerId());
            assertThat(second.token().supersedes(first.token())).isTrue();
            assertThat(first.token().supersedes(second.token())).isFalse();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(b.describe(role).current())
                            .as("%s", b.describe(role))
                            .isTrue());
            assertThat(b.describe(role).token()).isEqualTo(second.token());
        }
    }

    @Test
    @Tag("long") // about 32 767 transactions: -Plong
    void anEpochRolloverKeepsTheTermAndAChallengerAfterItStillSupersedes() {
        cluster.setTransactionVersion((short) 2);
        Role role = Role.of("rollover");
        ManualClock clock = new ManualClock();
        try (KafkaCoordinationTransport ta = cluster.transport(TOPIC);
                KafkaCoordinationTransport tb = cluster.transport(TOPIC);
                CoordinationClient a = new CoordinationClient(ta, LeaseConfig.DEFAULTS, clock);
                CoordinationClient b = new CoordinationClient(tb, LeaseConfig.DEFAULTS, clock)) {
            Leadership held = a.tryAcquire(role, MemberId.of("a")).orElseThrow();
            assertThat(b.tryAcquire(role, MemberId.of("b"))).isEmpty();
            long term = held.term();
            long firstProducerId = held.token().producerId();
            int writes = 0;
            while (held.token().producerId() == firstProducerId) {
                held.renew();
                writes++;
                assertThat(writes).as("renewals before the rollover").isLessThan(Short.MAX_VALUE + 100);
            }
            System.out.printf("rollover after %d transactions: %s%n", writes, held.token());
            // The new producer id starts again near epoch 0. Near the rollover a renewal carries no
            // prediction, so it writes up to three confirming leases after its own (LeaseWriter), and
            // a new producer's first transactions may leave its step untrusted: epoch 3 at most.
            assertThat(held.token().producerEpoch()).isLessThanOrEqualTo((short) 3);
            assertThat(held.term()).isEqualTo(term);
            held.renew();
            held.renew();
            await().atMost(Duration.ofSeconds(10)).until(() -> b.describe(role).current());

            clock.advance(LeaseConfig.DEFAULTS.duration().plusSeconds(1));
            Leadership taken = b.tryAcquire(role, MemberId.of("b")).orElseThrow();
            assertThat(taken.token().supersedes(held.token())).isTrue();
            // The grant's lease is read once its commit markers are written, after tryAcquire returned.
            cluster.awaitDecided(
                    new TopicPartition(tb.topic(), RolePartitioner.partitionFor(role, tb.partitionCount())));
            assertThat(b.describe(role).holder()).contains(MemberId.of("b"));
        }
    }

    private static KafkaProducer<byte[], byte[]> transactionalProducer(String id) {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                id,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class));
    }

    /** Runs InitProducerId for a fresh transactional id and returns the producer id it got. */
    private static long initProbe(String transactionalId) throws Exception {
        try (KafkaProducer<byte[], byte[]> probe = transactionalProducer(transactionalId)) {
            probe.initTransactions();
        }
        return cluster.admin()
                .describeTransactions(List.of(transactionalId))
                .description(transactionalId)
                .get(10, TimeUnit.SECONDS)
                .producerId();
    }

    private static int leaderOfTransactionLog() throws Exception {
        return cluster.admin()
                .describeTopics(List.of(TRANSACTION_LOG.topic()))
                .allTopicNames()
                .get(20, TimeUnit.SECONDS)
                .get(TRANSACTION_LOG.topic())
                .partitions()
                .get(0)
                .leader()
                .id();
    }

    private static void moveTransactionLogTo(int broker) throws Exception {
        if (leaderOfTransactionLog() == broker) {
            return;
        }
        cluster.admin()
                .alterPartitionReassignments(
                        Map.of(TRANSACTION_LOG, Optional.of(new NewPartitionReassignment(List.of(broker)))))
                .all()
                .get(20, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> leaderOfTransactionLog() == broker
                        && cluster.admin()
                                .listPartitionReassignments()
                                .reassignments()
                                .get(20, TimeUnit.SECONDS)
                                .isEmpty());
    }

    private static boolean transactionalIdKnown(Role role) throws Exception {
        try {
            cluster.admin()
                    .describeTransactions(List.of(role.name()))
                    .description(role.name())
                    .get(10, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TransactionalIdNotFoundException) {
                return false;
            }
            throw e;
        }
    }
}
