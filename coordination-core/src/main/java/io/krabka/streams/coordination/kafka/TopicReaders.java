package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The transport's {@code read_committed} consumers: the reader every role's reads share
 * (and up to three more while those reads queue), and, when built with a supplier, one of
 * its own for describes of many roles. Every read holds its consumer for one short slice
 * at a time ({@link ReadToEnd}).
 */
final class TopicReaders {

    /**
     * The longest one read holds the member's one consumer before it lets another role's
     * read go first: a partition whose leader is gone must not hold up the roles on the
     * healthy ones for a whole operation timeout (their renewals wait behind their reads).
     */
    static final Duration READ_SLICE = Duration.ofMillis(500);
    /** The slice of a read of a partition that did not answer the previous one in time. */
    static final Duration SICK_SLICE = Duration.ofMillis(100);

    private final PinnedTopic topic;
    private final String topicName;
    private final Duration timeout;
    private final Consumer<byte[], byte[]> reader;
    private final ReentrantLock readerLock = new ReentrantLock(true);
    /**
     * The readers of the roles' reads: partition p goes to lane p % {@value #READER_LANES}.
     * Lane 0 is the shared reader; another lane's consumer is built from the describe
     * readers' supplier the first time a read of its partitions finds the shared reader
     * busy. A member whose reads do not queue keeps one reader; one whose reads do (many
     * roles starting at once: each read holds its reader for an end-offset lookup and a
     * fetch) reads up to this many partitions at a time.
     */
    static final int READER_LANES = 4;

    private final Lane[] lanes = new Lane[READER_LANES];

    /** One reader and its lock; the consumer of a lane other than 0 is null until built. */
    private static final class Lane {
        final ReentrantLock lock;
        volatile @Nullable Consumer<byte[], byte[]> consumer;

        Lane(ReentrantLock lock, @Nullable Consumer<byte[], byte[]> consumer) {
            this.lock = lock;
            this.consumer = consumer;
        }
    }
    // Reads for describes of many roles (readAll), so they never queue behind the
    // contenders' reads on the shared reader; built on first use, null without a supplier.
    private volatile @Nullable Supplier<Consumer<byte[], byte[]>> describeReaders;
    private @Nullable Consumer<byte[], byte[]> describeReader;
    private final ReentrantLock describeReaderLock = new ReentrantLock();
    // Partitions whose last read did not learn the end offset within a slice, until one
    // does; while one is, a single read at a time probes it and the others fail at once.
    private final Set<Integer> unanswering = ConcurrentHashMap.newKeySet();
    // Set once the readers close: no lane or describe reader is built after that, since
    // the close would never see it (a read between slices while a partition is unanswering).
    private volatile boolean closed;
    private final Map<Integer, ReentrantLock> probes = new ConcurrentHashMap<>();

    TopicReaders(PinnedTopic topic, String topicName, Consumer<byte[], byte[]> reader, Duration timeout) {
        this.topic = topic;
        this.topicName = topicName;
        this.reader = reader;
        lanes[0] = new Lane(readerLock, reader);
        for (int lane = 1; lane < READER_LANES; lane++) {
            lanes[lane] = new Lane(new ReentrantLock(true), null);
        }
        this.timeout = timeout;
    }

    /** Lets {@link #readAll} read with a consumer of its own, built from {@code describeReaders} on first use. */
    void describeWith(Supplier<Consumer<byte[], byte[]>> describeReaders) {
        this.describeReaders = describeReaders;
    }

    /** {@link KafkaCoordinationTransport#read}. */
    RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        TopicPartition partition = topic.partitionOf(role);
        String operation = "reading role " + role + " from " + partition + " at offset " + fromOffset;
        long started = System.nanoTime();
        long waitUntil = started + maxWait.toNanos();
        long giveUpAt = started + timeout.toNanos();
        ReadToEnd toEnd = new ReadToEnd(Map.of(partition, fromOffset), timeout);
        ReentrantLock probe = null;
        try {
            probe = probeIfUnanswering(partition, null);
            while (true) {
                // Between slices too: a read of a partition that no longer exists would
                // otherwise wait out the whole operation timeout before anyone noticed.
                topic.checkIdentity();
                if (System.nanoTime() - giveUpAt > 0 && !toEnd.done()) {
                    throw new org.apache.kafka.common.errors.TimeoutException(
                            !toEnd.endsKnown()
                                    ? "the partition's end offset was not known within " + timeout
                                    : "the partition's end " + toEnd.end(partition) + " was not reached within "
                                            + timeout);
                }
                // One consumer serves every role of this member: hold it for one short
                // slice at a time, so a slow partition or a role waiting for news never
                // blocks another's read for long.
                Lane lane = laneOf(partition);
                // laneOf gives a lane whose consumer is built (lane 0's is the shared reader).
                Consumer<byte[], byte[]> laneReader = Objects.requireNonNull(lane.consumer);
                lane.lock.lock();
                try {
                    // Again once it has the reader: the reads that began together before any
                    // slice went unanswered (a role per thread, all at once) would otherwise
                    // each wait out the whole timeout, and hold every pass thread meanwhile.
                    probe = probeIfUnanswering(partition, probe);
                    ReadToEnd.focus(laneReader, Set.of(partition));
                    Duration slice = unanswering.contains(partition.partition()) ? SICK_SLICE : READ_SLICE;
                    long sliceEnd = Math.min(System.nanoTime() + slice.toNanos(), giveUpAt);
                    boolean knewEnd = toEnd.endsKnown();
                    boolean reached = toEnd.slice(laneReader, sliceEnd);
                    if (!toEnd.endsKnown()) {
                        unanswering.add(partition.partition());
                        continue;
                    }
                    if (!knewEnd) {
                        unanswering.remove(partition.partition());
                    }
                    if (!reached) {
                        continue;
                    }
                    long next = toEnd.next(partition);
                    if (next != fromOffset) {
                        // Caught up with the end it found: what it read is the answer.
                        return new RoleRecords(toEnd.records(partition), next);
                    }
                    // At the end from the start: wait for news.
                    List<RawRecord> records = toEnd.records(partition);
                    // slice() just read this partition, so it stays assigned; it may have paused
                    // it, and this poll fetches it alone.
                    ReadToEnd.focus(laneReader, Set.of(partition));
                    ReadToEnd.seek(laneReader, partition, next, true);
                    long remaining = waitUntil - System.nanoTime();
                    if (remaining <= 0) {
                        return new RoleRecords(records, next);
                    }
                    ReadToEnd.collect(
                            laneReader
                                    .poll(Duration.ofNanos(Math.min(remaining, ReadToEnd.POLL_STEP.toNanos())))
                                    .records(partition),
                            records);
                    if (!records.isEmpty()) {
                        return new RoleRecords(records, laneReader.position(partition, timeout));
                    }
                } finally {
                    lane.lock.unlock();
                }
            }
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        } finally {
            if (probe != null) {
                probe.unlock();
            }
        }
    }

    /**
     * The probe of {@code partition} this read holds: {@code held}, or none while the
     * partition answers. Every role on a partition without a leader would otherwise wait
     * out its whole timeout on a shared pass thread, and queue for the reader between
     * slices: one read finds out when it answers again, the others give up now.
     */
    private @Nullable ReentrantLock probeIfUnanswering(TopicPartition partition, @Nullable ReentrantLock held) {
        if (held != null || !unanswering.contains(partition.partition())) {
            return held;
        }
        ReentrantLock probe = probes.computeIfAbsent(partition.partition(), p -> new ReentrantLock());
        if (!probe.tryLock()) {
            throw new CoordinationTimeoutException("the last read of " + partition + " got no answer within "
                    + READ_SLICE.toMillis() + " ms, and another read waits for it now");
        }
        return probe;
    }

    /**
     * The lane of {@code partition}: its own once built, or built now when the shared reader
     * is busy or some partition does not answer, else lane 0. While one does not, its probe
     * holds its lane slice after slice: the other lanes' partitions must not queue behind it
     * on the shared reader.
     */
    private Lane laneOf(TopicPartition partition) {
        Lane lane = lanes[partition.partition() % READER_LANES];
        Supplier<Consumer<byte[], byte[]>> more = describeReaders;
        if (lane.consumer != null || more == null || !readerLock.isLocked() && unanswering.isEmpty()) {
            return lane.consumer != null ? lane : lanes[0];
        }
        synchronized (lane) {
            if (lane.consumer == null) {
                if (closed) {
                    // Lane 0's reader is closed too: the read fails as any read after the close.
                    return lanes[0];
                }
                lane.consumer = more.get();
            }
        }
        return lane;
    }

    /**
     * Reads every partition with the one consumer in one go: one end-offset lookup for
     * all of them, then polls that fetch them together, instead of a lookup and a fetch
     * per partition. Like {@link #read}, it holds the consumer for one short slice at a
     * time and gives up after the operation timeout.
     */
    Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
        if (fromOffsets.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, Role> roles = new LinkedHashMap<>();
        Map<TopicPartition, Long> from = new LinkedHashMap<>();
        fromOffsets.forEach((role, offset) -> {
            TopicPartition partition = topic.partitionOf(role);
            if (roles.putIfAbsent(partition, role) != null) {
                throw new IllegalArgumentException("roles " + roles.get(partition) + " and " + role + " share "
                        + partition + ": pass one role per partition");
            }
            from.put(partition, offset);
        });
        String operation = "reading " + roles.size() + " partitions of " + topicName;
        boolean ownReader = describeReaders != null;
        ReentrantLock lock = ownReader ? describeReaderLock : readerLock;
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        ReadToEnd toEnd = new ReadToEnd(from, timeout);
        try {
            while (true) {
                topic.checkIdentity();
                if (System.nanoTime() - giveUpAt > 0) {
                    throw new org.apache.kafka.common.errors.TimeoutException(
                            !toEnd.endsKnown()
                                    ? "the partitions' end offsets were not known within " + timeout
                                    : toEnd.behind().size() + " partitions were not read to their ends within "
                                            + timeout);
                }
                // One slice at a time, as in read: the shared reader serves every role's reads.
                lock.lock();
                try {
                    long sliceEnd = Math.min(System.nanoTime() + READ_SLICE.toNanos(), giveUpAt);
                    if (toEnd.slice(ownReader ? describeReader() : reader, sliceEnd)) {
                        Map<Role, RoleRecords> read = new LinkedHashMap<>();
                        roles.forEach((partition, role) ->
                                read.put(role, new RoleRecords(toEnd.records(partition), toEnd.next(partition))));
                        return read;
                    }
                } finally {
                    lock.unlock();
                }
            }
        } catch (Exception e) {
            throw KafkaErrors.translate(operation, e);
        }
    }

    /** The consumer of {@link #readAll}; called with its lock held. */
    private Consumer<byte[], byte[]> describeReader() {
        if (describeReader == null) {
            if (closed) {
                throw new IllegalStateException("the readers of " + topicName + " are closed");
            }
            describeReader = Objects.requireNonNull(
                            describeReaders, "readAll reads with its own consumer only with a supplier")
                    .get();
        }
        return describeReader;
    }

    /** Closes the readers of the roles' reads side by side, each once no read holds it, giving each {@code within} to finish. */
    void closeReader(Duration within) {
        closed = true;
        Map<String, Runnable> closes = new LinkedHashMap<>();
        for (int index = 0; index < READER_LANES; index++) {
            Lane lane = lanes[index];
            closes.put("reader-" + index, () -> {
                lane.lock.lock();
                try {
                    Consumer<byte[], byte[]> consumer;
                    // laneOf builds under this monitor after checking closed: either it built
                    // before and this sees it, or it sees closed and builds nothing.
                    synchronized (lane) {
                        consumer = lane.consumer;
                    }
                    if (consumer != null) {
                        consumer.close(CloseOptions.timeout(within));
                    }
                } finally {
                    lane.lock.unlock();
                }
            });
        }
        CoordinationException failed = ClientClose.inParallel(closes, within.plusMillis(250));
        if (failed != null) {
            throw failed;
        }
    }

    /** Closes the describe reader, if one was built, once no read holds it. */
    void closeDescribeReader(Duration within) {
        closed = true;
        describeReaderLock.lock();
        try {
            if (describeReader != null) {
                describeReader.close(CloseOptions.timeout(within));
            }
        } finally {
            describeReaderLock.unlock();
        }
    }
}
