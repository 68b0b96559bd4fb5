package io.krabka.streams.coordination.memory;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * A model of the parts of a Kafka cluster the coordination module uses, for fast
 * tests: partitioned logs where a transaction becomes visible only when it commits
 * (and takes one more offset for its marker, as in Kafka), and a transaction
 * coordinator that fences superseded epochs.
 *
 * <p>Epochs follow Kafka 4.x: InitProducerId bumps the epoch; under transaction
 * version 2 every commit bumps it too; an epoch at or past 32 766 rolls over to a new
 * producer id at epoch 0. A producer keeps the transaction version it last learned
 * until it "reconnects" ({@link #reconnectProducers()}), as a real producer only
 * re-reads the cluster's features from a new connection's ApiVersions response. Thread-safe.
 */
public final class InMemoryCluster {

    private static final short ROLLOVER_AT = Short.MAX_VALUE - 1;

    private final Map<TopicPartition, List<RawRecord>> logs = new HashMap<>();
    private final Map<String, Coordinator> coordinators = new HashMap<>();
    private final Map<String, Map<TopicPartition, OffsetAndMetadata>> groupOffsets = new HashMap<>();
    private final List<AppendListener> appendListeners = new CopyOnWriteArrayList<>();

    /** Hears every appended record. */
    @FunctionalInterface
    interface AppendListener {
        void appended(TopicPartition partition, byte[] key, byte[] value);
    }
    private final LongSupplier timestamps;
    private short transactionVersion = 2;
    private long featureGeneration;
    private long nextProducerId = 1000;
    // Transactions committed while visibility is delayed: per partition, the first offset each
    // wrote and when readers may see it. Until then they hold back every later record.
    private long visibilityDelayMillis;
    private final Map<TopicPartition, List<long[]>> invisible = new HashMap<>();

    /** A cluster whose record timestamps come from {@code timestamps} (epoch milliseconds). */
    public InMemoryCluster(LongSupplier timestamps) {
        this.timestamps = timestamps;
    }

    /** A cluster stamping records with the system clock. */
    public InMemoryCluster() {
        this(System::currentTimeMillis);
    }

    /** Opens a transport for one member on this cluster. */
    public InMemoryCoordinationTransport transport(TopicSpec topic) {
        return new InMemoryCoordinationTransport(this, topic);
    }

    /** Sets the finalized transaction version; running producers follow only after {@link #reconnectProducers()}. */
    public synchronized void setTransactionVersion(short version) {
        if (version != 1 && version != 2) {
            throw new IllegalArgumentException("transaction.version must be 1 or 2, not " + version);
        }
        transactionVersion = version;
    }

    /** Makes every producer open a new connection, and so learn the current transaction version at its next commit. */
    public synchronized void reconnectProducers() {
        featureGeneration++;
    }

    /** Hands the next producer id out below the previous ones, as a moved coordinator may (kafka-facts fact 4). */
    public synchronized void lowerNextProducerId(long producerId) {
        nextProducerId = producerId;
    }

    /**
     * Makes every transaction committed from now on invisible to readers for {@code delay}
     * after its commit (on this cluster's timestamp clock), holding back every later record of
     * its partitions meanwhile, as {@code read_committed} is held back behind another role's
     * transaction that is still open on the partition. The coordinator reports the commit at
     * once. {@link Duration#ZERO} stops delaying new commits; those already delayed stay so.
     */
    public synchronized void delayVisibility(Duration delay) {
        visibilityDelayMillis = delay.toMillis();
    }

    /**
     * What becomes of a commit whose answer never reaches its producer (a commit that timed
     * out on every retry until the lease deadline). Its producer then gets a
     * {@link CommitOutcomeUnknownException} and can run no more transactions.
     */
    public enum LostCommit {
        /** The transaction committed: its records are visible, the coordinator reports CompleteCommit. */
        APPLIED,
        /** The coordinator aborted it (its transaction timeout): nothing is visible, CompleteAbort at the next epoch. */
        ABORTED,
        /** The coordinator has not decided: nothing is visible yet, the transaction stays Ongoing. */
        PENDING
    }

    private final Map<String, LostCommit> lostCommits = new HashMap<>();

    /** Makes the next commit of {@code role} that passes the fence check lose its answer, with {@code outcome}. */
    public synchronized void loseNextCommit(Role role, LostCommit outcome) {
        lostCommits.put(role.name(), outcome);
    }

    /** Forgets a transactional id, as {@code transactional.id.expiration.ms} does after a long idle time. */
    public synchronized void expire(Role role) {
        coordinators.remove(role.name());
    }

    synchronized long featureGeneration() {
        return featureGeneration;
    }

    synchronized Epoch initProducerId(String transactionalId) {
        Coordinator coordinator = coordinators.get(transactionalId);
        if (coordinator == null || coordinator.epoch >= ROLLOVER_AT) {
            coordinator = new Coordinator(nextProducerId++, (short) 0);
            coordinators.put(transactionalId, coordinator);
        } else {
            coordinator.epoch++;
        }
        coordinator.state = "Empty";
        coordinator.transactionStartedAt = -1;
        return new Epoch(transactionalId, coordinator.producerId, coordinator.epoch, transactionVersion, featureGeneration);
    }

    synchronized Optional<ProducerState> describe(String transactionalId) {
        Coordinator coordinator = coordinators.get(transactionalId);
        return coordinator == null ? Optional.empty()
                : Optional.of(new ProducerState(coordinator.producerId, coordinator.epoch, coordinator.state,
                        coordinator.transactionStartedAt));
    }

    synchronized long append(TopicPartition partition, byte[] key, byte[] value) {
        return append(partition, timestamps.getAsLong(), key, value);
    }

    synchronized long append(TopicPartition partition, long timestamp, byte[] key, byte[] value) {
        List<RawRecord> log = logs.computeIfAbsent(partition, p -> new ArrayList<>());
        long offset = endOffset(partition);
        log.add(new RawRecord(offset, timestamp, key, value));
        notifyAll();
        for (AppendListener listener : appendListeners) {
            listener.appended(partition, key, value);
        }
        return offset;
    }

    /** Commits a transaction atomically, or throws {@link FencedException} and writes nothing. */
    synchronized List<RecordMetadata> commit(Epoch epoch, List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed,
            java.util.function.Function<ProducerRecord<byte[], byte[]>, TopicPartition> partitioner) {
        Coordinator coordinator = coordinators.get(epoch.transactionalId);
        if (coordinator == null || coordinator.producerId != epoch.producerId || coordinator.epoch != epoch.epoch) {
            throw new FencedException("the epoch " + epoch.producerId + "/" + epoch.epoch + " of " + epoch.transactionalId
                    + " is superseded by " + (coordinator == null ? "nothing" : coordinator.producerId + "/" + coordinator.epoch));
        }
        LostCommit lost = lostCommits.remove(epoch.transactionalId);
        if (lost == LostCommit.APPLIED) {
            commit(epoch, records, consumed, partitioner);
        } else if (lost == LostCommit.ABORTED) {
            coordinator.state = "CompleteAbort";
            coordinator.transactionStartedAt = timestamps.getAsLong();
            coordinator.epoch++;
        } else if (lost == LostCommit.PENDING) {
            coordinator.state = "Ongoing";
            coordinator.transactionStartedAt = timestamps.getAsLong();
        }
        if (lost != null) {
            throw new CommitOutcomeUnknownException("injected: the commit of " + epoch.transactionalId + " got no answer ("
                    + lost + ")", null);
        }
        List<RecordMetadata> written = new ArrayList<>();
        List<TopicPartition> touched = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : records) {
            TopicPartition partition = partitioner.apply(record);
            long timestamp = record.timestamp() != null ? record.timestamp() : timestamps.getAsLong();
            if (visibilityDelayMillis > 0 && !touched.contains(partition)) {
                invisible.computeIfAbsent(partition, p -> new ArrayList<>())
                        .add(new long[] {endOffset(partition), timestamps.getAsLong() + visibilityDelayMillis});
            }
            long offset = append(partition, timestamp, record.key(), record.value());
            written.add(new RecordMetadata(partition, offset, 0, timestamp,
                    record.key() == null ? -1 : record.key().length, record.value() == null ? -1 : record.value().length));
            if (!touched.contains(partition)) {
                touched.add(partition);
            }
        }
        for (TopicPartition partition : touched) {
            // The commit marker takes an offset and no record, as in Kafka.
            logs.get(partition).add(null);
        }
        if (!consumed.isEmpty()) {
            groupOffsets.computeIfAbsent(consumed.group().groupId(), g -> new HashMap<>()).putAll(consumed.offsets());
        }
        coordinator.state = "CompleteCommit";
        coordinator.transactionStartedAt = timestamps.getAsLong();
        if (epoch.transactionVersion >= 2) {
            if (coordinator.epoch + 1 >= ROLLOVER_AT) {
                coordinator.producerId = nextProducerId++;
                coordinator.epoch = 0;
            } else {
                coordinator.epoch++;
            }
            epoch.producerId = coordinator.producerId;
            epoch.epoch = coordinator.epoch;
        }
        // After the EndTxn the producer adopts the features it learned from new connections.
        if (epoch.featureGeneration < featureGeneration) {
            epoch.featureGeneration = featureGeneration;
            if (epoch.transactionVersion < 2 && transactionVersion >= 2) {
                // A client upgrading to version 2 bumps its epoch once more.
                coordinator.epoch++;
                epoch.epoch = coordinator.epoch;
            }
            epoch.transactionVersion = transactionVersion;
        }
        notifyAll();
        return written;
    }

    /**
     * Calls {@code listener} with the partition, key and value of every record appended from now
     * on, under the cluster's lock: it must not block or call back into the cluster.
     *
     * @return a handle that removes the listener
     */
    AutoCloseable onAppend(AppendListener listener) {
        appendListeners.add(listener);
        return () -> appendListeners.remove(listener);
    }

    /** The input offsets that committed transactions stored for consumer group {@code groupId}. */
    public synchronized Map<TopicPartition, OffsetAndMetadata> committedOffsets(String groupId) {
        return Map.copyOf(groupOffsets.getOrDefault(groupId, Map.of()));
    }

    synchronized RoleRecords read(TopicPartition partition, long fromOffset, Duration maxWait) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (visibleEnd(partition) <= fromOffset) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return new RoleRecords(List.of(), Math.max(fromOffset, visibleEnd(partition)));
            }
            wait(Math.max(1, remaining / 1_000_000));
        }
        List<RawRecord> out = new ArrayList<>();
        List<RawRecord> log = logs.get(partition);
        long end = visibleEnd(partition);
        for (int i = (int) Math.max(0, fromOffset); i < end; i++) {
            if (log.get(i) != null) {
                out.add(log.get(i));
            }
        }
        return new RoleRecords(out, end);
    }

    /** Where readers stop: the first record of a transaction still invisible, else the log's end. */
    private long visibleEnd(TopicPartition partition) {
        List<long[]> held = invisible.get(partition);
        if (held != null) {
            long now = timestamps.getAsLong();
            held.removeIf(transaction -> transaction[1] <= now);
            if (!held.isEmpty()) {
                return held.get(0)[0];
            }
        }
        return endOffset(partition);
    }

    synchronized long endOffset(TopicPartition partition) {
        List<RawRecord> log = logs.get(partition);
        return log == null ? 0 : log.size();
    }

    /** The committed records of a partition, for assertions. */
    public synchronized List<RawRecord> records(TopicPartition partition) {
        return logs.getOrDefault(partition, List.of()).stream().filter(r -> r != null).toList();
    }

    private static final class Coordinator {
        long producerId;
        short epoch;
        String state = "Empty";
        long transactionStartedAt = -1;

        Coordinator(long producerId, short epoch) {
            this.producerId = producerId;
            this.epoch = epoch;
        }
    }

    /** One producer's (producer id, epoch) and the transaction version it last learned. */
    static final class Epoch {
        final String transactionalId;
        long producerId;
        short epoch;
        short transactionVersion;
        long featureGeneration;

        Epoch(String transactionalId, long producerId, short epoch, short transactionVersion, long featureGeneration) {
            this.transactionalId = transactionalId;
            this.producerId = producerId;
            this.epoch = epoch;
            this.transactionVersion = transactionVersion;
            this.featureGeneration = featureGeneration;
        }
    }
}
