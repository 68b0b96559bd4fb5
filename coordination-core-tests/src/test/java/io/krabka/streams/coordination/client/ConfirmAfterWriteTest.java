package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A review found: {@code LeaseWriter.write} runs {@code confirmIfBehind} after the write's own
 * transaction committed; a fence of that confirming lease escapes from {@code write} as a
 * {@code FencedException}, which promises "nothing of it was written".
 */
class ConfirmAfterWriteTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final TopicPartition COMMANDS_0 = new TopicPartition("commands", 0);

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    private final AtomicReference<Runnable> beforeDescribe = new AtomicReference<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        runtime.close();
    }

    @Test
    void aWriteWhoseRecordsCommittedIsNotReportedFencedWhenTheConfirmAfterItIsFenced() {
        cluster.createTopic("commands", 1);
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        // The next transaction is not predicted (its producer reconnected), so it describes after it.
        cluster.reconnectProducers();
        // A challenger's InitProducerId right after the write committed (before the holder's describe).
        beforeDescribe.set(() -> opened.add(challenger.initEpoch(ROLE)));

        Throwable thrown = null;
        try {
            held.write(new ProducerRecord<>("commands", 0, null, "x".getBytes(StandardCharsets.UTF_8)));
        } catch (RuntimeException e) {
            thrown = e;
        }
        List<String> committed = cluster.records(COMMANDS_0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                .toList();
        assertThat(committed).as("the write committed").containsExactly("x");
        assertThat(thrown)
                .as("a write whose records committed must not report FencedException ('nothing was written')")
                .isNull();
    }

    /**
     * The confirming lease after the write loses its commit's answer though it committed: the
     * resolver ends the leadership (FAILED) and returns; {@code confirm()} loops once more and
     * its next transaction is refused with a FencedException, which {@code write} reports.
     */
    @Test
    void aWriteWhoseRecordsCommittedIsNotReportedFencedWhenTheConfirmAfterItLostItsAnswer() {
        cluster.createTopic("commands", 1);
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        cluster.reconnectProducers();
        // Armed after the write committed (at its describe): the confirm's commit is lost, yet applied.
        beforeDescribe.set(() -> cluster.loseNextCommit(ROLE, InMemoryCluster.LostCommit.APPLIED));

        Throwable thrown = null;
        try {
            held.write(new ProducerRecord<>("commands", 0, null, "x".getBytes(StandardCharsets.UTF_8)));
        } catch (RuntimeException e) {
            thrown = e;
        }
        List<String> committed = cluster.records(COMMANDS_0).stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                .toList();
        assertThat(committed).as("the write committed").containsExactly("x");
        assertThat(thrown)
                .as("a write whose records committed must not report FencedException ('nothing was written')")
                .isNull();
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Runnable before = method.getName().equals("describeEpoch") && args.length == 2
                    ? beforeDescribe.getAndSet(null)
                    : null;
            if (before != null) {
                before.run();
            }
            return call(memory, method, args);
        });
    }
}
