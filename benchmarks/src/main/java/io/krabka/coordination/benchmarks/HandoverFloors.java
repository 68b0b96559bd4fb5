package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The floor of each step of a graceful handover on this broker, with plain Kafka clients
 * built from the library's own client settings (so the same {@code retry.backoff.ms},
 * acks and isolation), one step at a time, nothing else running: what the handover's path
 * cannot go below however the library schedules it.
 */
final class HandoverFloors {

    /**
     * The steps a handover goes through, in order (the others are measured for comparison): the holder's registration
     * tombstone, the standby's wake-up and read, its InitProducerId behind the release's transaction, the describe of
     * its epoch, and the grant's transaction.
     */
    static final List<String> PATH = BenchReport.HANDOVER_PATH;

    static final String INIT_BEHIND_COMMIT = "InitProducerId right after another producer's commit returned";
    static final String ONE_RECORD_TX = "one-record transaction (begin, send, commit)";
    static final String COMMIT_VISIBLE = "commit returned -> a read_committed watcher sees the record";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final byte[] VALUE = new byte[64];

    private final KafkaTestCluster cluster;
    private final Map<String, List<Long>> steps = new LinkedHashMap<>();

    HandoverFloors(KafkaTestCluster cluster) {
        this.cluster = cluster;
    }

    /** The steps in path order, each with its samples in nanoseconds. */
    Map<String, List<Long>> measure(int warmups, int runs) throws Exception {
        String topic = "bench-floors";
        cluster.createTopic(topic, 1);
        TopicPartition partition = new TopicPartition(topic, 0);
        Map<String, Object> connection = cluster.connection();
        try (KafkaProducer<byte[], byte[]> registrar = new KafkaProducer<>(
                        KafkaCoordinationTransport.registrarSettings(connection, TIMEOUT),
                        new ByteArraySerializer(),
                        new ByteArraySerializer());
                PartitionWatcher watcher = new PartitionWatcher(connection, partition, "bench-floors-watcher");
                KafkaConsumer<byte[], byte[]> reader = consumer(connection);
                Admin admin = Admin.create(KafkaCoordinationTransport.adminSettings(connection, TIMEOUT))) {
            reader.assign(Set.of(partition));
            for (int i = 0; i < warmups + runs; i++) {
                boolean keep = i >= warmups;
                Role role = Role.of("floors-" + i);
                // The holder: a producer of the role that holds the epoch and has committed a lease.
                KafkaProducer<byte[], byte[]> holder = transactional(connection, role);
                holder.initTransactions();
                CompletableFuture<Long> leaseVisible = watcher.next();
                transaction(holder, topic);
                leaseVisible.get(30, TimeUnit.SECONDS); // so the watcher's next wake-up is step 1's append
                // 1. The release's first act: a plain append, acknowledged (acks=all).
                CompletableFuture<Long> seen = watcher.next();
                long t0 = System.nanoTime();
                registrar.send(new ProducerRecord<>(topic, 0, VALUE, null)).get();
                long acked = System.nanoTime();
                // 2. A watcher's long poll returns it.
                long woken = seen.get(30, TimeUnit.SECONDS);
                // 3. A read of the partition: its end offset, then a fetch up to it.
                long r0 = System.nanoTime();
                long end = reader.endOffsets(Set.of(partition)).get(partition);
                reader.seek(partition, Math.max(0, end - 1));
                while (reader.position(partition) < end) {
                    reader.poll(Duration.ofMillis(100));
                }
                long read = System.nanoTime();
                // 4. InitProducerId of a standby's producer built and connected beforehand, on an idle coordinator.
                KafkaProducer<byte[], byte[]> standby = transactional(connection, role);
                standby.partitionsFor(topic);
                long i0 = System.nanoTime();
                standby.initTransactions();
                long inited = System.nanoTime();
                // 5. DescribeTransactions: the epoch the grant's lease carries.
                admin.describeTransactions(List.of(role.name())).all().get();
                long described = System.nanoTime();
                // 6. The grant: a one-record transaction, committed.
                CompletableFuture<Long> grantVisible = watcher.next();
                transaction(standby, topic);
                long committed = System.nanoTime();
                grantVisible.get(30, TimeUnit.SECONDS);
                holder.close(Duration.ZERO);
                // 7. A release's transaction then InitProducerId at once: the wait behind the coordinator's
                //    markers (CONCURRENT_TRANSACTIONS, retried at the library's backoff).
                KafkaProducer<byte[], byte[]> next = transactional(connection, role);
                next.partitionsFor(topic);
                CompletableFuture<Long> visible = watcher.next();
                transaction(standby, topic);
                long c0 = System.nanoTime();
                next.initTransactions();
                long behind = System.nanoTime();
                // 8. The commit's markers: from commitTransaction's return to a read_committed watcher seeing the
                // record.
                long markers = visible.get(30, TimeUnit.SECONDS);
                standby.close(Duration.ZERO);
                next.close(Duration.ZERO);
                if (keep) {
                    add("a plain append (acks=all) acknowledged", acked - t0);
                    add("its watcher's long poll returns it, after the ack", woken - acked);
                    add("a read of the partition (end offset, fetch)", read - r0);
                    add("InitProducerId, pre-connected producer, idle coordinator", inited - i0);
                    add("DescribeTransactions", described - inited);
                    add(ONE_RECORD_TX, committed - described);
                    add(INIT_BEHIND_COMMIT, behind - c0);
                    add(COMMIT_VISIBLE, markers - c0);
                }
            }
        }
        System.err.printf("  done: handover floors (%d samples per step)%n", runs);
        return steps;
    }

    private void add(String step, long nanos) {
        steps.computeIfAbsent(step, s -> new ArrayList<>()).add(nanos);
    }

    private static void transaction(KafkaProducer<byte[], byte[]> producer, String topic) throws Exception {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, 0, VALUE, VALUE));
        producer.commitTransaction();
    }

    private static KafkaProducer<byte[], byte[]> transactional(Map<String, Object> connection, Role role) {
        return new KafkaProducer<>(
                KafkaCoordinationTransport.transactionalSettings(connection, role, TIMEOUT, TIMEOUT),
                new ByteArraySerializer(),
                new ByteArraySerializer());
    }

    private static KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> connection) {
        return new KafkaConsumer<>(
                KafkaCoordinationTransport.readerSettings(connection),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
    }
}
