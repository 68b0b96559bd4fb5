package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.fencing.TermGate;
import io.krabka.streams.coordination.fencing.TermStore;
import io.krabka.streams.coordination.fencing.TokenHeaders;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Group-committed guarded sends on a real broker, on transaction version 2 and 1: while
 * sends stream in, a challenger runs InitProducerId for the role; every send either committed (and is
 * visible to a read_committed reader) or failed fenced (and is not), and the batches
 * after the challenge are all refused.
 */
class GuardedSendIT {

    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);
    private static KafkaTestCluster cluster;

    private final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final Role role = Role.of("sender-" + suffix);
    private final String commands = "commands-" + suffix;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private CoordinationClient client() {
        KafkaCoordinationTransport transport = cluster.transport(TOPIC);
        opened.add(transport);
        return new CoordinationClient(
                transport, LeaseConfig.DEFAULTS, clock, new SendBatching(200, Duration.ofMillis(2)));
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2, 1})
    void everySendCommitsOrIsFencedWithItsBatchAcrossAChallenge(short transactionVersion) throws Exception {
        cluster.setTransactionVersion(transactionVersion);
        cluster.createTopic(commands, 1);
        Leadership held = client().acquire(role, MemberId.of("a"), Duration.ofSeconds(30));

        Map<String, CompletableFuture<RecordMetadata>> sends = new HashMap<>();
        for (int i = 0; i < 2_000; i++) {
            sends.put("before-" + i, held.send(command("before-" + i)));
        }
        CompletableFuture.allOf(sends.values().toArray(CompletableFuture[]::new))
                .get(60, TimeUnit.SECONDS);
        // Half of these are still queued or in flight when the challenger's InitProducerId lands.
        for (int i = 0; i < 2_000; i++) {
            sends.put("during-" + i, held.send(command("during-" + i)));
            if (i == 1_000) {
                // A challenger's InitProducerId: the holder keeps renewing with every batch, so
                // no standby would challenge it; a member that does anyway fences it all the same.
                KafkaCoordinationTransport challenger = cluster.transport(TOPIC);
                opened.add(challenger);
                challenger.initEpoch(role);
            }
        }
        Set<String> committed = new HashSet<>();
        Set<String> fenced = new HashSet<>();
        for (Map.Entry<String, CompletableFuture<RecordMetadata>> send : sends.entrySet()) {
            try {
                send.getValue().get(60, TimeUnit.SECONDS);
                committed.add(send.getKey());
            } catch (ExecutionException e) {
                assertThat(e.getCause()).as(send.getKey()).isInstanceOf(FencedException.class);
                fenced.add(send.getKey());
            }
        }

        assertThat(committed)
                .as("the sends before the challenge")
                .containsAll(sends.keySet().stream()
                        .filter(k -> k.startsWith("before-"))
                        .toList());
        assertThat(fenced).as("the challenge fenced some sends").isNotEmpty();
        assertThat(held.isActive()).isFalse();
        assertThat(readCommitted())
                .as("exactly the committed sends are visible")
                .containsExactlyInAnyOrderElementsOf(committed);
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2, 1})
    void everyGuardedWriteCarriesItsLeadershipsTokenAndAGateRefusesADeposedLeadersRecordsThatArriveLate(
            short transactionVersion) throws Exception {
        cluster.setTransactionVersion(transactionVersion);
        cluster.createTopic(commands, 1);
        CoordinationClient a = client();
        CoordinationClient b = client();
        Leadership first = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
        FencingToken granted = first.token();
        assertThat(b.tryAcquire(role, MemberId.of("b"))).isEmpty();
        ProducerRecord<byte[], byte[]> traced = command("a-write");
        traced.headers().add("trace", "t-1".getBytes(StandardCharsets.UTF_8));
        traced.headers().add(TokenHeaders.TERM, "999999".getBytes(StandardCharsets.UTF_8));
        first.write(traced);
        first.send(command("a-send")).get(30, TimeUnit.SECONDS);
        FencingToken firstAfter = first.token();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> b.describe(role).current());
        clock.advance(LeaseConfig.DEFAULTS.duration());
        Leadership second = b.tryAcquire(role, MemberId.of("b")).orElseThrow();
        second.write(command("b-write"));

        Map<String, Headers> stamped = new HashMap<>();
        cluster.committed(commands)
                .forEach(record -> stamped.put(new String(record.value(), StandardCharsets.UTF_8), record.headers()));

        assertThat(stamped).containsOnlyKeys("a-write", "a-send", "b-write");
        for (String value : List.of("a-write", "a-send")) {
            TokenHeaders.Stamp stamp = TokenHeaders.read(stamped.get(value)).orElseThrow();
            assertThat(stamp.role()).isEqualTo(role);
            assertThat(stamp.token().term()).as(value).isEqualTo(first.term());
            assertThat(stamp.token().producerId()).isEqualTo(granted.producerId());
            assertThat(stamp.token().producerEpoch())
                    .as("the epoch of the transaction that wrote it")
                    .isBetween(granted.producerEpoch(), firstAfter.producerEpoch());
        }
        assertThat(stamped.get("a-write").headers(TokenHeaders.TERM))
                .as("the application's own term header was replaced")
                .hasSize(1);
        assertThat(stamped.get("a-write").lastHeader("trace").value())
                .isEqualTo("t-1".getBytes(StandardCharsets.UTF_8));
        assertThat(TokenHeaders.read(stamped.get("b-write"))
                        .orElseThrow()
                        .token()
                        .term())
                .isEqualTo(second.term());

        // The device heard the new leader first; the deposed leader's records reach it late
        // (a topic of one partition: one term per role).
        TermGate gate = TermGate.perRole(TermStore.inMemory()).onlyRole(role);
        assertThat(gate.check(stamped.get("b-write"), TermStore.WHOLE_ROLE).outcome())
                .isEqualTo(TermGate.Outcome.ADMITTED);
        assertThat(gate.check(stamped.get("a-write"), TermStore.WHOLE_ROLE).outcome())
                .isEqualTo(TermGate.Outcome.STALE);
        assertThat(gate.check(stamped.get("a-send"), TermStore.WHOLE_ROLE).outcome())
                .isEqualTo(TermGate.Outcome.STALE);
        assertThat(gate.check(stamped.get("b-write"), TermStore.WHOLE_ROLE).admitted())
                .isTrue();
    }

    private ProducerRecord<byte[], byte[]> command(String text) {
        return new ProducerRecord<>(commands, 0, null, text.getBytes(StandardCharsets.UTF_8));
    }

    /** The committed values of the commands topic, as a read_committed reader sees them now. */
    private List<String> readCommitted() {
        return cluster.committed(commands).stream()
                .map(record -> new String(record.value(), StandardCharsets.UTF_8))
                .toList();
    }
}
