package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every member has Write on the coordination topic. One that copies an open transaction's lease
 * record (a read_uncommitted consumer sees it) and appends it plainly made an aborted write whose
 * commit answer was lost return as written: the resolver took the lease's bytes for the lease,
 * and the log's word won over a coordinator that showed the abort (an outside review). The two
 * now disagree (unknown), and where the lease's offset is known only that offset counts.
 */
class ForgedLeaseCopyOutcomeTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(5));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport forger = cluster.transport(TOPIC);
    private final AtomicBoolean armed = new AtomicBoolean();

    @AfterEach
    void close() throws Exception {
        forger.close();
        memory.close();
        runtime.close();
    }

    @Test
    void anAbortedWriteWhoseLeaseAnotherMemberCopiedIsNotReportedAsWritten() {
        cluster.createTopic("out", 1);
        CoordinationClient client = new CoordinationClient(holderTransport(), CONFIG, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        held.renew();

        armed.set(true);
        assertThatThrownBy(() -> held.write(new ProducerRecord<>("out", bytes("k"), bytes("command-1"))))
                .as("an aborted write whose lease record another member copied into the log")
                .isInstanceOf(CommitOutcomeUnknownException.class);
        assertThat(cluster.records(new TopicPartition("out", 0)))
                .as("topic out")
                .isEmpty();
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memory, method, args);
            return method.getName().equals("initEpoch") ? forgedOnWrite((RoleEpoch) result) : result;
        });
    }

    /** On the armed guarded write: a member appends a copy of its lease record, and the commit's answer is lost (aborted). */
    private RoleEpoch forgedOnWrite(RoleEpoch epoch) {
        return proxy(RoleEpoch.class, (method, args) -> {
            if (method.getName().equals("transact") && armed.get()) {
                @SuppressWarnings("unchecked")
                List<ProducerRecord<byte[], byte[]>> batch = (List<ProducerRecord<byte[], byte[]>>) args[0];
                if (batch.size() > 1) {
                    armed.set(false);
                    ProducerRecord<byte[], byte[]> lease = batch.get(0);
                    forger.appendRaw(ROLE, lease.key(), lease.value());
                    cluster.loseNextCommit(ROLE, InMemoryCluster.LostCommit.ABORTED);
                }
            }
            return call(epoch, method, args);
        });
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
