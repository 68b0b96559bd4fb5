package io.krabka.streams.coordination.test.memory;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Utils;

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
 *
 * <h2>Faults per operation</h2>
 * On a cluster built with a {@link CoordinationRuntime} ({@link #InMemoryCluster(CoordinationRuntime)},
 * typically a {@link ManualRuntime}), record timestamps come from the runtime's wall clock
 * and injected faults take the runtime's time: {@link #latency} per {@link Operation},
 * {@link #slowInitProducerId} and {@link #timeOutInitProducerId}, a
 * {@link #freezeCoordinator frozen transaction coordinator} of a role, a
 * {@link #freezePartition dead partition leader}, and a partition
 * {@link #holdVisibility held behind an open transaction}. Each returns a {@link Fault}
 * whose {@link Fault#close()} ends it. A delayed or blocked call sleeps on the runtime
 * <em>outside</em> the cluster's lock, so other members' calls go on meanwhile. A blocked
 * call waits until its fault ends (then it goes through, as a Kafka client's internal
 * retries would) or until its timeout passes (then it fails with a
 * {@link CoordinationTimeoutException}, as the Kafka transport reports an unanswered
 * call). The timeout is the one the call was given where it has one (a describe's),
 * else the {@link #operationTimeout(Duration) operation timeout}, 30 s by default as
 * {@link KafkaCoordinationTransport#DEFAULT_OPERATION_TIMEOUT}.
 */
public final class InMemoryCluster {

    private static final short ROLLOVER_AT = Short.MAX_VALUE - 1;

    private final Map<TopicPartition, List<RawRecord>> logs = new HashMap<>();
    private final Map<String, Coordinator> coordinators = new HashMap<>();
    // The producer ids whose transactions wrote to each partition (Kafka's active producers).
    private final Map<TopicPartition, Set<Long>> producersOf = new HashMap<>();
    private final Map<String, Map<TopicPartition, OffsetAndMetadata>> groupOffsets = new HashMap<>();
    // Partition counts of the topics created or written so far; the coordination topic's come from its TopicSpec.
    private final Map<String, Integer> topicPartitions = new HashMap<>();
    // The headers of the records that had any, per partition and offset: coordination records have none.
    private final Map<TopicPartition, Map<Long, Headers>> headersOf = new HashMap<>();
    private final List<AppendListener> appendListeners = new CopyOnWriteArrayList<>();
    /** The key {@link #watchedKey} decoded last, and what it decoded to (or why it could not). */
    private byte[] watchedKeyBytes;

    private CoordinationKey watchedKey;
    private RuntimeException watchedKeyProblem;
    /** The key and value {@link #watchedNews} decoded last, and the news they made. */
    private CoordinationKey watchedNewsKey;

    private byte[] watchedNewsValue;
    private RoleNews watchedNews;

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
    private boolean vouchForWatchers = true;
    // Per partition, no read that stopped before this offset is vouched for: the end of the
    // last commit whose watchers heard of it before readers could see it (under
    // delayVisibility), or the end when stalled watchers went on (stallWatchers).
    private final Map<TopicPartition, Long> toldEarlyUntil = new HashMap<>();
    private final Map<TopicPartition, List<long[]>> invisible = new HashMap<>();

    private final CoordinationRuntime runtime;
    /** Wakes reads waiting on a {@link ManualRuntime}; null on other runtimes, whose reads wait on the monitor. */
    private final ManualRuntime.Signal news;
    /** Wakes calls blocked by a fault when one ends, on a {@link ManualRuntime}. */
    private final ManualRuntime.Signal faultsLifted;

    private Duration operationTimeout = KafkaCoordinationTransport.DEFAULT_OPERATION_TIMEOUT;
    private final Map<Operation, Duration> latencies = new EnumMap<>(Operation.class);
    private final Map<String, Duration> initLatencies = new HashMap<>();
    private final Map<String, Boolean> initTimeouts = new HashMap<>();
    private final Set<String> frozenCoordinators = new HashSet<>();
    private final Set<String> movingCoordinators = new HashSet<>();
    private final Set<TopicPartition> frozenPartitions = new HashSet<>();
    /** Per role, the producer id and epoch {@link #cutOffHolder} cut off: transactions of it and earlier epochs fail. */
    private final Map<String, long[]> cutOffEpochs = new HashMap<>();
    /** Per held partition, the offset at which its open transaction starts: readers see nothing from there. */
    private final Map<TopicPartition, Long> heldAt = new HashMap<>();
    // While stallWatchers faults are open: how many, and the news held for the watchers meanwhile, in order.
    private int watcherStalls;
    private final List<HeldNews> stalledNews = new ArrayList<>();

    /** How often a blocked call looks whether its fault ended, on a runtime that is no {@link ManualRuntime}. */
    private static final Duration RECHECK = Duration.ofMillis(100);

    /** A cluster whose record timestamps come from {@code timestamps} (epoch milliseconds); faults take real time. */
    public InMemoryCluster(LongSupplier timestamps) {
        this.timestamps = timestamps;
        this.runtime = CoordinationRuntime.shared();
        this.news = null;
        this.faultsLifted = null;
    }

    /**
     * A cluster on {@code runtime}: record timestamps from its wall clock, and injected
     * latencies and blocked calls on its time. On a {@link ManualRuntime} a read that waits
     * for news suspends on simulated time too, and wakes at the append that brings it.
     */
    public InMemoryCluster(CoordinationRuntime runtime) {
        this.runtime = runtime;
        this.timestamps = () -> runtime.clock().millis();
        this.news = runtime instanceof ManualRuntime manual ? manual.newSignal() : null;
        this.faultsLifted = runtime instanceof ManualRuntime manual ? manual.newSignal() : null;
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

    /** InitProducerId with its faults: a latency, a slow or timed-out call, a frozen coordinator. */
    Epoch initProducerId(String transactionalId) {
        String what = "initializing the epoch of role " + transactionalId;
        enter(Operation.INIT_PRODUCER_ID, what, List.of(transactionalId), List.of(), null);
        Duration slow;
        Boolean timesOut;
        Duration timeout;
        synchronized (this) {
            slow = initLatencies.get(transactionalId);
            timesOut = initTimeouts.get(transactionalId);
            timeout = operationTimeout;
        }
        if (slow != null) {
            pause(slow, what);
        }
        if (timesOut != null) {
            if (timesOut) {
                // It reached the coordinator and fenced the old epoch; only its answer is lost.
                bumpEpoch(transactionalId);
            }
            pause(timeout, what);
            throw new CoordinationTimeoutException(
                    what + " got no answer from the cluster in time: injected timeout of " + timeout
                            + (timesOut ? " (the coordinator did bump the epoch)" : ""));
        }
        return bumpEpoch(transactionalId);
    }

    private synchronized Epoch bumpEpoch(String transactionalId) {
        Coordinator coordinator = coordinators.get(transactionalId);
        if (coordinator == null || coordinator.epoch >= ROLLOVER_AT) {
            coordinator = new Coordinator(nextProducerId++, (short) 0);
            coordinators.put(transactionalId, coordinator);
        } else {
            coordinator.epoch++;
        }
        coordinator.state = "Empty";
        coordinator.transactionStartedAt = -1;
        return new Epoch(
                transactionalId, coordinator.producerId, coordinator.epoch, transactionVersion, featureGeneration);
    }

    /** DescribeTransactions of some ids with its faults; {@code timeout} null for the operation timeout. */
    Map<String, Optional<ProducerState>> describe(Collection<String> transactionalIds, Duration timeout) {
        enter(
                Operation.DESCRIBE,
                "describing the transactions of " + transactionalIds,
                transactionalIds,
                List.of(),
                timeout);
        synchronized (this) {
            Map<String, Optional<ProducerState>> described = new java.util.LinkedHashMap<>();
            transactionalIds.forEach(id -> described.put(id, describe(id)));
            return described;
        }
    }

    /** A topic other than {@code excluded} that a transaction of {@code producerId} wrote to, as DescribeProducers would show. */
    synchronized Optional<String> topicWrittenBy(long producerId, String excluded) {
        return producersOf.entrySet().stream()
                .filter(written -> !written.getKey().topic().equals(excluded)
                        && written.getValue().contains(producerId))
                .map(written -> written.getKey().topic())
                .sorted()
                .findFirst();
    }

    synchronized Optional<ProducerState> describe(String transactionalId) {
        Coordinator coordinator = coordinators.get(transactionalId);
        return coordinator == null
                ? Optional.empty()
                : Optional.of(new ProducerState(
                        coordinator.producerId,
                        coordinator.epoch,
                        coordinator.state,
                        coordinator.transactionStartedAt));
    }

    synchronized long append(TopicPartition partition, byte[] key, byte[] value) {
        return append(partition, timestamps.getAsLong(), key, value);
    }

    /** A registration or its tombstone, with the faults of {@link Operation#REGISTER}. */
    long register(TopicPartition partition, byte[] key, byte[] value) {
        enter(Operation.REGISTER, "writing a registration to " + partition, List.of(), List.of(partition), null);
        return append(partition, key, value);
    }

    /** A transaction with the faults of {@link Operation#COMMIT}, then {@link #commit}. */
    List<RecordMetadata> transact(
            Epoch epoch,
            List<ProducerRecord<byte[], byte[]>> records,
            ConsumedOffsets consumed,
            java.util.function.Function<ProducerRecord<byte[], byte[]>, TopicPartition> partitioner) {
        List<TopicPartition> partitions =
                records.stream().map(partitioner).distinct().toList();
        synchronized (this) {
            if (cutOff(epoch)) {
                throw new CoordinationTimeoutException("a transaction of role " + epoch.transactionalId
                        + " got no answer from the cluster in time: its holder is cut off from the cluster (injected)");
            }
        }
        enter(
                Operation.COMMIT,
                "a transaction of role " + epoch.transactionalId,
                List.of(epoch.transactionalId),
                partitions,
                null);
        return commit(epoch, records, consumed, partitioner);
    }

    synchronized long append(TopicPartition partition, long timestamp, byte[] key, byte[] value) {
        List<RawRecord> log = logs.computeIfAbsent(partition, p -> new ArrayList<>());
        long offset = endOffset(partition);
        log.add(new RawRecord(offset, timestamp, key, value));
        wakeReaders();
        if (!heldAt.containsKey(partition)) {
            tellWatchers(partition, key, value);
        }
        return offset;
    }

    /** A record appended while the watchers were stalled, told when the stall ends. */
    private record HeldNews(TopicPartition partition, byte[] key, byte[] value) {}

    /** Tells every watcher of an append, or holds it while the watchers are stalled. Holds the lock. */
    private void tellWatchers(TopicPartition partition, byte[] key, byte[] value) {
        if (watcherStalls > 0) {
            stalledNews.add(new HeldNews(partition, key, value));
            return;
        }
        for (AppendListener listener : appendListeners) {
            listener.appended(partition, key, value);
        }
    }

    /** Commits a transaction atomically, or throws {@link FencedException} and writes nothing. */
    synchronized List<RecordMetadata> commit(
            Epoch epoch,
            List<ProducerRecord<byte[], byte[]>> records,
            ConsumedOffsets consumed,
            java.util.function.Function<ProducerRecord<byte[], byte[]>, TopicPartition> partitioner) {
        Coordinator coordinator = coordinators.get(epoch.transactionalId);
        if (coordinator == null || coordinator.producerId != epoch.producerId || coordinator.epoch != epoch.epoch) {
            throw new FencedException("the epoch " + epoch.producerId + "/" + epoch.epoch + " of "
                    + epoch.transactionalId + " is superseded by "
                    + (coordinator == null ? "nothing" : coordinator.producerId + "/" + coordinator.epoch));
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
            throw new CommitOutcomeUnknownException(
                    "injected: the commit of " + epoch.transactionalId + " got no answer (" + lost + ")", null);
        }
        List<RecordMetadata> written = new ArrayList<>();
        List<TopicPartition> touched = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : records) {
            TopicPartition partition = partitioner.apply(record);
            if (visibilityDelayMillis > 0 && !touched.contains(partition)) {
                invisible
                        .computeIfAbsent(partition, p -> new ArrayList<>())
                        .add(new long[] {endOffset(partition), timestamps.getAsLong() + visibilityDelayMillis});
            }
            written.add(appendRecord(partition, record));
            if (!touched.contains(partition)) {
                touched.add(partition);
            }
        }
        for (TopicPartition partition : touched) {
            // The commit marker takes an offset and no record, as in Kafka.
            logs.get(partition).add(null);
            producersOf.computeIfAbsent(partition, p -> new HashSet<>()).add(epoch.producerId);
            if (visibilityDelayMillis > 0) {
                // Its watchers hear of it now, before any reader can see it.
                toldEarlyUntil.merge(partition, endOffset(partition), Math::max);
            }
        }
        if (!consumed.isEmpty()) {
            groupOffsets
                    .computeIfAbsent(consumed.group().groupId(), g -> new HashMap<>())
                    .putAll(consumed.offsets());
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
        wakeReaders();
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

    /**
     * As {@link #onAppend}, and the end offset of {@code partition} at that moment, under
     * the cluster's lock: the listener hears of every record at that offset or later (one
     * held back by a visibility fault when the fault ends, as readers see it).
     */
    synchronized long onAppendFrom(TopicPartition partition, AppendListener listener) {
        appendListeners.add(listener);
        return endOffset(partition);
    }

    /**
     * Whether this cluster's transports vouch, as the Kafka transport does, that a role's
     * watchers miss no news ({@code CoordinationTransport.tellsEverythingSince}): contenders
     * then skip their fallback reads as they do on Kafka, and a standby that waits for its
     * turn lives on the news of renewals alone. On by default; off, every standby reads its
     * role at least every five seconds, which hid three faults from the simulations until
     * they ran as on Kafka. Never in effect while {@link #delayVisibility} is on, where
     * watchers hear of a commit before readers see it (Kafka's {@code read_committed}
     * watcher never does).
     */
    public synchronized InMemoryCluster vouchForWatchers(boolean vouch) {
        this.vouchForWatchers = vouch;
        return this;
    }

    /**
     * See {@link #vouchForWatchers}: whether a read of {@code partition} up to {@code fromOffset}
     * missed nothing its watchers will be told of. Never while commits are delayed, nor for a
     * read that stopped before a commit whose watchers were told of it early: when it shows,
     * nobody is told again.
     */
    synchronized boolean vouchesForWatchers(TopicPartition partition, long fromOffset) {
        return vouchForWatchers
                && visibilityDelayMillis == 0
                && watcherStalls == 0
                && fromOffset >= toldEarlyUntil.getOrDefault(partition, 0L);
    }

    /**
     * {@link CoordinationCodec#decodeKey} of an appended key, decoded once for all the
     * watchers that hear of it (a simulation has a watcher per role of every member, crashed
     * ones too, and decoding was a tenth of a seed's CPU); throws as it does.
     */
    synchronized CoordinationKey watchedKey(byte[] key) {
        if (watchedKeyBytes == null || !Arrays.equals(watchedKeyBytes, key)) {
            watchedKeyBytes = key.clone();
            watchedKey = null;
            watchedKeyProblem = null;
            try {
                watchedKey = CoordinationCodec.decodeKey(key);
            } catch (RuntimeException malformed) {
                watchedKeyProblem = malformed;
            }
        }
        if (watchedKeyProblem != null) {
            throw watchedKeyProblem;
        }
        return watchedKey;
    }

    /**
     * {@link RoleNews#of} an appended record, made once for all the watchers of its role
     * that hear of it (every member's, crashed ones too), as {@link #watchedKey} decodes its
     * key once: the news is immutable, and decoding the value for each watcher was a
     * fiftieth of a seed's CPU.
     */
    synchronized RoleNews watchedNews(CoordinationKey key, byte[] value) {
        if (watchedNews == null || !key.equals(watchedNewsKey) || !Arrays.equals(watchedNewsValue, value)) {
            watchedNewsKey = key;
            watchedNewsValue = value == null ? null : value.clone();
            watchedNews = RoleNews.of(key, value);
        }
        return watchedNews;
    }

    void removeAppendListener(AppendListener listener) {
        appendListeners.remove(listener);
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions, or adds partitions to it, as
     * Kafka's CreateTopics and CreatePartitions do. A topic nobody created has one partition
     * from the first time it is written or asked about, as on a broker with
     * {@code auto.create.topics.enable} and {@code num.partitions=1}.
     *
     * @throws IllegalArgumentException when {@code partitions} is below 1 or below the topic's count
     */
    public synchronized void createTopic(String topic, int partitions) {
        int existing = topicPartitions.getOrDefault(topic, 0);
        if (partitions < 1 || partitions < existing) {
            throw new IllegalArgumentException("topic " + topic + " cannot have " + partitions + " partitions"
                    + (existing > 0 ? ": it has " + existing + " and partitions are never removed" : ""));
        }
        topicPartitions.put(topic, partitions);
        wakeReaders();
    }

    /** The partitions of {@code topic}, as a consumer's metadata shows them; one for a topic nobody created. */
    public synchronized List<PartitionInfo> partitionsFor(String topic) {
        int count = partitionCount(topic);
        List<PartitionInfo> infos = new ArrayList<>(count);
        for (int partition = 0; partition < count; partition++) {
            infos.add(new PartitionInfo(topic, partition, null, null, null));
        }
        return infos;
    }

    private int partitionCount(String topic) {
        return topicPartitions.computeIfAbsent(topic, t -> 1);
    }

    /** Where a record goes: its own partition, else Kafka's default for a key (murmur2), else partition 0. */
    synchronized TopicPartition partitionOf(ProducerRecord<byte[], byte[]> record) {
        if (record.partition() != null) {
            return new TopicPartition(record.topic(), record.partition());
        }
        int count = partitionCount(record.topic());
        int partition = record.key() == null ? 0 : Utils.toPositive(Utils.murmur2(record.key())) % count;
        return new TopicPartition(record.topic(), partition);
    }

    /**
     * Writes {@code record} as a producer outside any transaction does: visible at once,
     * headers kept, partitioned as {@link #partitionOf} says.
     */
    public synchronized RecordMetadata produce(ProducerRecord<byte[], byte[]> record) {
        return appendRecord(partitionOf(record), record);
    }

    /** Appends {@code record} to {@code partition} with its headers, stamped now unless it has a timestamp; holds the lock. */
    private RecordMetadata appendRecord(TopicPartition partition, ProducerRecord<byte[], byte[]> record) {
        long timestamp = record.timestamp() != null ? record.timestamp() : timestamps.getAsLong();
        long offset = append(partition, timestamp, record.key(), record.value());
        Header[] headers = record.headers().toArray();
        if (headers.length > 0) {
            headersOf.computeIfAbsent(partition, p -> new HashMap<>()).put(offset, new RecordHeaders(headers));
        }
        return new RecordMetadata(
                partition,
                offset,
                0,
                timestamp,
                record.key() == null ? -1 : record.key().length,
                record.value() == null ? -1 : record.value().length);
    }

    /**
     * A consumer of this cluster in group {@code groupId}, as a {@code read_committed}
     * consumer with manual assignment sees it: it reads what committed transactions and
     * plain writes left, and the offsets transactions committed for the group.
     */
    public InMemoryConsumer consumer(String groupId) {
        return new InMemoryConsumer(this, groupId);
    }

    /** What one fetch got: the records, and the offset the reader goes on from (past commit markers at the end). */
    record Fetch(List<ConsumerRecord<byte[], byte[]>> records, long next) {}

    /** The committed records of {@code partition} from {@code fromOffset}, at most {@code max}, as a consumer gets them. */
    synchronized Fetch fetch(TopicPartition partition, long fromOffset, int max) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        List<RawRecord> log = logs.getOrDefault(partition, List.of());
        Map<Long, Headers> headers = headersOf.getOrDefault(partition, Map.of());
        long end = visibleEnd(partition);
        long offset = Math.max(0, fromOffset);
        for (; offset < end && out.size() < max; offset++) {
            RawRecord record = log.get((int) offset);
            if (record != null) {
                out.add(new ConsumerRecord<>(
                        partition.topic(),
                        partition.partition(),
                        offset,
                        record.timestamp(),
                        TimestampType.CREATE_TIME,
                        record.key() == null ? -1 : record.key().length,
                        record.value() == null ? -1 : record.value().length,
                        record.key(),
                        record.value(),
                        headers.getOrDefault(offset, new RecordHeaders()),
                        Optional.empty()));
            }
        }
        return new Fetch(out, Math.max(offset, fromOffset));
    }

    /** Where {@code read_committed} readers of {@code partition} stop now. */
    synchronized long visibleEndOffset(TopicPartition partition) {
        return visibleEnd(partition);
    }

    /**
     * Waits until {@code condition} holds, checked under the cluster's lock after every
     * write, commit and topic change, at most {@code timeout}; whether it holds. On a
     * {@link ManualRuntime} the wait takes simulated time.
     */
    public boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        if (news == null) {
            synchronized (this) {
                long deadline = System.nanoTime() + timeout.toNanos();
                while (!condition.getAsBoolean()) {
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(this, remaining);
                }
                return true;
            }
        }
        long deadline = runtime.nanoTime() + timeout.toNanos();
        for (; ; ) {
            long remaining;
            synchronized (this) {
                if (condition.getAsBoolean()) {
                    return true;
                }
                remaining = deadline - runtime.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
            }
            news.await(Duration.ofNanos(remaining));
        }
    }

    /** The input offsets that committed transactions stored for consumer group {@code groupId}. */
    public synchronized Map<TopicPartition, OffsetAndMetadata> committedOffsets(String groupId) {
        return Map.copyOf(groupOffsets.getOrDefault(groupId, Map.of()));
    }

    RoleRecords read(TopicPartition partition, long fromOffset, Duration maxWait) throws InterruptedException {
        enter(Operation.READ, "reading " + partition, null, List.of(partition), null);
        if (news == null) {
            return readWaitingOnTheMonitor(partition, fromOffset, maxWait);
        }
        // On simulated time: wait for news suspended on the runtime, never holding the lock.
        long deadline = runtime.nanoTime() + maxWait.toNanos();
        for (; ; ) {
            long remaining;
            synchronized (this) {
                remaining = deadline - runtime.nanoTime();
                if (visibleEnd(partition) > fromOffset || remaining <= 0) {
                    return collect(partition, fromOffset);
                }
            }
            news.await(Duration.ofNanos(remaining));
        }
    }

    private synchronized RoleRecords readWaitingOnTheMonitor(
            TopicPartition partition, long fromOffset, Duration maxWait) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (visibleEnd(partition) <= fromOffset) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return new RoleRecords(List.of(), Math.max(fromOffset, visibleEnd(partition)));
            }
            wait(Math.max(1, remaining / 1_000_000));
        }
        return collect(partition, fromOffset);
    }

    private synchronized RoleRecords collect(TopicPartition partition, long fromOffset) {
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

    /** Where readers stop: a held partition's open transaction, the first record of a transaction still invisible, else the log's end. */
    private long visibleEnd(TopicPartition partition) {
        Long open = heldAt.get(partition);
        if (open != null) {
            return Math.min(open, endOffset(partition));
        }
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
        return logs.getOrDefault(partition, List.of()).stream()
                .filter(r -> r != null)
                .toList();
    }

    /** The kinds of call a transport makes, for {@link #latency}. */
    public enum Operation {
        /** A read of a partition (with or without a wait for news). */
        READ,
        /** InitProducerId: building an epoch, which fences the earlier ones. */
        INIT_PRODUCER_ID,
        /** A transaction: its records and its commit. */
        COMMIT,
        /** DescribeTransactions: what the coordinator reports for a role. */
        DESCRIBE,
        /** A registration or its tombstone (a plain write to the role's partition). */
        REGISTER
    }

    /** An injected fault; {@link #close()} ends it (again does nothing). */
    public interface Fault extends AutoCloseable {
        @Override
        void close();
    }

    /** How long a call blocked by a fault waits before it fails with a timeout, where it was given none shorter. */
    public synchronized InMemoryCluster operationTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("an operation timeout must be positive, not " + timeout);
        }
        this.operationTimeout = timeout;
        return this;
    }

    /** The timeout of calls blocked by a fault (30 s unless set). */
    public synchronized Duration operationTimeout() {
        return operationTimeout;
    }

    /**
     * Makes every {@code operation} call, of every member, take {@code latency} on the
     * runtime before it takes effect (a commit is applied, a read sees the log, at the end).
     */
    public synchronized Fault latency(Operation operation, Duration latency) {
        latencies.put(operation, latency);
        return fault(() -> latencies.remove(operation, latency));
    }

    /** Makes every InitProducerId of {@code role} take {@code latency} before it bumps the epoch. */
    public synchronized Fault slowInitProducerId(Role role, Duration latency) {
        initLatencies.put(role.name(), latency);
        return fault(() -> initLatencies.remove(role.name(), latency));
    }

    /**
     * Makes every InitProducerId of {@code role} get no answer: it waits the operation
     * timeout, then fails with the {@link CoordinationTimeoutException} the Kafka transport
     * reports then. With {@code applied} the coordinator did bump the epoch first (fencing
     * the holder), as when only the answer was lost; without, nothing changed.
     */
    public synchronized Fault timeOutInitProducerId(Role role, boolean applied) {
        initTimeouts.put(role.name(), applied);
        return fault(() -> initTimeouts.remove(role.name(), applied));
    }

    /**
     * Freezes the transaction coordinator of {@code role}: its InitProducerId, describes and
     * transactions block until the fault ends or their timeout passes, then fail as timeouts.
     * A blocked transaction fails before its commit is sent (on transaction version 2 the
     * partition leaders verify it with the coordinator first), so nothing of it is written.
     */
    public synchronized Fault freezeCoordinator(Role role) {
        frozenCoordinators.add(role.name());
        return fault(() -> frozenCoordinators.remove(role.name()));
    }

    /**
     * Cuts the current holder of {@code role} off the cluster: every transaction of the
     * role's producer epoch as it is now fails at once as a timeout, writing nothing, as
     * when its requests stop reaching the brokers. Its renewals and guarded writes fail,
     * so its lease runs out on the clock; no call waits (unlike {@link #freezeCoordinator}),
     * so the end shows as soon as the clock passes the deadline. A later InitProducerId (the
     * next challenge of the role, by any member) gets an epoch whose transactions go through.
     * A role that has no epoch yet is not affected.
     */
    public synchronized Fault cutOffHolder(Role role) {
        Coordinator coordinator = coordinators.get(role.name());
        if (coordinator == null) {
            return fault(() -> {});
        }
        long[] epoch = {coordinator.producerId, coordinator.epoch};
        cutOffEpochs.put(role.name(), epoch);
        return fault(() -> cutOffEpochs.remove(role.name(), epoch));
    }

    /** Whether {@code epoch} is one {@link #cutOffHolder} cut off. Holds the lock. */
    private boolean cutOff(Epoch epoch) {
        long[] cut = cutOffEpochs.get(epoch.transactionalId);
        return cut != null && epoch.producerId == cut[0] && epoch.epoch <= cut[1];
    }

    /**
     * Kills the broker that coordinates the transactions of {@code role}; a new coordinator
     * answers once the returned fault is closed (the controller fenced the dead broker and
     * another took over). Until then its InitProducerId, describes and transactions block as
     * under {@link #freezeCoordinator}; a producer's blocked call then goes through, since the
     * producer looks the coordinator up again. A describe that began while the coordinator was
     * dead does not: Kafka's Admin keeps sending it to the broker it looked up, so it fails
     * only at its own timeout, though a describe begun after the move is answered at once.
     */
    public synchronized Fault moveCoordinator(Role role) {
        movingCoordinators.add(role.name());
        return fault(() -> movingCoordinators.remove(role.name()));
    }

    /**
     * Kills the leader of {@code partition} (see {@link InMemoryCoordinationTransport#partition}):
     * reads of it, registrations on it and transactions that write to it block until the
     * fault ends or their timeout passes, then fail as timeouts; nothing of them is written.
     */
    public synchronized Fault freezePartition(TopicPartition partition) {
        frozenPartitions.add(partition);
        return fault(() -> frozenPartitions.remove(partition));
    }

    /**
     * Holds {@code partition} behind a transaction left open at its current end: readers
     * ({@code read_committed}) see nothing from that offset on, and watchers hear of nothing
     * appended there, until the returned fault is closed; then they see it all and watchers
     * hear of it. Writes go on as usual. {@link #delayVisibility} is the time-based variant
     * for every partition (each commit is hidden for a while after it, and watchers hear of
     * it at once); this one is per partition and lasts until released.
     */
    public synchronized Fault holdVisibility(TopicPartition partition) {
        heldAt.putIfAbsent(partition, endOffset(partition));
        return fault(() -> {
            Long from = heldAt.remove(partition);
            if (from == null) {
                return;
            }
            List<RawRecord> log = logs.getOrDefault(partition, List.of());
            for (int i = (int) (long) from; i < log.size(); i++) {
                RawRecord record = log.get(i);
                if (record != null) {
                    tellWatchers(partition, record.key(), record.value());
                }
            }
            wakeReaders();
        });
    }

    /**
     * Stalls every watcher, as a failed poll stalls the Kafka transport's watcher for its
     * back-off (100 ms doubling to 10 s): news of what is appended from now on is held and
     * told, in order, when the fault ends, as its consumer goes on from its position. No
     * read is vouched for meanwhile ({@link #vouchForWatchers}). Afterwards only reads from
     * the end at that moment are: stricter than Kafka's watcher for reads that stopped
     * during the stall (it vouches again from the first record it sees after the failure,
     * the first one held), looser in vouching at once, before it saw any record. Every
     * member's watchers stall together, where on Kafka each member's does on its own.
     */
    public synchronized Fault stallWatchers() {
        watcherStalls++;
        return fault(() -> {
            if (--watcherStalls > 0) {
                return;
            }
            List<HeldNews> held = new ArrayList<>(stalledNews);
            stalledNews.clear();
            held.forEach(news -> tellWatchers(news.partition(), news.key(), news.value()));
            logs.keySet().forEach(partition -> toldEarlyUntil.merge(partition, endOffset(partition), Math::max));
        });
    }

    private Fault fault(Runnable end) {
        return new Fault() {
            private boolean ended;

            @Override
            public void close() {
                synchronized (InMemoryCluster.this) {
                    if (ended) {
                        return;
                    }
                    ended = true;
                    end.run();
                }
                if (faultsLifted != null) {
                    faultsLifted.signalAll();
                }
            }
        };
    }

    /**
     * The faults of one call, before it takes effect: its latency, then a wait while a
     * frozen coordinator or dead partition blocks it, failing as a timeout after
     * {@code timeout} (null: the operation timeout). Never under the cluster's lock: a
     * sleeping call must not hold up every other one.
     */
    private void enter(
            Operation operation,
            String what,
            Collection<String> transactionalIds,
            Collection<TopicPartition> partitions,
            Duration timeout) {
        if (Thread.holdsLock(this)) {
            throw new IllegalStateException("a fault would sleep holding the in-memory cluster's lock");
        }
        Duration latency;
        Duration limit;
        String stranded = null;
        synchronized (this) {
            latency = latencies.get(operation);
            limit = timeout == null || timeout.compareTo(operationTimeout) > 0 ? operationTimeout : timeout;
            if (operation == Operation.DESCRIBE) {
                stranded = transactionalIds.stream()
                        .filter(movingCoordinators::contains)
                        .findFirst()
                        .orElse(null);
            }
        }
        if (latency != null) {
            pause(latency, what);
        }
        if (stranded != null) {
            pause(limit, what);
            throw new CoordinationTimeoutException(
                    what + " got no answer from the cluster in time: it was sent to the dead "
                            + "transaction coordinator of " + stranded + " (injected) and waited " + limit);
        }
        long deadline = runtime.nanoTime() + limit.toNanos();
        for (; ; ) {
            String blockedBy;
            synchronized (this) {
                blockedBy = blockedBy(operation, transactionalIds, partitions);
            }
            if (blockedBy == null) {
                return;
            }
            long remaining = deadline - runtime.nanoTime();
            if (remaining <= 0) {
                throw new CoordinationTimeoutException(
                        what + " got no answer from the cluster in time: " + blockedBy + " (injected) for " + limit);
            }
            try {
                if (faultsLifted != null) {
                    faultsLifted.await(Duration.ofNanos(remaining));
                } else {
                    runtime.sleep(Duration.ofNanos(Math.min(remaining, RECHECK.toNanos())));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new io.krabka.streams.coordination.CoordinationException(what + " was interrupted", e);
            }
        }
    }

    /** What blocks a call, or null. Holds the lock. */
    private String blockedBy(
            Operation operation, Collection<String> transactionalIds, Collection<TopicPartition> partitions) {
        if (operation != Operation.READ && operation != Operation.REGISTER) {
            for (String id : transactionalIds) {
                if (frozenCoordinators.contains(id)) {
                    return "the transaction coordinator of " + id + " is frozen";
                }
                if (movingCoordinators.contains(id)) {
                    return "the transaction coordinator of " + id + " is dead and not replaced yet";
                }
            }
        }
        if (operation != Operation.INIT_PRODUCER_ID && operation != Operation.DESCRIBE) {
            for (TopicPartition partition : partitions) {
                if (frozenPartitions.contains(partition)) {
                    return "the leader of " + partition + " is dead";
                }
            }
        }
        return null;
    }

    private void pause(Duration duration, String what) {
        try {
            runtime.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new io.krabka.streams.coordination.CoordinationException(what + " was interrupted", e);
        }
    }

    /** Something became visible: wake waiting reads. Holds the lock. */
    private void wakeReaders() {
        notifyAll();
        if (news != null) {
            news.signalAll();
        }
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
