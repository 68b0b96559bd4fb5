package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCluster.LostCommit;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * A commit whose answer is lost until the lease deadline (the in-memory cluster's
 * {@link InMemoryCluster#loseNextCommit}): the library resolves it where the log or the
 * coordinator can tell, and otherwise says the outcome is unknown. A
 * {@link FencedException} always means nothing of the write was written.
 */
class CommitOutcomeTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final String COMMANDS = "commands";
    private static final TopicPartition COMMANDS_0 = new TopicPartition(COMMANDS, 0);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final Role role = Role.of("controller");

    private CoordinationClient client() {
        return new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, clock);
    }

    private static ProducerRecord<byte[], byte[]> command(String text) {
        return new ProducerRecord<>(COMMANDS, 0, null, text.getBytes(StandardCharsets.UTF_8));
    }

    private List<String> committedCommands() {
        return cluster.records(COMMANDS_0).stream()
                .map(RawRecord::value)
                .map(value -> new String(value, StandardCharsets.UTF_8))
                .toList();
    }

    @Test
    void aWriteThatCommittedThoughItsAnswerWasLostReturnsAndIsWrittenOnce() throws Exception {
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        cluster.loseNextCommit(role, LostCommit.APPLIED);

        List<RecordMetadata> written = held.write(List.of(command("x")));

        assertThat(committedCommands()).containsExactly("x");
        // The producer never got the answer, so the offset is not known; the partition was named.
        assertThat(written).singleElement().satisfies(metadata -> {
            assertThat(metadata.hasOffset()).isFalse();
            assertThat(metadata.partition()).isZero();
        });
        // Its producer cannot go on; nothing says another member holds the role.
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        assertThatThrownBy(() -> held.write(command("y")))
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.FAILED));
        assertThat(committedCommands()).containsExactly("x");
    }

    /** Under transaction version 2, CompleteCommit at the epoch after the transaction's is that commit: no read needed. */
    @Test
    void aWriteTheCoordinatorReportsCommittedReturnsWhenThePartitionCannotBeRead() throws Exception {
        AtomicBoolean readsFail = new AtomicBoolean();
        CoordinationTransport memory = cluster.transport(TOPIC);
        CoordinationTransport transport = proxy(CoordinationTransport.class, (method, args) -> {
            if (method.getName().equals("read") && readsFail.get()) {
                throw new CoordinationTimeoutException("injected: the role's partition did not answer");
            }
            return call(memory, method, args);
        });
        Leadership held = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock)
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        held.renew();
        cluster.loseNextCommit(role, LostCommit.APPLIED);
        readsFail.set(true);

        List<RecordMetadata> written = held.write(List.of(command("x")));

        assertThat(written)
                .singleElement()
                .satisfies(metadata -> assertThat(metadata.hasOffset()).isFalse());
        assertThat(committedCommands()).containsExactly("x");
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
    }

    /**
     * Issue 36, finding 1, on version 2: another role's transaction left open on the
     * partition holds the read back before the lease, and the coordinator shows this
     * transaction's own commit (CompleteCommit at the epoch after it ran). The write
     * committed: it returns, never "nothing of it was written".
     */
    @Test
    void aCommittedWriteWhoseLeaseIsHeldBackBehindAnOpenTransactionReturns() throws Exception {
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        InMemoryCluster.Fault openTransaction = cluster.holdVisibility(rolePartition());
        try {
            cluster.loseNextCommit(role, LostCommit.APPLIED);

            List<RecordMetadata> written = held.write(List.of(command("x")));

            assertThat(written).hasSize(1);
            assertThat(committedCommands()).containsExactly("x");
            assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        } finally {
            openTransaction.close();
        }
    }

    /**
     * Issue 36, finding 1, on version 1: the commit landed, a challenger's InitProducerId
     * followed it (Empty at the next epoch, which a commit under version 1 never leaves),
     * and the read is held back. Nothing tells the outcome: unknown, never fenced.
     */
    @Test
    void aCommittedWriteFollowedByAChallengerWhileTheReadIsHeldBackIsUnknownNotFenced() throws Exception {
        cluster.setTransactionVersion((short) 1);
        CoordinationTransport memory = cluster.transport(TOPIC);
        CoordinationTransport challenger = cluster.transport(TOPIC);
        AtomicBoolean challengeAtNextDescribe = new AtomicBoolean();
        CoordinationTransport transport = proxy(CoordinationTransport.class, (method, args) -> {
            if (method.getName().equals("describeEpoch") && challengeAtNextDescribe.getAndSet(false)) {
                // The challenger's InitProducerId lands after the lost commit, before the holder looks.
                challenger.initEpoch(role);
            }
            return call(memory, method, args);
        });
        Leadership held = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock)
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        held.renew();
        InMemoryCluster.Fault openTransaction = cluster.holdVisibility(rolePartition());
        try {
            cluster.loseNextCommit(role, LostCommit.APPLIED);
            challengeAtNextDescribe.set(true);

            assertThatThrownBy(() -> held.write(command("x")))
                    .isInstanceOf(CommitOutcomeUnknownException.class)
                    .isNotInstanceOf(FencedException.class)
                    .hasMessageContaining("Empty");
            assertThat(challengeAtNextDescribe).as("the challenger ran").isFalse();
            assertThat(committedCommands()).containsExactly("x");
        } finally {
            openTransaction.close();
        }
    }

    private TopicPartition rolePartition() {
        return new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions()));
    }

    @Test
    void aWriteTheCoordinatorAbortedIsFencedWithNothingWritten() throws Exception {
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        cluster.loseNextCommit(role, LostCommit.ABORTED);

        assertThatThrownBy(() -> held.write(command("x"))).isInstanceOfSatisfying(FencedException.class, fenced -> {
            assertThat(fenced.endCause()).isEqualTo(LeadershipEndCause.FAILED);
            assertThat(fenced).hasMessageContaining("aborted").hasMessageContaining("nothing of it was written");
        });
        assertThat(committedCommands()).isEmpty();
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
    }

    @Test
    void aWriteNeitherTheCoordinatorNorTheLogDecideIsOfUnknownOutcomeNotFenced() throws Exception {
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        cluster.loseNextCommit(role, LostCommit.PENDING);

        assertThatThrownBy(() -> held.write(command("x")))
                .isInstanceOf(CommitOutcomeUnknownException.class)
                .isNotInstanceOf(FencedException.class)
                .hasMessageContaining("Ongoing");
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        assertThatThrownBy(() -> held.write(command("y"))).isInstanceOf(FencedException.class);
        assertThat(committedCommands()).isEmpty();
    }

    @Test
    void aRenewalOfUnknownOutcomeEndsTheLeadershipAsFailedNotFenced() throws Exception {
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        cluster.loseNextCommit(role, LostCommit.PENDING);

        assertThatThrownBy(held::renew).isInstanceOf(CommitOutcomeUnknownException.class);
        assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
    }

    /**
     * A grant whose commit landed is a grant, reported as one with its lease record's
     * offset as the term, and then as FAILED (its producer cannot go on), never FENCED;
     * the next grant's term is larger.
     */
    @Test
    void aGrantThatCommittedThoughItsAnswerWasLostIsAGrantWithItsLeasesOffsetAsTheTerm() throws Exception {
        List<Long> grantedTerms = new CopyOnWriteArrayList<>();
        List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(100));
        InMemoryCluster live = new InMemoryCluster();
        live.loseNextCommit(role, LostCommit.APPLIED);
        try (CoordinationClient client = new CoordinationClient(live.transport(TOPIC), lease, InstantSource.system());
                Contender contender = new Contender(client, role, MemberId.of("a"), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        grantedTerms.add(leadership.term());
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add(cause);
                    }
                })) {
            contender.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> grantedTerms.size() >= 2 && !ends.isEmpty());
            List<RawRecord> leases = live
                    .records(new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions())))
                    .stream()
                    .filter(this::isLease)
                    .toList();
            assertThat(grantedTerms.get(0)).isEqualTo(leases.get(0).offset());
            assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.FAILED);
            assertThat(ends).doesNotContain(LeadershipEndCause.FENCED);
            assertThat(grantedTerms.get(1)).isGreaterThan(grantedTerms.get(0));
        }
    }

    /** A renewal of unknown outcome ends the contender's leadership as FAILED: nothing says another member took the role. */
    @Test
    void aContendersRenewalOfUnknownOutcomeEndsItsLeadershipAsFailedNotFenced() throws Exception {
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();
        List<Leadership> grants = new CopyOnWriteArrayList<>();
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(100));
        InMemoryCluster live = new InMemoryCluster();
        try (CoordinationClient client = new CoordinationClient(live.transport(TOPIC), lease, InstantSource.system());
                Contender contender = new Contender(client, role, MemberId.of("a"), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        grants.add(leadership);
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add(cause);
                        failures.add(failure);
                    }
                })) {
            contender.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> !grants.isEmpty());
            live.loseNextCommit(role, LostCommit.PENDING);
            await().atMost(Duration.ofSeconds(30)).until(() -> !ends.isEmpty());
            assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.FAILED);
            assertThat(grants.get(0).state()).isEqualTo(Leadership.State.FAILED);
            assertThat(failures.get(0)).isInstanceOf(CommitOutcomeUnknownException.class);
        }
    }

    @Test
    void aGrantTheCoordinatorAbortedIsNoGrantAndTheNextChallengeWins() throws Exception {
        CoordinationClient client = client();
        cluster.loseNextCommit(role, LostCommit.ABORTED);

        Leadership held = client.acquire(role, MemberId.of("a"), Duration.ofSeconds(5));

        assertThat(held.isActive()).isTrue();
        List<RawRecord> leases = cluster
                .records(new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions())))
                .stream()
                .filter(this::isLease)
                .toList();
        assertThat(leases.get(0).offset()).isEqualTo(held.term());
    }

    private boolean isLease(RawRecord record) {
        CoordinationKey key = CoordinationCodec.decodeKey(record.key());
        return record.value() != null
                && key.equals(CoordinationKey.lease(role))
                && CoordinationCodec.decodeValue(key.kind(), record.value()).orElse(null)
                        instanceof CoordinationRecord.Lease;
    }
}
