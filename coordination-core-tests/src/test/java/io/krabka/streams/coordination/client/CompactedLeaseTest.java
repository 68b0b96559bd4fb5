package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.GrantLease;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A review found: CommitOutcome's absent-lease row assumed the lease record was not
 * compacted away before the resolver read. Here the topic's {@code min.compaction.lag.ms}
 * promises nothing (zero, as on a topic created without it), a write commits, its EndTxn
 * answer is lost after every send was acknowledged, the next holder's lease (same key)
 * follows, and the cleaner has removed the older lease (simulated: the in-memory cluster
 * does not compact). The write was reported as FencedException ("nothing of it was
 * written") although its record is in the log.
 */
class CompactedLeaseTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final TopicPartition COMMANDS_0 = new TopicPartition("commands", 0);

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport successor = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, successor));
    private final AtomicBoolean loseAnswer = new AtomicBoolean();
    // The offset of the lease the cleaner removed (-1: none).
    private final AtomicLong compacted = new AtomicLong(-1);

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        runtime.close();
    }

    @Test
    void aCommittedWriteWhoseLeaseWasCompactedAwayIsNotReportedAsNothingWritten() {
        cluster.createTopic("commands", 1);
        Leadership held = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime)
                .tryAcquire(ROLE, MemberId.of("a"))
                .orElseThrow();
        held.renew();
        loseAnswer.set(true);

        Throwable thrown = null;
        try {
            held.write(new ProducerRecord<>("commands", 0, null, "x".getBytes(StandardCharsets.UTF_8)));
        } catch (RuntimeException e) {
            thrown = e;
        }
        assertThat(cluster.records(COMMANDS_0)).as("the write committed").hasSize(1);
        assertThat(thrown)
                .as("returns, or CommitOutcomeUnknownException; never FencedException")
                .satisfiesAnyOf(
                        t -> assertThat(t).isNull(),
                        t -> assertThat(t).isInstanceOf(CommitOutcomeUnknownException.class));
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            if (method.getName().equals("minCompactionLag")) {
                return Duration.ZERO;
            }
            Object result = call(memory, method, args);
            if (method.getName().equals("read") && compacted.get() >= 0) {
                RoleRecords read = (RoleRecords) result;
                List<RawRecord> kept = read.records().stream()
                        .filter(r -> r.offset() != compacted.get())
                        .toList();
                return new RoleRecords(kept, read.nextOffset());
            }
            return method.getName().equals("initEpoch") ? answerLost((RoleEpoch) result) : result;
        });
    }

    /** The commit lands, every send was acknowledged, the EndTxn's answer is lost (KafkaRoleEpoch's unknown). */
    private RoleEpoch answerLost(RoleEpoch epoch) {
        return proxy(RoleEpoch.class, (method, args) -> {
            Object result = call(epoch, method, args);
            if (method.getName().equals("transact") && loseAnswer.getAndSet(false)) {
                @SuppressWarnings("unchecked")
                List<RecordMetadata> written = (List<RecordMetadata>) result;
                // The next holder takes over after the lease ran out and writes its lease (same key);
                // the segment rolled and the cleaner removed the older lease.
                RoleEpoch next = successor.initEpoch(ROLE);
                opened.add(next);
                long now = runtime.clock().millis();
                GrantLease.commit(next, successor, ROLE, TOPIC, MemberId.of("b"), now);
                compacted.set(written.get(0).offset());
                throw new CommitOutcomeUnknownException(
                        "the commit of a transaction of role " + ROLE + " got no answer until the lease deadline",
                        null,
                        written);
            }
            return result;
        });
    }
}
