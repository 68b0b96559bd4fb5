package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leadership on a real KRaft broker. Lease timing runs on a {@link ManualClock}, so
 * no test sleeps or races the wall clock; everything else (epochs, fencing, reads) is
 * the broker's. Subclasses run it on transaction version 2 and 1.
 */
public abstract class AbstractLeadershipIT {

    /** The coordinator looks for timed-out transactions every half second (default: 10 s). */
    public static final Map<String, String> BROKER_SETTINGS = KafkaTestCluster.SHARED_SETTINGS;

    private static final Duration PAUSED_TRANSACTION_TIMEOUT = Duration.ofSeconds(20);

    private final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final Role role = Role.of("role-" + UUID.randomUUID().toString().substring(0, 8));
    /** A coordination topic per test: the cluster may be shared with other tests, and one of these forges records. */
    private final TopicSpec topic = TopicSpec.DEFAULTS
            .withName("leadership-" + role.name())
            .withReplicationFactor(1)
            .withPartitions(3);

    protected abstract KafkaTestCluster cluster();

    /** The transaction version the subclass's cluster runs. */
    protected abstract short transactionVersion();

    @BeforeEach
    void createCommandTopic() throws Exception {
        // Created up front, as in a real deployment: a first send to a missing topic
        // would wait for auto-creation inside the transaction.
        cluster().createTopic(COMMANDS, 1);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : opened) {
            try {
                closeable.close();
            } catch (RuntimeException ignored) {
                // A test may have crashed this member on purpose.
            }
        }
    }

    /** One member: its own transport (so its own producers) and client. */
    final class Member {
        final MemberId id;
        final KafkaCoordinationTransport transport;
        final CoordinationClient client;

        Member(String id, LeaseConfig config, KafkaCoordinationTransport transport) {
            this.id = MemberId.of(id);
            this.transport = transport;
            this.client = new CoordinationClient(transport, config, clock);
            opened.add(transport);
        }

        Optional<Leadership> tryAcquire() {
            return client.tryAcquire(role, id);
        }

        /** Dies without a word: no release, no deregistration. */
        void crash() {
            transport.close();
        }
    }

    Member member(String id) {
        return member(id, LeaseConfig.DEFAULTS);
    }

    Member member(String id, LeaseConfig config) {
        return new Member(id, config, cluster().transport(topic));
    }

    @Test
    void standbyWaitsWhileTheHolderRenewsThenRankZeroWinsAfterTheDeadlineAndTheOldHolderIsFenced() throws Exception {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.client.acquire(role, a.id, Duration.ofSeconds(30));
        assertThat(b.tryAcquire()).isEmpty();
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofSeconds(10));
            assertThat(held.renewDue()).isTrue();
            held.renew();
            assertThat(b.tryAcquire())
                    .as("renewal %d keeps the standby waiting", i)
                    .isEmpty();
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> b.client.describe(role).current());

        clock.advance(LeaseConfig.DEFAULTS.duration());
        Leadership taken = b.tryAcquire().orElseThrow();
        assertThat(taken.token().supersedes(held.token())).isTrue();
        assertThatThrownBy(() -> held.write(command("stale"))).isInstanceOf(FencedException.class);
        assertThat(held.isActive()).isFalse();
        taken.write(command("fresh"));
        assertThat(a.client.describe(role).holder()).contains(b.id);
    }

    @Test
    void restartedHolderLandsAtTheTailAndDoesNotFailBack() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        a.crash();
        Member restarted = member("a");
        assertThat(restarted.tryAcquire()).isEmpty();

        clock.advance(LeaseConfig.DEFAULTS.duration());
        assertThat(restarted.tryAcquire())
                .as("the restarted member waits behind both standbys")
                .isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        Leadership taken = b.tryAcquire().orElseThrow();
        clock.advance(LeaseConfig.DEFAULTS.challengeStagger().multipliedBy(3));
        taken.renew();
        assertThat(restarted.tryAcquire()).isEmpty();
        // A registration appended behind the renewal's commit markers is read once they land.
        awaitDecided(b);
        assertThat(b.client.describe(role).roster())
                .extracting(m -> m.member().value())
                .endsWith("a");
    }

    @Test
    void whenRankZeroIsDeadTooRankOneWinsOneStaggerLater() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        a.crash();
        b.crash();

        clock.advance(LeaseConfig.DEFAULTS.duration());
        assertThat(c.tryAcquire()).as("at the deadline rank 1 still waits").isEmpty();
        clock.advance(LeaseConfig.DEFAULTS.challengeStagger().minusMillis(1));
        assertThat(c.tryAcquire()).isEmpty();
        clock.advance(Duration.ofMillis(1));
        assertThat(c.tryAcquire()).isPresent();
        // The winner removed a and b right after its grant transaction, behind its commit
        // markers: read once every transaction up to the tombstones is decided.
        awaitDecided(c);
        assertThat(c.client.describe(role).roster())
                .extracting(RankedMember::member)
                .containsExactly(c.id);
    }

    @Test
    void simultaneousChallengersLeaveExactlyOneMemberAbleToWrite() throws Exception {
        LeaseConfig noStagger = LeaseConfig.DEFAULTS.withChallengeStagger(Duration.ZERO);
        Member a = member("a", noStagger);
        List<Member> standbys = List.of(member("b", noStagger), member("c", noStagger), member("d", noStagger));
        a.tryAcquire().orElseThrow();
        for (Member standby : standbys) {
            assertThat(standby.tryAcquire()).isEmpty();
        }
        a.crash();
        clock.advance(LeaseConfig.DEFAULTS.duration());

        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Optional<Leadership>>> races = new ArrayList<>();
        for (Member standby : standbys) {
            races.add(CompletableFuture.supplyAsync(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return standby.tryAcquire();
            }));
        }
        start.countDown();
        List<Leadership> winners = new ArrayList<>();
        for (CompletableFuture<Optional<Leadership>> race : races) {
            race.get(60, TimeUnit.SECONDS).ifPresent(winners::add);
        }
        assertThat(winners).isNotEmpty();
        int ableToWrite = 0;
        for (Leadership winner : winners) {
            try {
                winner.write(command(winner.member().value()));
                ableToWrite++;
            } catch (FencedException fenced) {
                assertThat(winner.isActive()).isFalse();
            }
        }
        assertThat(ableToWrite).isEqualTo(1);
    }

    /**
     * Stopping role-scoped work interrupts its thread, possibly mid-write. Kafka cannot
     * abort a commit that an interrupt cut short, so a transport that let the interrupt
     * through would lose the producer and end the leadership FAILED. The write completes,
     * the interrupt is kept for the caller, and the leadership goes on.
     */
    @Test
    void guardedWritesCompleteWhileTheirThreadIsInterruptedAndKeepTheInterrupt() throws Exception {
        Member a = member("a");
        Leadership held = a.tryAcquire().orElseThrow();
        Thread.currentThread().interrupt();
        try {
            held.write(command("interrupted before"));
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt is kept")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(held.state()).isEqualTo(Leadership.State.ACTIVE);

        int writes = 100;
        AtomicInteger interruptsSeen = new AtomicInteger();
        AtomicInteger written = new AtomicInteger();
        Thread writer = new Thread(
                () -> {
                    for (int i = 0; i < writes; i++) {
                        held.write(command("interrupted during " + i));
                        written.incrementAndGet();
                        if (Thread.interrupted()) {
                            interruptsSeen.incrementAndGet();
                        }
                    }
                },
                "interrupted-writer");
        writer.start();
        while (writer.isAlive()) {
            writer.interrupt();
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(300));
        }
        assertThat(written).hasValue(writes);
        assertThat(interruptsSeen.get()).isPositive();
        assertThat(held.state()).isEqualTo(Leadership.State.ACTIVE);
        held.renew();
    }

    @Test
    void gracefulCloseHandsTheRoleOverWithoutWaitingForTheDeadline() throws Exception {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        held.close();
        // The manual clock stands still, so no deadline can pass: only the release
        // (visible once its commit markers are written) lets b take over.
        Leadership taken = b.client.acquire(role, b.id, Duration.ofSeconds(20));
        assertThat(taken.token().supersedes(held.token())).isTrue();
        assertThat(clock.instant()).isBefore(held.deadline());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> b.client.describe(role).current());
    }

    @Test
    void describeIsNotCurrentWhenAChallengerMintedAnEpochAndWroteNothing() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> b.client.describe(role).current());
        b.transport.initEpoch(role);
        assertThat(b.client.describe(role).holder()).contains(a.id);
        assertThat(b.client.describe(role).current()).isFalse();
        assertThatThrownBy(held::renew).isInstanceOf(FencedException.class);
    }

    /** Issue 22 item 1 on a real coordinator: a lease copying its epoch, naming a stranger, is not current. */
    @Test
    void aForgedLeaseCopyingTheCoordinatorsEpochIsNotCurrent() throws Exception {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> b.client.describe(role).current());
        var coordinator = b.client.describe(role).coordinator().orElseThrow();
        int partition =
                io.krabka.streams.coordination.record.RolePartitioner.partitionFor(role, b.transport.partitionCount());
        try (KafkaProducer<byte[], byte[]> forger = new KafkaProducer<>(
                KafkaCoordinationTransport.registrarSettings(cluster().connection(), Duration.ofSeconds(20)))) {
            forger.send(forgedLease(
                            b,
                            partition,
                            "mallory",
                            coordinator.producerId(),
                            coordinator.producerEpoch(),
                            clock.millis() + 30_000))
                    .get();
        }
        var forged = b.client.describe(role);
        assertThat(forged.holder()).contains(MemberId.of("mallory"));
        assertThat(forged.coordinator()).contains(coordinator);
        assertThat(forged.current()).isFalse();
        held.renew();
        assertThat(b.client.describe(role).holder()).contains(a.id);
        assertThat(b.client.describe(role).current()).isTrue();
    }

    @Test
    void describeIsNotCurrentWhenTheChallengersFirstTransactionAborted() {
        Member a = member("a");
        Member b = member("b");
        a.tryAcquire().orElseThrow();
        RoleEpoch challenger = b.transport.initEpoch(role);
        // A record over max.request.size fails the transaction, which is aborted.
        byte[] tooLarge = new byte[2 * 1024 * 1024];
        assertThatThrownBy(() -> challenger.transact(List.of(new ProducerRecord<>(COMMANDS, new byte[1], tooLarge))))
                .isInstanceOf(io.krabka.streams.coordination.CoordinationException.class)
                .isNotInstanceOf(FencedException.class);
        assertThat(b.client.describe(role).holder()).contains(a.id);
        assertThat(b.client.describe(role).current()).isFalse();
    }

    @Test
    void describeStaysCurrentThroughManyGuardedWritesAndTurnsFalseOnTheFirstChallenge() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        long term = held.term();
        for (int i = 0; i < 40; i++) {
            held.write(command("seq-" + i));
            // Current once the commit's markers are written (a few ms after write returns).
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> b.client.describe(role).current());
            assertThat(held.term()).isEqualTo(term);
        }
        b.transport.initEpoch(role);
        assertThat(b.client.describe(role).current()).isFalse();
    }

    @Test
    void describeIsNotCurrentWhileTheDeposedHolderIsMidTransaction() throws Exception {
        CountDownLatch sending = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        Member a = new Member("a", LeaseConfig.DEFAULTS, pausingTransport(sending, resume));
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> held.write(command("mid")));
        assertThat(sending.await(30, TimeUnit.SECONDS)).isTrue();

        b.transport.initEpoch(role);
        assertThat(b.client.describe(role).current()).isFalse();
        resume.countDown();
        assertThatThrownBy(() -> write.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
        assertThat(b.client.describe(role).current()).isFalse();
    }

    @Test
    void aStandbyThatRegisteredBehindTheFrozenHoldersOpenTransactionTakesOverAtTheDeadline() throws Exception {
        CountDownLatch sending = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        Member a = new Member("a", LeaseConfig.DEFAULTS, pausingTransport(sending, resume));
        Leadership held = a.tryAcquire().orElseThrow();
        FencingToken frozenToken = held.token(); // read now: the frozen write holds the leadership's lock
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> held.write(command("frozen")));
        assertThat(sending.await(30, TimeUnit.SECONDS)).isTrue();
        // The frozen write's lease record is in the log: read_committed readers stop before it.
        int partition =
                io.krabka.streams.coordination.record.RolePartitioner.partitionFor(role, a.transport.partitionCount());
        var topicPartition = new org.apache.kafka.common.TopicPartition(a.transport.topic(), partition);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> latest(topicPartition, org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)
                        > latest(topicPartition, org.apache.kafka.common.IsolationLevel.READ_COMMITTED));
        Member b = member("b"); // registers now, behind the open transaction
        assertThat(b.tryAcquire()).as("the lease is still valid").isEmpty();
        assertThat(b.client.observe(role, Duration.ZERO).roster())
                .extracting(io.krabka.streams.coordination.RankedMember::member)
                .as("its registration cannot be read yet")
                .doesNotContain(b.id);
        clock.advance(LeaseConfig.DEFAULTS.duration());
        Leadership taken = b.tryAcquire().orElseThrow();

        assertThat(taken.token().supersedes(frozenToken)).isTrue();
        resume.countDown();
        assertThatThrownBy(() -> write.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
        taken.write(command("fresh"));
    }

    @Test
    void aCommitThatRacesTheCoordinatorsOwnAbortEndsTheLeadershipFenced() throws Exception {
        // The coordinator aborts a transaction that outlives the producer's transaction
        // timeout, as it aborts one when another producer runs InitProducerId, and bumps the
        // epoch. A commit that arrives after that must end the leadership as fenced. Under
        // version 2 the broker answers it INVALID_TXN_STATE, under version 1 PRODUCER_FENCED.
        CountDownLatch sending = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        Member a = new Member("a", LeaseConfig.DEFAULTS, pausingTransport(sending, resume, Duration.ofSeconds(1)));
        Leadership held = a.tryAcquire().orElseThrow();
        CompletableFuture<Void> write = CompletableFuture.runAsync(() -> held.write(command("late")));
        assertThat(sending.await(30, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> cluster()
                                .admin()
                                .describeTransactions(List.of(role.name()))
                                .description(role.name())
                                .get(10, TimeUnit.SECONDS)
                                .state()
                        == TransactionState.COMPLETE_ABORT);

        resume.countDown();
        assertThatThrownBy(() -> write.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);
        assertThat(a.client.describe(role).current()).isFalse();
    }

    private long latest(
            org.apache.kafka.common.TopicPartition partition, org.apache.kafka.common.IsolationLevel isolation) {
        return cluster().endOffset(partition, isolation);
    }

    /**
     * Waits until {@code reader} can read the role's partition to the end it has now: a
     * commit returns before its markers are written, and read_committed reads stop at an
     * undecided transaction until they are (see {@link KafkaTestCluster#awaitDecided}).
     */
    private void awaitDecided(Member reader) {
        int partition = io.krabka.streams.coordination.record.RolePartitioner.partitionFor(
                role, reader.transport.partitionCount());
        cluster().awaitDecided(new org.apache.kafka.common.TopicPartition(reader.transport.topic(), partition));
    }

    private KafkaCoordinationTransport pausingTransport(CountDownLatch sending, CountDownLatch resume) {
        return pausingTransport(sending, resume, PAUSED_TRANSACTION_TIMEOUT);
    }

    /** A transport whose role producers stop right after sending a command, until {@code resume}. */
    private KafkaCoordinationTransport pausingTransport(
            CountDownLatch sending, CountDownLatch resume, Duration transactionTimeout) {
        return new KafkaCoordinationTransport(
                org.apache.kafka.clients.admin.Admin.create(
                        KafkaCoordinationTransport.adminSettings(cluster().connection(), Duration.ofSeconds(20))),
                new KafkaProducer<>(
                        KafkaCoordinationTransport.registrarSettings(cluster().connection(), Duration.ofSeconds(20))),
                r -> pauseOnCommand(
                        KafkaCoordinationTransport.transactionalSettings(
                                cluster().connection(), r, Duration.ofSeconds(20), transactionTimeout),
                        sending,
                        resume),
                new org.apache.kafka.clients.consumer.KafkaConsumer<>(
                        KafkaCoordinationTransport.readerSettings(cluster().connection())),
                topic,
                Duration.ofSeconds(20));
    }

    @Test
    void describeIsNeverCurrentForADeposedHolderAcrossATransactionVersionChange() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        short other = (short) (transactionVersion() == 2 ? 1 : 2);
        try {
            cluster().setTransactionVersion(other);
            for (int i = 0; i < 10; i++) {
                held.write(command("after-change-" + i));
            }
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> b.client.describe(role).current());
            b.transport.initEpoch(role);
            assertThat(b.client.describe(role).current()).isFalse();
            assertThatThrownBy(held::renew).isInstanceOf(FencedException.class);
        } finally {
            cluster().setTransactionVersion(transactionVersion());
        }
    }

    @Test
    void garbageInTheRolesPartitionIsSkippedCountedAndChangesNothing() throws Exception {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        // b registered behind a's grant: compare two reads of the whole decided log, not one
        // that stopped before the grant's markers and one after.
        awaitDecided(b);
        var before = b.client.describe(role);
        int partition =
                io.krabka.streams.coordination.record.RolePartitioner.partitionFor(role, b.transport.partitionCount());
        byte[] unknownVersionKey = java.util.HexFormat.of().parseHex("0001" + "0001" + "0001" + "78" + "0000");
        try (KafkaProducer<byte[], byte[]> vandal = new KafkaProducer<>(
                KafkaCoordinationTransport.registrarSettings(cluster().connection(), Duration.ofSeconds(20)))) {
            vandal.send(new ProducerRecord<>(
                            b.transport.topic(), partition, "garbage".getBytes(), "garbage".getBytes()))
                    .get();
            vandal.send(new ProducerRecord<>(b.transport.topic(), partition, unknownVersionKey, new byte[] {0}))
                    .get();
        }
        var after = b.client.describe(role);
        assertThat(b.client.malformedRecords()).isEqualTo(2);
        assertThat(after.roster()).isEqualTo(before.roster());
        assertThat(after.holder()).isEqualTo(before.holder());
        // Both members carry on.
        held.write(command("after-garbage"));
        assertThat(b.tryAcquire()).isEmpty();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> b.client.describe(role).current());
    }

    /**
     * Anyone with Write on the topic can append lease records and tombstones. A holder
     * asks the coordinator before it believes a lease naming someone else, and keeps
     * its role; a standby waits at most one lease after it first sees a lease, whatever
     * its deadline says; a forged tombstone costs at most a handover, never two writers.
     */
    @Test
    void forgedLeasesNeitherDeposeTheHolderNorStallTheStandbyAndAForgedTombstoneCostsAtMostAHandover()
            throws Exception {
        Member a = member("a");
        Member b = member("b");
        Contender holder = contender(a);
        await().atMost(Duration.ofSeconds(30)).until(() -> holder.leadership().isPresent());
        Contender standby = contender(b);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> b.client.observe(role, Duration.ZERO).roster().size() == 2);
        long term = holder.leadership().orElseThrow().term();
        var coordinator = b.client.describe(role).coordinator().orElseThrow();
        int partition =
                io.krabka.streams.coordination.record.RolePartitioner.partitionFor(role, b.transport.partitionCount());
        try (KafkaProducer<byte[], byte[]> forger = new KafkaProducer<>(
                KafkaCoordinationTransport.registrarSettings(cluster().connection(), Duration.ofSeconds(20)))) {
            // Each stranger's lease in turn: the holder asks the coordinator about it, counts
            // it as suspicious, and keeps its role.
            forger.send(forgedLease(b, partition, "ghost", 0, (short) 0, Long.MAX_VALUE))
                    .get();
            await().atMost(Duration.ofSeconds(30)).until(() -> a.client.suspiciousRecords() == 1);
            // The holder renews at once after each report; a forgery sent before that renewal
            // lands would sit behind the holder's own lease and never be read as the newest.
            awaitRenewedOverTheForgery(b);
            forger.send(forgedLease(b, partition, "b", coordinator.producerId(), (short) 0, clock.millis() + 60_000))
                    .get();
            await().atMost(Duration.ofSeconds(30)).until(() -> a.client.suspiciousRecords() == 2);
            awaitRenewedOverTheForgery(b);
            // The holder's own name with a lower epoch and a deadline that never comes.
            forger.send(forgedLease(b, partition, "a", coordinator.producerId(), (short) 0, Long.MAX_VALUE))
                    .get();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> b.client
                                    .observe(role, Duration.ZERO)
                                    .lease()
                                    .orElseThrow()
                                    .token()
                                    .producerEpoch()
                            == 0);
            assertThat(holder.leadership()).get().extracting(Leadership::term).isEqualTo(term);
            assertThat(standby.leadership()).isEmpty();
            // Its next renewal makes it current again for any reader.
            clock.advance(LeaseConfig.DEFAULTS.renewInterval());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> b.client.describe(role).current()
                            && b.client.describe(role).holder().orElseThrow().equals(a.id));
            assertThat(holder.leadership()).get().extracting(Leadership::term).isEqualTo(term);

            // A forged tombstone: the standby may take over (a handover), never a second writer.
            forger.send(new ProducerRecord<>(
                            b.transport.topic(),
                            partition,
                            CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                            null))
                    .get();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> holder.leadership().isPresent()
                                    != standby.leadership().isPresent()
                            && b.client.describe(role).current());
            Contender now = holder.leadership().isPresent() ? holder : standby;
            Contender other = now == holder ? standby : holder;
            assertThat(other.leadership()).isEmpty();

            // The holder dies without a word, and the last record is a lease that never ends.
            Member nowMember = now == holder ? a : b;
            Member otherMember = now == holder ? b : a;
            nowMember.crash();
            now.stop();
            long suspicious = otherMember.client.suspiciousRecords();
            forger.send(forgedLease(b, partition, "ghost", 0, (short) 0, Long.MAX_VALUE))
                    .get();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> otherMember
                            .client
                            .observe(role, Duration.ZERO)
                            .holder()
                            .map(MemberId::value)
                            .orElse("")
                            .equals("ghost"));
            // The survivor's own pass bounded the lease (and counted it): it saw it at this clock reading, not after
            // the advance below, which would move its bound out of the test's reach.
            await().atMost(Duration.ofSeconds(30)).until(() -> otherMember.client.suspiciousRecords() > suspicious);
        }
        // One lease after the standby first saw it (plus its stagger), not at Long.MAX_VALUE.
        Contender survivor = now(holder, standby);
        clock.advance(LeaseConfig.DEFAULTS
                .duration()
                .plus(LeaseConfig.DEFAULTS.challengeStagger())
                .plusSeconds(1));
        await().atMost(Duration.ofSeconds(30)).until(() -> survivor.leadership().isPresent());
        assertThat(survivor.leadership().orElseThrow().term()).isGreaterThan(term);
    }

    /**
     * Waits until {@code reader}, reading to the end of the role's partition, finds the
     * holder "a"'s own renewal newer than the last forgery (which named another member).
     */
    private void awaitRenewedOverTheForgery(Member reader) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> reader.client
                        .observe(role, Duration.ZERO)
                        .lease()
                        .filter(lease -> lease.holder().value().equals("a"))
                        .isPresent());
    }

    /** The contender that is still running. */
    private static Contender now(Contender one, Contender two) {
        return one.isRunning() ? one : two;
    }

    private Contender contender(Member member) {
        Contender contender = new Contender(member.client, role, member.id, new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(
                    Leadership leadership,
                    io.krabka.streams.coordination.LeadershipEndCause cause,
                    Throwable failure) {}
        });
        opened.add(0, () -> {
            contender.stop();
            contender.awaitStopped(Duration.ofSeconds(10));
        });
        contender.start();
        return contender;
    }

    private ProducerRecord<byte[], byte[]> forgedLease(
            Member reader, int partition, String member, long producerId, short epoch, long deadline) {
        return new ProducerRecord<>(
                reader.transport.topic(),
                partition,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                        MemberId.of(member), producerId, epoch, clock.millis(), deadline)));
    }

    /** A transactional producer that stops inside its transaction when it sends a command. */
    private static Producer<byte[], byte[]> pauseOnCommand(
            Map<String, Object> settings, CountDownLatch sending, CountDownLatch resume) {
        return new KafkaProducer<>(settings) {
            @Override
            public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
                Future<RecordMetadata> sent = super.send(record);
                if (record.topic().equals(COMMANDS)) {
                    sending.countDown();
                    try {
                        resume.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return sent;
            }
        };
    }

    static final String COMMANDS = "commands";

    private ProducerRecord<byte[], byte[]> command(String text) {
        return new ProducerRecord<>(COMMANDS, role.utf8(), text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
