package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.fencing.TermGate;
import io.krabka.streams.coordination.fencing.TermStore;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The device half of fencing on a command topic of three partitions keyed by device, as a
 * control plane writes it: leaderships change hands while commands flow (releases, and a
 * challenger that takes the role from a holder whose later writes the broker refuses). A
 * device that was offline for the first three leaderships catches up, reading every
 * partition {@code read_committed} while the last two write. Kafka orders records per
 * partition only, so it meets a newer holder's term on one partition before an earlier
 * holder's committed commands on another: a gate per device key or per partition admits
 * every committed command, and the per-role gate, run beside them on the same records as the
 * control, refuses some. A command copied late to the device by a bridge is refused.
 */
class PartitionedDeviceGateIT {

    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);
    private static final int DEVICES = 9;
    private static final int BURST = 400;
    private static final String PER_KEY = "per key";
    private static final String PER_PARTITION = "per partition";
    private static final String PER_ROLE = "per role";
    private static KafkaTestCluster cluster;

    private final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final Role role = Role.of("rollout-" + suffix);
    private final String commands = "commands-" + suffix;
    private final List<TopicPartition> partitions =
            List.of(new TopicPartition(commands, 0), new TopicPartition(commands, 1), new TopicPartition(commands, 2));
    /** Every command sent, by value, with what became of its send. */
    private final Map<String, CompletableFuture<RecordMetadata>> sends = new LinkedHashMap<>();

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

    @Test
    void everyCommittedCommandIsAdmittedAndALateCopyIsRefused() throws Exception {
        cluster.createTopic(commands, 3);
        CoordinationClient a = client();
        CoordinationClient b = client();
        CoordinationClient c = client();

        Leadership a1 = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
        burst(a1, "a1", BURST);
        a1.close(); // a release while its sends are queued
        Leadership b1 = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(30));
        burst(b1, "b1", BURST / 2);
        assertThat(c.tryAcquire(role, MemberId.of("c")))
                .as("c registers as b's standby")
                .isEmpty();
        burst(b1, "b1-during", BURST / 2);
        AtomicReference<Leadership> taken = new AtomicReference<>();
        // b stops renewing on the manual clock: c challenges at the deadline while b's sends are in flight.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            clock.advance(LeaseConfig.DEFAULTS.duration().plus(LeaseConfig.DEFAULTS.challengeStagger()));
            Optional<Leadership> won = c.tryAcquire(role, MemberId.of("c"));
            won.ifPresent(taken::set);
            return won.isPresent();
        });
        Leadership c1 = taken.get();
        burst(b1, "b1-fenced", 50); // the deposed holder writes on
        burst(c1, "c1", BURST);
        drain("b1-fenced");
        b.leave(role, MemberId.of("b"));
        c1.close();
        // The device was offline for three leaderships: it catches up while commands flow.
        Device live = new Device();
        CompletableFuture<Void> reading = CompletableFuture.runAsync(live::run);
        Leadership a2 = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
        burst(a2, "a2", BURST);
        a2.close();
        Leadership b2 = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(30));
        burst(b2, "b2", BURST);
        b2.close();

        Set<String> committed = new HashSet<>();
        Map<String, Throwable> failed = new HashMap<>();
        for (Map.Entry<String, CompletableFuture<RecordMetadata>> send : sends.entrySet()) {
            try {
                send.getValue().get(60, TimeUnit.SECONDS);
                committed.add(send.getKey());
            } catch (ExecutionException e) {
                failed.put(send.getKey(), e.getCause());
            }
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (TopicPartition partition : partitions) {
            cluster.awaitDecided(partition);
            ends.put(partition, cluster.endOffset(partition, IsolationLevel.READ_COMMITTED));
        }
        live.stopAt(ends);
        reading.get(60, TimeUnit.SECONDS);

        // A command for dev-0 of the first leadership, delivered again through a side path
        // (a bridge that copies the topic) after newer terms commanded dev-0.
        ConsumerRecord<String, String> original = live.records.get("a1-0");
        ConsumerRecord<String, String> late = throughABridge(original);
        TermGate.Verdict lateVerdict = live.gates.get(PER_KEY).check(late);
        TermGate.Verdict reread = live.gates.get(PER_PARTITION).check(original);

        System.out.printf(
                "terms %d %d %d %d %d; sent %d, committed %d, failed %d; device read %d;"
                        + " refused per key %d, per partition %d, per role %d%n",
                a1.term(),
                b1.term(),
                c1.term(),
                a2.term(),
                b2.term(),
                sends.size(),
                committed.size(),
                failed.size(),
                live.values.size(),
                live.refused.get(PER_KEY).size(),
                live.refused.get(PER_PARTITION).size(),
                live.refused.get(PER_ROLE).size());
        assertThat(ends.values()).as("every partition got commands").allMatch(end -> end > 0);
        assertThat(failed)
                .as("the broker refused the deposed holder's writes")
                .containsKeys(sends.keySet().stream()
                        .filter(value -> value.startsWith("b1-fenced-"))
                        .toArray(String[]::new));
        assertThat(failed.get("b1-fenced-49")).isInstanceOf(FencedException.class);
        assertThat(live.values)
                .as("the device reads exactly the committed commands, each once")
                .hasSize(committed.size())
                .containsExactlyInAnyOrderElementsOf(committed);
        assertThat(live.refused.get(PER_KEY))
                .as("committed commands the per-key gate refused")
                .isEmpty();
        assertThat(live.refused.get(PER_PARTITION))
                .as("committed commands the per-partition gate refused")
                .isEmpty();
        assertThat(live.refused.get(PER_ROLE))
                .as("the control: one term per role refuses committed commands")
                .isNotEmpty();
        assertThat(lateVerdict.outcome()).isEqualTo(TermGate.Outcome.STALE);
        assertThat(lateVerdict.reason())
                .isEqualTo("refused term " + a1.term() + " of role " + role + ": it arrived after term " + b2.term()
                        + " for key dev-0");
        assertThat(reread.outcome()).as("a re-read of the partition").isEqualTo(TermGate.Outcome.STALE);
        assertThat(live.gates.get(PER_PARTITION).check(late).admitted())
                .as("a per-partition gate has no term yet for the bridge's partition")
                .isTrue();
    }

    /** {@code record} copied with its key and headers to a topic of its own and read back, as a bridge or a replay would deliver it. */
    private ConsumerRecord<String, String> throughABridge(ConsumerRecord<String, String> record) throws Exception {
        String replay = "replay-" + suffix;
        cluster.createTopic(replay, 1);
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        try (KafkaProducer<String, String> bridge =
                new KafkaProducer<>(settings, new StringSerializer(), new StringSerializer())) {
            bridge.send(new ProducerRecord<>(replay, null, record.key(), record.value(), record.headers()))
                    .get(30, TimeUnit.SECONDS);
        }
        KafkaConsumer<String, String> reader = consumer();
        TopicPartition partition = new TopicPartition(replay, 0);
        reader.assign(List.of(partition));
        reader.seekToBeginning(List.of(partition));
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            reader.poll(Duration.ofMillis(100)).forEach(read::add);
            return !read.isEmpty();
        });
        return read.get(0);
    }

    /** Sends {@code count} commands keyed round-robin by device, without waiting for them. */
    private void burst(Leadership leadership, String label, int count) {
        for (int i = 0; i < count; i++) {
            String device = "dev-" + (i % DEVICES);
            sends.put(
                    label + "-" + i,
                    leadership.send(new ProducerRecord<>(
                            commands,
                            device.getBytes(StandardCharsets.UTF_8),
                            (label + "-" + i).getBytes(StandardCharsets.UTF_8))));
        }
    }

    private void drain(String label) {
        sends.forEach((value, send) -> {
            if (value.startsWith(label)) {
                send.handle((sent, failure) -> null).join();
            }
        });
    }

    private CoordinationClient client() {
        KafkaCoordinationTransport transport = cluster.transport(TOPIC);
        opened.add(transport);
        return new CoordinationClient(
                transport, LeaseConfig.DEFAULTS, clock, new SendBatching(100, Duration.ofMillis(2)));
    }

    private KafkaConsumer<String, String> consumer() {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(settings, new StringDeserializer(), new StringDeserializer());
        opened.add(consumer);
        return consumer;
    }

    /** A device process: every partition of the command topic, read_committed, from the start, through its gates. */
    private final class Device {
        final KafkaConsumer<String, String> consumer = consumer();
        final Map<String, TermGate> gates = Map.of(
                PER_KEY,
                TermGate.perKey(TermStore.inMemory()).onlyRole(role),
                PER_PARTITION,
                TermGate.perPartition(TermStore.inMemory()).onlyRole(role),
                PER_ROLE,
                TermGate.perRole(TermStore.inMemory()).onlyRole(role));
        final Map<String, List<String>> refused = new HashMap<>();
        final List<String> values = new ArrayList<>();
        final Map<String, ConsumerRecord<String, String>> records = new HashMap<>();
        volatile Map<TopicPartition, Long> stopAt;

        Device() {
            gates.keySet().forEach(gate -> refused.put(gate, new ArrayList<>()));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        }

        void run() {
            while (!reachedStop()) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    values.add(record.value());
                    records.put(record.value(), record);
                    gates.forEach((name, gate) -> {
                        TermGate.Verdict verdict = gate.check(record);
                        if (!verdict.admitted()) {
                            refused.get(name).add(record.value() + ": " + verdict.reason());
                        }
                    });
                }
            }
        }

        void stopAt(Map<TopicPartition, Long> ends) {
            stopAt = ends;
        }

        private boolean reachedStop() {
            Map<TopicPartition, Long> ends = stopAt;
            return ends != null
                    && ends.entrySet().stream().allMatch(end -> consumer.position(end.getKey()) >= end.getValue());
        }
    }
}
