package io.krabka.streams.coordination.test.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * A commit made under {@code delayVisibility(d)} is told to watchers at once, before a
 * reader can see it, and nobody is told again when it shows (Kafka's read_committed
 * watcher tells it then). So the in-memory transport must not vouch for a read that
 * stopped before such a commit, even once the delay is off; once a read passed it, it
 * vouches again. Found by review: it vouched as soon as no delay was set.
 */
class VouchAfterDelayedCommitTest {

    @Test
    void doesNotVouchWhileACommitWatchersWereToldOfIsStillInvisible() throws Exception {
        AtomicLong now = new AtomicLong(1_000_000);
        InMemoryCluster cluster = new InMemoryCluster(now::get);
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(1));
        Role role = Role.of("vouched-after-delay");
        transport.register(role, MemberId.of("a"), now.get());
        List<RoleNews> told = new CopyOnWriteArrayList<>();
        AutoCloseable watch = transport.watch(role, told::add);
        try {
            var epoch = transport.initEpoch(role);
            cluster.delayVisibility(Duration.ofSeconds(5));
            epoch.transact(List.of(new ProducerRecord<>(
                    transport.topic(),
                    RolePartitioner.partitionFor(role, 1),
                    CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                    CoordinationCodec.encodeValue(
                            new CoordinationRecord.Lease(MemberId.of("a"), 1, (short) 0, 1, 2)))));
            cluster.delayVisibility(Duration.ZERO);
            int toldBefore = told.size();
            assertThat(toldBefore)
                    .as("the watcher heard of the delayed commit at once")
                    .isPositive();

            // A pass clears its news flag and reads: the commit is not visible yet.
            RoleRecords read = transport.read(role, 0, Duration.ZERO);
            boolean leaseVisible = read.records().stream()
                    .anyMatch(r -> r.value() != null
                            && r.key() != null
                            && CoordinationCodec.decodeKey(r.key()).equals(CoordinationKey.lease(role)));
            assertThat(leaseVisible).as("the delayed lease is not visible yet").isFalse();

            now.addAndGet(10_000);
            RoleRecords later = transport.read(role, read.nextOffset(), Duration.ZERO);
            assertThat(later.records())
                    .as("the lease shows once its delay passed")
                    .isNotEmpty();
            assertThat(told.size()).as("no watcher is told when it shows").isEqualTo(toldBefore);

            // So a contender that read up to read.nextOffset() missed news its watcher will never tell:
            assertThat(transport.tellsEverythingSince(role, read.nextOffset()))
                    .as("vouches for a read that stopped before a commit its watcher was told of before the read,"
                            + " and will not be told of again when it shows")
                    .isFalse();
            assertThat(transport.tellsEverythingSince(role, later.nextOffset()))
                    .as("a read past that commit")
                    .isTrue();
        } finally {
            watch.close();
        }
    }
}
