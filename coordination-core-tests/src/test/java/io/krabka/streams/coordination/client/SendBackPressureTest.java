package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.SendQueueFullException;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bound on {@link Leadership#send} ({@link SendBatching#maxQueuedRecords()},
 * {@link SendBatching#maxBlock()}) and the describes of a release, on the in-memory
 * cluster behind a transport whose transactions the test can hold up and whose
 * coordinator it can keep from completing them.
 */
@Timeout(120)
class SendBackPressureTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final String COMMANDS = "commands";
    private static final TopicPartition COMMANDS_0 = new TopicPartition(COMMANDS, 0);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final GatedTransport transport = new GatedTransport(cluster.transport(TOPIC));
    private final Role role = Role.of("controller");

    @AfterEach
    void openTheGate() {
        transport.open();
    }

    private Leadership acquire(SendBatching batching) throws InterruptedException {
        return new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock, batching)
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
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

    private static List<CompletableFuture<RecordMetadata>> sendAll(Leadership held, int count) {
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            sent.add(held.send(command("queued-" + i)));
        }
        return sent;
    }

    @Test
    void aSendBeyondTheQueuedBoundFailsAtOnceAndNothingOfItIsWritten() throws Exception {
        Leadership held = acquire(new SendBatching(5, Duration.ZERO, 10, Duration.ZERO));
        transport.hold();
        List<CompletableFuture<RecordMetadata>> accepted = sendAll(held, 10);

        CompletableFuture<RecordMetadata> refused = held.send(command("refused"));
        assertThatThrownBy(() -> refused.get(0, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(SendQueueFullException.class)
                .hasMessageContaining("not written");
        assertThat(held.isActive()).as("a full queue ends nothing").isTrue();

        transport.open();
        for (CompletableFuture<RecordMetadata> send : accepted) {
            send.get(10, TimeUnit.SECONDS);
        }
        held.send(command("after")).get(10, TimeUnit.SECONDS);
        assertThat(committedCommands()).hasSize(11).doesNotContain("refused").endsWith("after");
    }

    @Test
    void aSendWaitsForRoomWhileTransactionsCatchUp() throws Exception {
        Leadership held = acquire(new SendBatching(5, Duration.ZERO, 10, Duration.ofMinutes(1)));
        transport.hold();
        List<CompletableFuture<RecordMetadata>> accepted = sendAll(held, 10);
        AtomicReference<Thread> sender = new AtomicReference<>();
        CompletableFuture<CompletableFuture<RecordMetadata>> blocked = CompletableFuture.supplyAsync(() -> {
            sender.set(Thread.currentThread());
            return held.send(command("waited"));
        });
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sender.get() != null && sender.get().getState() == Thread.State.TIMED_WAITING);
        assertThat(blocked).isNotDone();

        transport.open();
        blocked.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        for (CompletableFuture<RecordMetadata> send : accepted) {
            send.get(10, TimeUnit.SECONDS);
        }
        assertThat(committedCommands()).hasSize(11).endsWith("waited");
    }

    @Test
    void aSendThatFindsNoRoomWithinMaxBlockFails() throws Exception {
        Duration maxBlock = Duration.ofMillis(300);
        Leadership held = acquire(new SendBatching(5, Duration.ZERO, 10, maxBlock));
        transport.hold();
        sendAll(held, 10);

        long start = System.nanoTime();
        CompletableFuture<RecordMetadata> refused = held.send(command("refused"));
        Duration blocked = Duration.ofNanos(System.nanoTime() - start);

        assertThat(refused).isCompletedExceptionally();
        assertThat(blocked).isGreaterThanOrEqualTo(maxBlock);
        assertThatThrownBy(refused::join)
                .cause()
                .isInstanceOf(SendQueueFullException.class)
                .hasMessageContaining(maxBlock.toString());
    }

    @Test
    void aSendBlockedForRoomFailsAsSoonAsTheLeadershipEnds() throws Exception {
        Leadership held = acquire(new SendBatching(5, Duration.ZERO, 10, Duration.ofMinutes(10)));
        transport.hold();
        sendAll(held, 10);
        AtomicReference<Thread> sender = new AtomicReference<>();
        CompletableFuture<CompletableFuture<RecordMetadata>> blocked = CompletableFuture.supplyAsync(() -> {
            sender.set(Thread.currentThread());
            return held.send(command("never"));
        });
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sender.get() != null && sender.get().getState() == Thread.State.TIMED_WAITING);

        held.abandon();

        CompletableFuture<RecordMetadata> refused = blocked.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> refused.get(0, TimeUnit.SECONDS)).cause().isInstanceOf(FencedException.class);
    }

    @Test
    void aSendFromACompletionCallbackDoesNotWaitForRoomItsOwnThreadWouldMake() throws Exception {
        // A callback that blocked for room would block the thread that makes room.
        Leadership held = acquire(new SendBatching(1, Duration.ZERO, 2, Duration.ofMinutes(10)));
        transport.hold();
        CompletableFuture<CompletableFuture<RecordMetadata>> fromCallback = new CompletableFuture<>();
        held.send(command("first")).whenComplete((written, failed) -> {
            // "second" waits; this send takes the last room, so the next finds none.
            held.send(command("takes-the-room"));
            fromCallback.complete(held.send(command("from-callback")));
        });
        held.send(command("second"));
        transport.releaseOne();

        CompletableFuture<RecordMetadata> refused = fromCallback.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> refused.get(0, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(SendQueueFullException.class)
                .hasMessageContaining("callback");
    }

    @Test
    void aReleaseDescribesACoordinatorThatDoesNotCompleteItsTombstoneAFewTimesNotInALoop() throws Exception {
        Leadership held = acquire(SendBatching.DEFAULTS);
        transport.completesTransactions = false;
        int before = transport.describes.get();

        held.close();

        int describes = transport.describes.get() - before;
        assertThat(held.state()).isEqualTo(Leadership.State.RELEASED);
        // One after the tombstone's commit when its epoch was not predicted, then the waits
        // for completion: 5 at once, then after 1, 2, 4, ... 64, 64 ms until 500 ms.
        assertThat(describes).as("describes of one release").isBetween(2, 25);
    }

    @Test
    void aReleaseThatFindsItsTombstoneCompleteDescribesOnce() throws Exception {
        Leadership held = acquire(SendBatching.DEFAULTS);
        int before = transport.describes.get();

        held.close();

        // No wait for completion ran: that loop describes 5 times at once, then again and again.
        assertThat(transport.describes.get() - before)
                .as("describes of one release")
                .isLessThanOrEqualTo(2);
    }

    @Test
    void sendBatchingRefusesAnEmptyQueueAndANegativeBlock() {
        assertThatThrownBy(() -> new SendBatching(1, Duration.ZERO, 0, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxQueuedRecords");
        assertThatThrownBy(() -> new SendBatching(1, Duration.ZERO, 1, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxBlock");
    }

    /**
     * Delegates to the in-memory transport; while held, every transaction waits until the
     * test releases it (one at a time, or all), and describes are counted.
     */
    static final class GatedTransport extends ForwardingTransport {

        private final java.util.concurrent.Semaphore permits =
                new java.util.concurrent.Semaphore(Integer.MAX_VALUE / 2);
        private volatile boolean held;
        final AtomicInteger describes = new AtomicInteger();
        volatile boolean completesTransactions = true;

        GatedTransport(CoordinationTransport delegate) {
            super(delegate);
        }

        /** No news: the leaderships here are driven by the test, not by contenders. */
        @Override
        public boolean watches() {
            return false;
        }

        void hold() {
            held = true;
            permits.drainPermits();
        }

        void releaseOne() {
            permits.release();
        }

        void open() {
            held = false;
            permits.release(Integer.MAX_VALUE / 2);
        }

        @Override
        public RoleEpoch initEpoch(Role role) {
            RoleEpoch epoch = delegate.initEpoch(role);
            return new RoleEpoch() {
                @Override
                public Role role() {
                    return epoch.role();
                }

                @Override
                public List<RecordMetadata> transact(
                        List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
                    if (held) {
                        permits.acquireUninterruptibly();
                    }
                    return epoch.transact(records, consumed);
                }

                @Override
                public long featureGeneration() {
                    return epoch.featureGeneration();
                }

                @Override
                public boolean usable() {
                    return epoch.usable();
                }

                @Override
                public void close() {
                    epoch.close();
                }
            };
        }

        @Override
        public Optional<ProducerState> describeEpoch(Role role) {
            describes.incrementAndGet();
            Optional<ProducerState> reported = delegate.describeEpoch(role);
            // A coordinator that never gets to write the markers of the last transaction.
            return completesTransactions
                    ? reported
                    : reported.map(
                            state -> new ProducerState(state.producerId(), state.producerEpoch(), "PrepareCommit"));
        }
    }
}
