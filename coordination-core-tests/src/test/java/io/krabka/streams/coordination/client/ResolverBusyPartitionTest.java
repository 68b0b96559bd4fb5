package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCluster.LostCommit;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * A review found: CommitOutcomeResolver.findLease reads until a read comes back empty. On a
 * partition that other roles keep writing to (each read finds something new), it reads on
 * as long as they do, holding the leadership's lock and the writer's thread, even past the
 * lease's known place, where the answer is already decided.
 */
class ResolverBusyPartitionTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final int TRAFFIC = 2_000;

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final Role role = Role.of("controller");

    @Test
    void aLostCommitIsResolvedWithABoundedNumberOfReadsOnABusyPartition() throws Exception {
        AtomicBoolean busy = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        CoordinationTransport memory = cluster.transport(TOPIC);
        int partition = RolePartitioner.partitionFor(role, TOPIC.partitions());
        CoordinationTransport transport = proxy(CoordinationTransport.class, (method, args) -> {
            if (method.getName().equals("read") && busy.get() && reads.incrementAndGet() <= TRAFFIC) {
                // Another role's renewal landed on the partition since the last read.
                cluster.produce(new ProducerRecord<>(
                        TOPIC.name(), partition, ("other-" + reads.get()).getBytes(StandardCharsets.UTF_8), new byte[] {
                            1
                        }));
            }
            return call(memory, method, args);
        });
        Leadership held = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock)
                .acquire(role, MemberId.of("a"), Duration.ofSeconds(5));
        cluster.loseNextCommit(role, LostCommit.PENDING);
        busy.set(true);

        assertThatThrownBy(held::renew).isInstanceOf(CommitOutcomeUnknownException.class);
        assertThat(reads.get())
                .as("reads of the resolver while the partition stays busy")
                .isLessThan(100);
    }
}
