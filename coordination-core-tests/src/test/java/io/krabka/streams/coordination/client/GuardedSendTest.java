package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.RecordKind;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** {@link Leadership#send}: group commit on the in-memory cluster. */
class GuardedSendTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final String COMMANDS = "commands";
    private static final TopicPartition COMMANDS_0 = new TopicPartition(COMMANDS, 0);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final Role role = Role.of("controller");

    private CoordinationClient client(SendBatching batching) {
        return new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, clock, batching);
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
    void concurrentSendsShareTransactionsAndKeepEachSendersOrder() throws Exception {
        Leadership held = client(new SendBatching(100, Duration.ofMillis(5)))
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        int before = held.token().producerEpoch();
        int senders = 8;
        int each = 500;
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<List<CompletableFuture<RecordMetadata>>>> all = new ArrayList<>();
        for (int s = 0; s < senders; s++) {
            int sender = s;
            all.add(CompletableFuture.supplyAsync(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                for (int i = 0; i < each; i++) {
                    futures.add(held.send(command(sender + ":" + i)));
                }
                return futures;
            }));
        }
        go.countDown();
        List<RecordMetadata> written = new ArrayList<>();
        for (CompletableFuture<List<CompletableFuture<RecordMetadata>>> sender : all) {
            for (CompletableFuture<RecordMetadata> send : sender.get(30, TimeUnit.SECONDS)) {
                written.add(send.get(30, TimeUnit.SECONDS));
            }
        }

        assertThat(written).hasSize(senders * each);
        List<String> log = committedCommands();
        assertThat(log).hasSize(senders * each).doesNotHaveDuplicates();
        for (int s = 0; s < senders; s++) {
            String prefix = s + ":";
            assertThat(log.stream()
                            .filter(c -> c.startsWith(prefix))
                            .map(c -> Integer.parseInt(c.substring(prefix.length()))))
                    .as("sender %d's records in the order of its sends", s)
                    .isSorted()
                    .hasSize(each);
        }
        // Under transaction version 2 each commit moves the epoch by one: at most one transaction
        // per 100 records would be 40; one per send would be 4 000.
        int transactions = held.token().producerEpoch() - before;
        assertThat(transactions)
                .as("transactions for %d sends", senders * each)
                .isBetween(senders * each / 100, senders * each / 10);
    }

    @Test
    void aSendAfterTheLeadershipWasTakenFailsFencedAndNothingOfItIsWritten() throws Exception {
        CoordinationClient a = client(SendBatching.DEFAULTS);
        Leadership held = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        assertThat(held.send(command("before")).get(5, TimeUnit.SECONDS).offset())
                .isZero();

        clock.advance(LeaseConfig.DEFAULTS.duration().plusSeconds(1));
        CoordinationClient b = client(SendBatching.DEFAULTS);
        Leadership taken = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(5));

        CompletableFuture<RecordMetadata> stale = held.send(command("stale"));
        assertThatThrownBy(() -> stale.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(FencedException.class);
        assertThatThrownBy(() -> held.send(command("after")).get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(FencedException.class);
        taken.send(command("fresh")).get(5, TimeUnit.SECONDS);
        assertThat(committedCommands()).containsExactly("before", "fresh");
    }

    @Test
    void aReleaseWritesTheSendsItAcceptedBeforeItsTombstoneAndRefusesLaterOnes() throws Exception {
        // A linger longer than the test: only the release makes the queued sends go.
        Leadership held = client(new SendBatching(1_000, Duration.ofMinutes(1)))
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        List<CompletableFuture<RecordMetadata>> queued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            queued.add(held.send(command("queued-" + i)));
        }
        assertThat(queued).noneMatch(CompletableFuture::isDone);

        held.close();

        assertThat(queued).allSatisfy(send -> assertThat(send).isCompleted());
        assertThat(committedCommands()).hasSize(10).startsWith("queued-0").endsWith("queued-9");
        assertThatThrownBy(() -> held.send(command("late")).get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(FencedException.class)
                .satisfies(e ->
                        assertThat(((FencedException) e.getCause()).endCause()).isEqualTo(LeadershipEndCause.RELEASED));
    }

    @Test
    void aReleaseFromASendsCompletionCallbackWritesTheSendsQueuedBeforeItAndItsTombstone() throws Exception {
        // Two records make a batch, and nothing else starts one: the callback of the first
        // runs on the thread that wrote it, while that thread still owns the flush.
        Leadership held = client(new SendBatching(2, Duration.ofMinutes(1)))
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        AtomicReference<CompletableFuture<RecordMetadata>> fromCallback = new AtomicReference<>();
        CompletableFuture<Void> closed = new CompletableFuture<>();
        held.send(command("first")).whenComplete((written, failed) -> {
            fromCallback.set(held.send(command("from-callback")));
            held.close();
            closed.complete(null);
        });
        CompletableFuture<RecordMetadata> second = held.send(command("second"));

        closed.get(10, TimeUnit.SECONDS);
        assertThat(held.state()).isEqualTo(Leadership.State.RELEASED);
        // Accepted before the release, so written before the tombstone.
        assertThat(fromCallback.get().get(10, TimeUnit.SECONDS)).isNotNull();
        assertThat(second.get(10, TimeUnit.SECONDS)).isNotNull();
        assertThat(committedCommands()).containsExactly("first", "second", "from-callback");
        LeadershipStatus status = client(SendBatching.DEFAULTS).observe(role, Duration.ZERO);
        assertThat(status.lease()).as("the release's tombstone").isEmpty();
        assertThat(status.roster()).isEmpty();
    }

    @Test
    void aContenderRelinquishingFromASendsCompletionCallbackReleasesTheRole() throws Exception {
        CoordinationClient client = new CoordinationClient(
                cluster.transport(TOPIC),
                LeaseConfig.DEFAULTS,
                java.time.InstantSource.system(),
                new SendBatching(2, Duration.ofMinutes(1)));
        CompletableFuture<LeadershipEndCause> ended = new CompletableFuture<>();
        AtomicReference<Contender> contender = new AtomicReference<>();
        contender.set(new Contender(client, role, MemberId.of("a"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                // The work: one command, and the role is given up once it is written.
                leadership
                        .send(command("only"))
                        .whenComplete((written, failed) -> contender.get().relinquish(leadership, null));
                leadership.send(command("and-this"));
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ended.complete(cause);
            }
        }));
        contender.get().start();
        try {
            assertThat(ended.get(10, TimeUnit.SECONDS)).isEqualTo(LeadershipEndCause.RELEASED);
            assertThat(committedCommands()).containsExactly("only", "and-this");
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(committedLeaseIsTombstone()).isTrue());
        } finally {
            contender.get().stop();
            contender.get().awaitStopped(Duration.ofSeconds(10));
        }
    }

    /** Whether the newest lease record of the role is a tombstone. */
    private boolean committedLeaseIsTombstone() {
        TopicPartition partition =
                new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions()));
        List<RawRecord> leases = cluster.records(partition).stream()
                .filter(record -> CoordinationCodec.decodeKey(record.key()).kind() == RecordKind.LEASE)
                .toList();
        return !leases.isEmpty() && leases.get(leases.size() - 1).value() == null;
    }
}
