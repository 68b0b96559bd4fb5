package io.krabka.streams.coordination.test.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster.Fault;
import io.krabka.streams.coordination.test.memory.InMemoryCluster.Operation;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The cluster's injected faults, on simulated time: each delays or blocks only what it names, and never the cluster's lock. */
class InMemoryClusterFaultsTest {

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
    private final Role role = Role.of("alpha");
    /** A role on another partition than {@link #role}'s. */
    private final Role other = otherPartitionThan(role);

    @AfterEach
    void close() {
        transport.close();
        runtime.close();
    }

    /** What a call on the simulation returned or threw, and when (ms since the start). */
    private record Outcome(Object value, Throwable failure, long atMillis) {}

    private AtomicReference<Outcome> call(Callable<?> operation) {
        AtomicReference<Outcome> outcome = new AtomicReference<>();
        runtime.workers().execute(() -> {
            try {
                Object value = operation.call();
                outcome.set(new Outcome(value, null, runtime.elapsed().toMillis()));
            } catch (Exception e) {
                outcome.set(new Outcome(null, e, runtime.elapsed().toMillis()));
            }
        });
        return outcome;
    }

    private Role otherPartitionThan(Role taken) {
        for (int i = 0; ; i++) {
            Role candidate = Role.of("other-" + i);
            if (!transport.partition(candidate).equals(transport.partition(taken))) {
                return candidate;
            }
        }
    }

    private ProducerRecord<byte[], byte[]> record(Role of, String value) {
        return new ProducerRecord<>(
                transport.topic(),
                transport.partition(of).partition(),
                ("key-" + value).getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    private int recordsOf(Role of) {
        return cluster.records(transport.partition(of)).size();
    }

    @Test
    void aCommitsLatencyDelaysItWithoutHoldingTheCluster() {
        RoleEpoch epoch = transport.initEpoch(role);
        Fault slowCommits = cluster.latency(Operation.COMMIT, Duration.ofSeconds(2));
        AtomicReference<Outcome> commit = call(() -> epoch.transact(List.of(record(role, "one"))));
        runtime.advance(Duration.ofSeconds(1));
        // Meanwhile another member reads: at once, and the commit is not applied yet.
        AtomicReference<Outcome> read = call(() -> transport.read(role, 0, Duration.ZERO));
        runtime.runDue();
        assertThat(read.get().atMillis()).isEqualTo(1000);
        assertThat(((RoleRecords) read.get().value()).records()).isEmpty();
        assertThat(commit.get()).isNull();

        runtime.advance(Duration.ofSeconds(1));
        assertThat(commit.get().failure()).isNull();
        assertThat(commit.get().atMillis()).isEqualTo(2000);
        assertThat(recordsOf(role)).isEqualTo(1);

        slowCommits.close();
        AtomicReference<Outcome> fast = call(() -> epoch.transact(List.of(record(role, "two"))));
        runtime.runDue();
        assertThat(fast.get().atMillis()).isEqualTo(2000);
    }

    @Test
    void aReadsLatencyAppliesToReadsOnly() {
        cluster.latency(Operation.READ, Duration.ofMillis(300));
        AtomicReference<Outcome> read = call(() -> transport.read(role, 0, Duration.ZERO));
        AtomicReference<Outcome> register = call(() -> transport.register(role, MemberId.of("m1"), 1));

        runtime.advance(Duration.ofSeconds(1));

        assertThat(register.get().atMillis()).isZero();
        assertThat(read.get().atMillis()).isEqualTo(300);
        // The registration was there before the read took effect.
        assertThat(((RoleRecords) read.get().value()).records()).hasSize(1);
    }

    @Test
    void aSlowInitProducerIdOfOneRoleDelaysOnlyIt() {
        cluster.slowInitProducerId(role, Duration.ofSeconds(5));
        AtomicReference<Outcome> slow = call(() -> transport.initEpoch(role));
        AtomicReference<Outcome> fast = call(() -> transport.initEpoch(other));

        runtime.advance(Duration.ofSeconds(10));

        assertThat(fast.get().atMillis()).isZero();
        assertThat(slow.get().failure()).isNull();
        assertThat(slow.get().atMillis()).isEqualTo(5000);
    }

    @Test
    void anInitProducerIdThatTimesOutFailsAfterTheOperationTimeoutAndMayHaveFencedTheHolder() {
        cluster.operationTimeout(Duration.ofSeconds(8));
        RoleEpoch holder = transport.initEpoch(role);
        InMemoryCoordinationTransport challengerTransport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
        Fault unanswered = cluster.timeOutInitProducerId(role, false);
        AtomicReference<Outcome> lost = call(() -> challengerTransport.initEpoch(role));
        runtime.advance(Duration.ofSeconds(10));

        assertThat(lost.get().failure())
                .isInstanceOf(CoordinationTimeoutException.class)
                .hasMessageContaining("alpha");
        assertThat(lost.get().atMillis()).isEqualTo(8000);
        assertThat(holder.transact(List.of(record(role, "still holds")))).hasSize(1);
        unanswered.close();

        cluster.timeOutInitProducerId(role, true);
        AtomicReference<Outcome> applied = call(() -> challengerTransport.initEpoch(role));
        runtime.advance(Duration.ofSeconds(10));

        assertThat(applied.get().failure()).isInstanceOf(CoordinationTimeoutException.class);
        AtomicReference<Outcome> fenced = call(() -> holder.transact(List.of(record(role, "fenced"))));
        runtime.runDue();
        assertThat(fenced.get().failure()).isInstanceOf(FencedException.class);
    }

    @Test
    void aFrozenCoordinatorTimesOutItsRolesCallsAndNoOtherRoles() {
        cluster.operationTimeout(Duration.ofSeconds(20));
        RoleEpoch epoch = transport.initEpoch(role);
        Fault frozen = cluster.freezeCoordinator(role);
        AtomicReference<Outcome> shortDescribe = call(() -> transport.describeEpoch(role, Duration.ofSeconds(3)));
        AtomicReference<Outcome> describe = call(() -> transport.describeEpoch(role));
        AtomicReference<Outcome> commit = call(() -> epoch.transact(List.of(record(role, "lost"))));
        AtomicReference<Outcome> otherInit = call(() -> transport.initEpoch(other));
        AtomicReference<Outcome> describeBoth = call(() -> transport.describeEpochs(List.of(other, role)));

        runtime.advance(Duration.ofSeconds(30));

        assertThat(otherInit.get().atMillis()).isZero();
        assertThat(shortDescribe.get().failure()).isInstanceOf(CoordinationTimeoutException.class);
        assertThat(shortDescribe.get().atMillis()).isEqualTo(3000);
        assertThat(describe.get().failure())
                .isInstanceOf(CoordinationTimeoutException.class)
                .hasMessageContaining("coordinator of alpha is frozen");
        assertThat(describe.get().atMillis()).isEqualTo(20_000);
        assertThat(describeBoth.get().failure())
                .isInstanceOf(CoordinationTimeoutException.class)
                .hasMessageContaining("alpha");
        assertThat(commit.get().failure()).isInstanceOf(CoordinationTimeoutException.class);
        assertThat(commit.get().atMillis()).isEqualTo(20_000);
        assertThat(recordsOf(role)).isZero();
        assertThat(epoch.usable()).isTrue();
        frozen.close();
    }

    @Test
    void aDescribeBegunWhileTheCoordinatorMovesWaitsItsWholeTimeoutWhileLaterCallsAreAnsweredAtOnce() {
        cluster.operationTimeout(Duration.ofSeconds(10));
        transport.initEpoch(role);
        Fault moving = cluster.moveCoordinator(role);
        AtomicReference<Outcome> stranded = call(() -> transport.describeEpoch(role));
        AtomicReference<Outcome> shortStranded = call(() -> transport.describeEpoch(role, Duration.ofSeconds(2)));
        AtomicReference<Outcome> init = call(() -> transport.initEpoch(role));
        AtomicReference<Outcome> elsewhere = call(() -> transport.describeEpoch(other));
        runtime.advance(Duration.ofSeconds(3));
        moving.close();
        runtime.runDue();
        AtomicReference<Outcome> afterTheMove = call(() -> transport.describeEpoch(role));
        runtime.advance(Duration.ofSeconds(10));

        assertThat(elsewhere.get().atMillis()).isZero();
        assertThat(shortStranded.get().failure())
                .isInstanceOf(CoordinationTimeoutException.class)
                .hasMessageContaining("dead transaction coordinator of alpha");
        assertThat(shortStranded.get().atMillis()).isEqualTo(2000);
        assertThat(init.get().failure()).isNull();
        assertThat(init.get().atMillis()).isEqualTo(3000);
        assertThat(afterTheMove.get().failure()).isNull();
        assertThat(afterTheMove.get().atMillis()).isEqualTo(3000);
        assertThat(stranded.get().failure()).isInstanceOf(CoordinationTimeoutException.class);
        assertThat(stranded.get().atMillis()).isEqualTo(10_000);
    }

    @Test
    void aCallBlockedByAFrozenCoordinatorGoesThroughWhenItThaws() {
        Fault frozen = cluster.freezeCoordinator(role);
        AtomicReference<Outcome> init = call(() -> transport.initEpoch(role));
        runtime.advance(Duration.ofSeconds(4));
        assertThat(init.get()).isNull();

        frozen.close();
        runtime.runDue();

        assertThat(init.get().failure()).isNull();
        assertThat(init.get().atMillis()).isEqualTo(4000);
    }

    @Test
    void aDeadPartitionLeaderBlocksReadsRegistrationsAndTransactionsOnItUntilTheirTimeout() {
        cluster.operationTimeout(Duration.ofSeconds(5));
        RoleEpoch epoch = transport.initEpoch(role);
        Fault dead = cluster.freezePartition(transport.partition(role));
        AtomicReference<Outcome> read = call(() -> transport.read(role, 0, Duration.ofSeconds(1)));
        AtomicReference<Outcome> register = call(() -> transport.register(role, MemberId.of("m1"), 1));
        AtomicReference<Outcome> commit = call(() -> epoch.transact(List.of(record(role, "lost"))));
        AtomicReference<Outcome> describe = call(() -> transport.describeEpoch(role));
        AtomicReference<Outcome> elsewhere = call(() -> transport.register(other, MemberId.of("m1"), 1));

        runtime.advance(Duration.ofSeconds(10));

        assertThat(describe.get().atMillis()).isZero();
        assertThat(elsewhere.get().failure()).isNull();
        assertThat(elsewhere.get().atMillis()).isZero();
        for (AtomicReference<Outcome> blocked : List.of(read, register, commit)) {
            assertThat(blocked.get().failure())
                    .isInstanceOf(CoordinationTimeoutException.class)
                    .hasMessageContaining("is dead");
            assertThat(blocked.get().atMillis()).isEqualTo(5000);
        }
        assertThat(recordsOf(role)).isZero();

        dead.close();
        AtomicReference<Outcome> again = call(() -> transport.register(role, MemberId.of("m1"), 1));
        runtime.runDue();
        assertThat(again.get().failure()).isNull();
    }

    @Test
    void aHeldPartitionShowsReadersAndWatchersNothingNewUntilReleased() throws Exception {
        transport.register(role, MemberId.of("before"), 1);
        List<RoleNews> news = new ArrayList<>();
        AutoCloseable watch = transport.watch(role, news::add);
        try {
            Fault held = cluster.holdVisibility(transport.partition(role));
            RoleEpoch epoch = transport.initEpoch(role);
            epoch.transact(List.of(record(role, "hidden")), ConsumedOffsets.NONE);
            transport.register(role, MemberId.of("after"), 2);
            transport.register(other, MemberId.of("elsewhere"), 3);

            RoleRecords whileHeld = transport.read(role, 0, Duration.ZERO);
            assertThat(whileHeld.records()).hasSize(1);
            assertThat(whileHeld.nextOffset()).isEqualTo(1);
            assertThat(transport.read(other, 0, Duration.ZERO).records()).hasSize(1);
            assertThat(news).isEmpty();

            held.close();

            assertThat(transport.read(role, 0, Duration.ZERO).records()).hasSize(3);
            assertThat(news).extracting(RoleNews::member).containsExactly(MemberId.of("after"));
        } finally {
            watch.close();
        }
    }

    @Test
    void aWaitingReadSleepsOnTheRuntimeAndWakesAtTheAppendThatBringsNews() {
        AtomicReference<Outcome> woken = call(() -> transport.read(role, 0, Duration.ofSeconds(10)));
        AtomicReference<Outcome> empty = call(() -> transport.read(other, 0, Duration.ofSeconds(10)));
        runtime.schedule(() -> transport.register(role, MemberId.of("m1"), 1), Duration.ofSeconds(2));

        runtime.advance(Duration.ofSeconds(20));

        assertThat(woken.get().atMillis()).isEqualTo(2000);
        assertThat(((RoleRecords) woken.get().value()).records()).hasSize(1);
        assertThat(empty.get().atMillis()).isEqualTo(10_000);
        assertThat(((RoleRecords) empty.get().value()).records()).isEmpty();
    }

    @Test
    void recordsAreStampedWithTheRuntimesWallClock() {
        runtime.advance(Duration.ofSeconds(7));
        transport.register(role, MemberId.of("m1"), 1);

        assertThat(cluster.records(transport.partition(role)).get(0).timestamp())
                .isEqualTo(runtime.clock().millis());
    }
}
