package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.SendQueueFullException;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member's hold on one role, from the grant until it is fenced or closed.
 *
 * <p>Every write goes through the role's transactional producer, in a transaction that
 * also carries the role's lease record. So a guarded write is durable in a quorum
 * before {@link #write} returns, renews the lease, and can only commit while this
 * member still holds the newest epoch: the broker, not this object, decides. When it
 * does not, the write throws {@link FencedException} and nothing of it is visible.
 *
 * <h2>The epoch a lease carries</h2>
 * Each lease record carries the (producer id, epoch) the coordinator will report once
 * its transaction commits, so a third party can compare the two
 * ({@link LeadershipStatus#current()}). Under transaction version 2 every commit moves
 * the epoch by one; under version 1 it stays. The holder learns the step from a
 * describe after its own grant, then predicts; it writes the last known value instead,
 * and describes after the commit, whenever a prediction could be too large: after an
 * abort, near an epoch rollover, or when its producer opened a connection and so may
 * have learned a new transaction version. A value too small only makes
 * {@code current()} briefly false; a value too large is never written knowingly.
 *
 * <p>Thread-safe; writes run one at a time.
 */
public final class Leadership implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    /** Past this epoch the next commit may roll over to a new producer id: stop predicting. */
    private static final short ROLLOVER_GUARD = Short.MAX_VALUE - 8;
    private static final int MAX_CONFIRMS = 3;
    private static final Duration FIRST_RETRY = Duration.ofMillis(50);
    private static final Duration LAST_RETRY = Duration.ofSeconds(1);
    /** How long a release waits for the coordinator to complete its tombstone's transaction. */
    private static final Duration COMPLETION_WAIT = Duration.ofMillis(500);
    /** How many describes of a release follow each other at once (each takes a round trip). */
    private static final int COMPLETION_AT_ONCE = 5;
    /** The waits between the later describes of a release: from the first, doubling to the last. */
    private static final Duration COMPLETION_FIRST_WAIT = Duration.ofMillis(1);
    private static final Duration COMPLETION_LAST_WAIT = Duration.ofMillis(64);

    private final CoordinationClient client;
    private final CoordinationTransport transport;
    private final RoleEpoch epoch;
    private final Role role;
    private final MemberId member;
    private final long grantedAt;
    private final int partition;
    private long term = -1;
    // Where a lease of this leadership could first be: after the last one committed (or,
    // before the grant, after the role state the challenge decided on). Guarded by the lock.
    private long leaseSearchFrom;

    // What the coordinator reports after this member's last commit, and how a commit moves it.
    private long knownProducerId;
    private short knownEpoch;
    private int step = -1;
    private boolean exact;
    private long featureGeneration;
    // The producer's feature generation at the start of its previous transaction: a
    // transaction's version is fixed when the previous one ends, so a step learned from
    // a transaction is trusted only if nothing changed since the previous one began.
    private long previousStart;
    // Whether the newest lease carried a prediction, so equals what the coordinator reports.
    private boolean lastLeasePredicted;
    // Whether knownEpoch is what the coordinator reports now, as far as this member's own
    // transactions go: false after a failed transaction (its abort may have moved the
    // epoch) or a describe that failed.
    private boolean knownAccurate = true;

    // Volatile, and the token published whole: renewAt() and token() never wait for the
    // lock, which a write stuck on an unresponsive cluster may hold for a whole timeout
    // (the expiry watchdog and the contender read them meanwhile).
    private volatile long lastLeaseAt;
    private volatile FencingToken published;
    // Volatile, not guarded by the lock: a watchdog asks expired() while a renewal blocks.
    private volatile long deadline;
    // Changed without the lock, so a watchdog or a release can end a leadership whose
    // write blocks; the first end wins and later ones change nothing.
    private final AtomicReference<State> state = new AtomicReference<>(State.ACTIVE);
    // Set by close() before it waits for a write in flight: no new guarded write starts.
    private volatile boolean releasing;

    // Group commit: sends waiting for a transaction, whether a flush is under way and on
    // which thread, and how many records were accepted and not yet written (the bound of
    // SendBatching.maxQueuedRecords). Guarded by sendLock, always the innermost lock.
    private final Object sendLock = new Object();
    private final ArrayDeque<QueuedSend> queued = new ArrayDeque<>();
    private boolean flushing;
    private Thread flusher;
    private int unwritten;

    /** One {@link #send}, waiting for its transaction. */
    private record QueuedSend(ProducerRecord<byte[], byte[]> record, CompletableFuture<RecordMetadata> result,
            long queuedAtNanos) {
    }

    /** Where a leadership is in its life. Only {@link #ACTIVE} can write. */
    public enum State {
        /** Granted and not ended. */
        ACTIVE,
        /** A write found a newer epoch for the role: the cluster rejects this leadership's writes. */
        FENCED,
        /** The lease deadline passed without a renewal and the holder's contender ended it. */
        EXPIRED,
        /** The role's producer failed beyond recovery; nothing says a newer epoch exists. */
        FAILED,
        /** Closed (released) or abandoned by this member. */
        RELEASED;

        /** The end cause this state stands for; empty for {@link #ACTIVE}. */
        public Optional<LeadershipEndCause> endCause() {
            return switch (this) {
                case ACTIVE -> Optional.empty();
                case FENCED -> Optional.of(LeadershipEndCause.FENCED);
                case EXPIRED -> Optional.of(LeadershipEndCause.EXPIRED);
                case FAILED -> Optional.of(LeadershipEndCause.FAILED);
                case RELEASED -> Optional.of(LeadershipEndCause.RELEASED);
            };
        }
    }

    private Leadership(CoordinationClient client, CoordinationTransport transport, RoleEpoch epoch, MemberId member,
            ProducerState initial, long leaseSearchFrom) {
        this.client = client;
        this.transport = transport;
        this.epoch = epoch;
        this.role = epoch.role();
        this.member = member;
        this.grantedAt = client.now().toEpochMilli();
        this.partition = RolePartitioner.partitionFor(role, transport.partitionCount());
        this.knownProducerId = initial.producerId();
        this.knownEpoch = initial.producerEpoch();
        this.published = FencingToken.NO_EPOCH;
        this.featureGeneration = epoch.featureGeneration();
        this.previousStart = featureGeneration;
        this.leaseSearchFrom = leaseSearchFrom;
    }

    /**
     * Writes the grant lease with the epoch described right after InitProducerId (a
     * race there can only make this write fail), takes its offset as the term, and, with
     * {@code confirm}, learns the step and writes a confirming lease so {@code current()}
     * turns true (otherwise {@link #confirm()} does that later).
     *
     * <p>A grant whose commit got no answer until its lease deadline is resolved like any
     * write ({@link #write(List)}): one that committed is a grant, with its lease record's
     * offset as the term, even though its producer cannot go on (the leadership is then
     * already {@link State#FAILED}); one that was aborted throws {@link FencedException};
     * one that neither the coordinator nor the log decide throws
     * {@link CommitOutcomeUnknownException}.
     *
     * @param leaseSearchFrom an offset of the role's partition at or before the grant's
     *     lease record: where the challenge's decision had read to
     */
    static Leadership grant(CoordinationClient client, CoordinationTransport transport, RoleEpoch epoch, MemberId member,
            boolean confirm, long leaseSearchFrom) {
        ProducerState initial = transport.describeEpoch(epoch.role()).orElseThrow(() -> new RetriableCoordinationException(
                "the coordinator reports no epoch for role " + epoch.role() + " right after InitProducerId", null));
        Leadership leadership = new Leadership(client, transport, epoch, member, initial, leaseSearchFrom);
        List<RecordMetadata> grant = leadership.transact(List.of(), ConsumedOffsets.NONE, false);
        synchronized (leadership) {
            leadership.term = grant.get(0).offset();
            leadership.publish();
        }
        if (confirm && leadership.isActive()) {
            leadership.confirm();
        }
        log.info("{} was granted role {} with {}", member, leadership.role, leadership.token());
        return leadership;
    }

    /**
     * Writes confirming leases until one carried a predicted epoch, so {@code current()}
     * turns true; does nothing once one did (any guarded write may have). The first
     * transactions of a new producer often open connections (to partition leaders), which
     * make the step untrusted for one more transaction; on one broker one confirm suffices.
     *
     * @throws FencedException when the leadership ended meanwhile
     */
    void confirm() {
        for (int attempt = 0; attempt < MAX_CONFIRMS; attempt++) {
            synchronized (this) {
                if (lastLeasePredicted) {
                    return;
                }
                transact(List.of(), ConsumedOffsets.NONE, false);
            }
        }
    }

    /** The role. */
    public Role role() {
        return role;
    }

    /** The member holding the role. */
    public MemberId member() {
        return member;
    }

    /**
     * The token of this leadership: its term (the grant record's offset; compare these)
     * and the (producer id, epoch) the coordinator reported after the last commit.
     */
    public FencingToken token() {
        return published;
    }

    /** Publishes the token after its parts changed; called with the lock held. */
    private void publish() {
        if (term >= 0) {
            published = FencingToken.of(term, knownProducerId, knownEpoch);
        }
    }

    /** The term of this leadership: the same for every write of it, larger for every later grant. */
    public long term() {
        return term;
    }

    /** When this leadership began, on this member's clock. */
    public Instant grantedAt() {
        return Instant.ofEpochMilli(grantedAt);
    }

    /** The deadline of the newest lease this member wrote. */
    public Instant deadline() {
        return Instant.ofEpochMilli(deadline);
    }

    /** When the next renewal is due: one renew interval after the newest lease. */
    public Instant renewAt() {
        return Instant.ofEpochMilli(lastLeaseAt).plus(client.config().renewInterval());
    }

    /** Whether the renew interval has passed since the newest lease. */
    public boolean renewDue() {
        return !client.now().isBefore(renewAt());
    }

    /**
     * Whether the newest lease's deadline has passed without a renewal (a standby may be
     * challenging). Never blocks, even while a write is in progress.
     */
    public boolean expired() {
        return client.now().isAfter(Instant.ofEpochMilli(deadline));
    }

    /** Whether the leadership has not ended and is not being released. */
    public boolean isActive() {
        return state.get() == State.ACTIVE && !releasing;
    }

    /**
     * Where this leadership is in its life. Any thread may end it (a guarded write that
     * is fenced, a producer failure, the expiry watchdog, {@link #close()}); this tells
     * the others how.
     */
    public State state() {
        return state.get();
    }

    /**
     * Writes a new lease, retrying transient failures while the lease lasts.
     *
     * @throws FencedException when the role has a newer epoch: the leadership is over
     */
    public void renew() {
        client.instrumentation().around(CoordinationInstrumentation.Operation.RENEW, role, member, this::term, 0,
                () -> writeNow(List.of(), ConsumedOffsets.NONE, false));
    }

    /** A guarded write of one record. */
    public RecordMetadata write(ProducerRecord<byte[], byte[]> record) {
        return write(List.of(record)).get(0);
    }

    /**
     * Writes these records in one transaction that also renews the lease, retrying
     * transient failures while the lease lasts. When this returns, every record is
     * committed and acknowledged by all in-sync replicas. A commit that gets no answer in
     * time is sent again until the lease deadline (the coordinator answers a repeated
     * commit with the first one's result, so nothing is written twice).
     *
     * <p>What each outcome says about the records:
     * <ul>
     * <li>returns: committed, once. After a commit whose answer was lost and which the
     *     library then found committed (its lease record is in the log), the leadership
     *     has ended ({@link State#FAILED}) and a record whose metadata the producer never
     *     received has no offset ({@link RecordMetadata#hasOffset()} false; its partition
     *     is {@link RecordMetadata#UNKNOWN_PARTITION} unless the record named one);
     * <li>{@link FencedException}: nothing of it was written, and nothing of it will be;
     * <li>{@link CoordinationTimeoutException}, {@link RetriableCoordinationException} or
     *     another {@link CoordinationException}: it failed before it committed and was
     *     aborted; nothing of it was written, and the leadership may still be alive;
     * <li>{@link CommitOutcomeUnknownException}: the commit was sent and neither its
     *     answer, the coordinator nor the log told what became of it until the lease
     *     deadline: it may have committed or not. The leadership has ended (FAILED, or
     *     EXPIRED), but nothing says another member holds the role.
     * </ul>
     *
     * @return the metadata of each record, in order
     * @throws FencedException when the leadership is over: the role has a newer epoch,
     *     or the leadership expired, failed or was released before or during this write
     *     ({@link FencedException#endCause()} says which); nothing of it was written
     * @throws CoordinationTimeoutException when the cluster did not answer in time before
     *     the commit was sent; nothing of it was written and the leadership may still be alive
     * @throws CommitOutcomeUnknownException when the commit's outcome is unknown
     */
    public List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records) {
        return write(records, ConsumedOffsets.NONE);
    }

    /**
     * Writes these records and commits the input offsets {@code consumed} in one
     * transaction that also renews the lease: consume-transform-produce under the
     * leadership. The records and the offsets become visible together, or, when the
     * leadership is fenced, neither does, so the next holder resumes from the offsets of
     * the last write that returned. Failures and retries as for {@link #write(List)}.
     *
     * @return the metadata of each record, in order
     */
    public List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
        return write(records, consumed, false);
    }

    /** @param accepted whether these are sends accepted before a release began: they are still written */
    private List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, boolean accepted) {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(consumed, "consumed");
        return client.instrumentation().around(CoordinationInstrumentation.Operation.WRITE, role, member, this::term,
                records.size(), () -> writeNow(records, consumed, accepted));
    }

    private List<RecordMetadata> writeNow(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed,
            boolean accepted) {
        Duration backoff = FIRST_RETRY;
        while (true) {
            try {
                List<RecordMetadata> written = transact(records, consumed, false, accepted);
                return written.subList(1, written.size());
            } catch (RetriableCoordinationException e) {
                if (expired()) {
                    throw e;
                }
                log.info("A transaction of role {} failed transiently; retrying in {}: {}", role, backoff, e.getMessage());
                try {
                    client.runtime().sleep(backoff);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new CoordinationException("interrupted while retrying a write of role " + role, interrupted);
                }
                backoff = backoff.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : backoff.multipliedBy(2);
            }
        }
    }

    /**
     * Sends one record as a guarded write without waiting for it: concurrent sends are
     * grouped into one transaction that also renews the lease (group commit, bounded by
     * {@link CoordinationClient#sendBatching()}). The future completes when the
     * transaction committed, with the record's metadata, or fails with what the
     * transaction failed with: every record of a batch commits or is fenced with the
     * batch, and each exception says about the record what it says for
     * {@link #write(List)} (a {@link CommitOutcomeUnknownException}: it may be written).
     * Records are written in the order of their sends. A send after the leadership ended,
     * or while it is being released, fails at once with {@link FencedException}; the sends
     * queued before a release are written before its tombstone, also when the release is
     * called from a send's completion callback.
     *
     * <p>While {@link SendBatching#maxQueuedRecords()} records of this leadership are
     * accepted and not yet written, this call blocks up to {@link SendBatching#maxBlock()}
     * for room, and then fails the future with {@link SendQueueFullException}: nothing of
     * the record was written or queued. Called from a completion callback of a send it
     * never blocks, since the thread that would make room is the caller. Completion
     * callbacks run on the thread that writes the sends: keep them short.
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        Objects.requireNonNull(record, "record");
        CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        SendBatching batching = client.sendBatching();
        boolean start;
        synchronized (sendLock) {
            long blockedSince = 0;
            boolean blocked = false;
            while (true) {
                if (state.get() != State.ACTIVE || releasing) {
                    result.completeExceptionally(state.get() != State.ACTIVE ? ended(null) : new FencedException("the leadership of "
                            + member + " over role " + role + " is being released", null, LeadershipEndCause.RELEASED));
                    return result;
                }
                if (unwritten < batching.maxQueuedRecords()) {
                    break;
                }
                long now = client.runtime().nanoTime();
                if (!blocked) {
                    blocked = true;
                    blockedSince = now;
                }
                // The flusher makes room; when it is the caller (a completion callback), waiting cannot help.
                long left = Thread.currentThread() == flusher ? 0 : nanos(batching.maxBlock()) - (now - blockedSince);
                if (left <= 0) {
                    result.completeExceptionally(queueFull(batching, null));
                    return result;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(sendLock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    result.completeExceptionally(queueFull(batching, e));
                    return result;
                }
            }
            queued.add(new QueuedSend(record, result, client.runtime().nanoTime()));
            unwritten++;
            start = !flushing;
            flushing = true;
            if (queued.size() >= batching.maxRecords()) {
                sendLock.notifyAll();
            }
        }
        if (start) {
            client.runtime().workers().execute(this::flushQueued);
        }
        return result;
    }

    private SendQueueFullException queueFull(SendBatching batching, InterruptedException interrupted) {
        return new SendQueueFullException((interrupted != null ? "interrupted while waiting: " : "")
                + batching.maxQueuedRecords() + " records of role " + role + " wait for their transactions"
                + (interrupted != null ? "" : (Thread.currentThread() == flusher
                        ? " and a send from a completion callback does not wait for room"
                        : " and none was written within " + batching.maxBlock()))
                + "; this record was not written", interrupted);
    }

    /** A duration in nanoseconds, saturated: a bound of centuries is no bound. */
    private static long nanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** Writes queued sends, a batch per transaction, until none wait. */
    private void flushQueued() {
        synchronized (sendLock) {
            flusher = Thread.currentThread();
        }
        while (true) {
            List<QueuedSend> batch = nextBatch(true);
            if (batch.isEmpty()) {
                return;
            }
            writeBatch(batch);
        }
    }

    /**
     * The next batch, once it is full or its oldest send lingered long enough; empty when
     * none wait, and then, with {@code endFlush}, the flush is over.
     */
    private List<QueuedSend> nextBatch(boolean endFlush) {
        int max = client.sendBatching().maxRecords();
        long linger = client.sendBatching().linger().toNanos();
        synchronized (sendLock) {
            while (!queued.isEmpty() && queued.size() < max && !releasing) {
                long left = queued.peek().queuedAtNanos() + linger - client.runtime().nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(sendLock, left);
                } catch (InterruptedException e) {
                    // A pool thread is interrupted only when the JVM shuts the pool down: flush now.
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            List<QueuedSend> batch = new ArrayList<>(Math.min(max, queued.size()));
            while (!queued.isEmpty() && batch.size() < max) {
                batch.add(queued.poll());
            }
            if (batch.isEmpty() && endFlush) {
                flushing = false;
                flusher = null;
                sendLock.notifyAll();
            }
            return batch;
        }
    }

    /** Writes one batch in one guarded transaction and completes its futures. */
    private void writeBatch(List<QueuedSend> batch) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(batch.size());
        batch.forEach(send -> records.add(send.record()));
        List<RecordMetadata> written;
        try {
            written = write(records, ConsumedOffsets.NONE, true);
        } catch (RuntimeException failed) {
            madeRoom(batch.size());
            batch.forEach(send -> send.result().completeExceptionally(failed));
            return;
        }
        // Room first: a completion callback may send again.
        madeRoom(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).result().complete(written.get(i));
        }
    }

    private void madeRoom(int records) {
        synchronized (sendLock) {
            unwritten -= records;
            sendLock.notifyAll();
        }
    }

    /** Runs one transaction: the lease record (or its tombstone) first, then {@code records}; returns all their metadata. */
    private synchronized List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed,
            boolean release) {
        return transact(records, consumed, release, false);
    }

    private synchronized List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed,
            boolean release, boolean accepted) {
        if (state.get() != State.ACTIVE) {
            throw ended(null);
        }
        if (releasing && !release && !accepted) {
            throw new FencedException("the leadership of " + member + " over role " + role + " is being released", null,
                    LeadershipEndCause.RELEASED);
        }
        long now = client.now().toEpochMilli();
        long start = epoch.featureGeneration();
        boolean predict = exact && start == featureGeneration && knownEpoch < ROLLOVER_GUARD;
        short leaseEpoch = (short) (predict ? knownEpoch + step : knownEpoch);
        long leaseDeadline = now + client.config().duration().toMillis();
        byte[] leaseValue = release ? null : CoordinationCodec.encodeValue(
                new CoordinationRecord.Lease(member, knownProducerId, leaseEpoch, grantedAt, leaseDeadline));
        List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(records.size() + 1);
        // The timestamp is on the lease clock: after a release, standbys anchor on it.
        batch.add(new ProducerRecord<>(transport.topic(), partition, now, CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                leaseValue));
        batch.addAll(records);
        List<RecordMetadata> written;
        long previous = previousStart;
        previousStart = start;
        // A commit that times out is sent again until the lease ends: until the current
        // lease's deadline, or the new one's for the grant (nothing to outlast before it).
        long retryUntil = deadline > 0 ? deadline : leaseDeadline;
        try {
            written = epoch.transact(batch, consumed, Duration.ofMillis(Math.max(0, retryUntil - now)));
        } catch (CommitOutcomeUnknownException unknown) {
            written = resolve(unknown, batch, predict && step == 1);
            exact = false;
            knownAccurate = false;
            if (written.get(0).hasOffset()) {
                if (term < 0) {
                    term = written.get(0).offset();
                }
                leaseSearchFrom = written.get(0).offset() + 1;
            }
            lastLeaseAt = now;
            deadline = leaseDeadline;
            publish();
            return written;
        } catch (FencedException fenced) {
            end(State.FENCED);
            throw fenced;
        } catch (CoordinationException e) {
            // An abort moves the epoch under transaction version 2: learn it again.
            exact = false;
            knownAccurate = false;
            if (state.get() != State.ACTIVE) {
                // Ended meanwhile by another thread (the watchdog closed the producer under it).
                throw ended(e);
            }
            if (!epoch.usable()) {
                throw unusable(e);
            }
            throw e;
        }
        lastLeaseAt = now;
        deadline = leaseDeadline;
        leaseSearchFrom = written.get(0).offset() + 1;
        long end = epoch.featureGeneration();
        lastLeasePredicted = predict && end == start;
        if (lastLeasePredicted) {
            knownEpoch = leaseEpoch;
            knownAccurate = true;
        } else {
            learn(previous, end);
        }
        publish();
        return written;
    }

    /**
     * Finds out what became of a transaction whose commit got no answer until the lease
     * deadline, and ends the leadership, whose producer cannot run another transaction.
     * The log decides "committed": the transaction's own lease record (its bytes name this
     * member and the new deadline) is visible to {@code read_committed}. The coordinator
     * decides "aborted": with no such record, the transaction can no longer commit once
     * the coordinator reports this producer id at a later epoch than the transaction's,
     * with nothing open (kafka-facts 2, 5, 6: under version 2 our own commit or abort ends
     * at the epoch after it, a challenger's InitProducerId later still; under version 1 a
     * commit keeps the epoch, so there only the log can decide). Where the log cannot be
     * read, the coordinator alone decides "committed" when this transaction ran under
     * version 2 (it predicted a step of one) and the coordinator reports CompleteCommit at
     * exactly the next epoch: no other transaction ends there. Anything else, a
     * coordinator that does not answer included, leaves it unknown.
     *
     * @return the metadata of the batch, lease first, when it committed; a record whose
     *     metadata the producer never received has no offset ({@link RecordMetadata#hasOffset()}
     *     false) and, if it named none, {@link RecordMetadata#UNKNOWN_PARTITION}
     * @throws FencedException when it was aborted: nothing of it was written
     * @throws CommitOutcomeUnknownException when neither the coordinator nor the log decide
     */
    private List<RecordMetadata> resolve(CommitOutcomeUnknownException unknown, List<ProducerRecord<byte[], byte[]>> batch,
            boolean versionTwo) {
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        // The epoch the transaction ran at, if this member knew it exactly.
        boolean epochKnown = knownAccurate;
        short ranAt = knownEpoch;
        Optional<ProducerState> reported = Optional.empty();
        try {
            reported = describeSettled();
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        // Read after the describe: once that reported the transaction decided, the log shows its outcome.
        OptionalLong found = OptionalLong.empty();
        boolean logRead = false;
        try {
            found = findLease(lease);
            logRead = true;
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        if (!logRead && versionTwo && epochKnown && reported.isPresent() && reported.get().state().equals("CompleteCommit")
                && reported.get().producerId() == knownProducerId && reported.get().producerEpoch() == ranAt + 1) {
            end(State.FAILED);
            log.warn("The commit of a transaction of role {} got no answer until the lease deadline, but the coordinator reports"
                    + " it committed ({}); the producer cannot go on, so the leadership of {} ended", role, reported.get(), member);
            return committedMetadata(unknown, batch, -1);
        }
        if (found.isPresent()) {
            end(State.FAILED);
            log.warn("The commit of a transaction of role {} got no answer until the lease deadline, but its lease is at offset {}"
                    + " of {}: it committed; the producer cannot go on, so the leadership of {} ended", role, found.getAsLong(),
                    transport.topic(), member);
            return committedMetadata(unknown, batch, found.getAsLong());
        }
        boolean decided = epochKnown && reported.isPresent() && reported.get().transactionComplete()
                && reported.get().producerId() == knownProducerId && reported.get().producerEpoch() > ranAt;
        if (decided) {
            boolean superseded = reported.get().producerEpoch() > ranAt + Math.max(step, 1);
            end(superseded ? State.FENCED : State.FAILED);
            State ended = state.get();
            throw new FencedException("the commit of a transaction of role " + role + " got no answer until the lease deadline,"
                    + " and the coordinator aborted it (" + reported.get() + "): nothing of it was written; the leadership of "
                    + member + " ended (" + ended + ")", unknown, ended.endCause().orElse(LeadershipEndCause.FAILED));
        }
        end(State.FAILED);
        List<RecordMetadata> acknowledged = unknown.acknowledged().map(all -> all.subList(1, all.size())).orElse(null);
        throw new CommitOutcomeUnknownException("the commit of a transaction of role " + role + " got no answer until the lease"
                + " deadline, and neither the coordinator (" + reported.map(String::valueOf).orElse("no answer") + ") nor "
                + transport.location() + " tell whether it committed; the leadership of " + member + " ended ("
                + state.get() + ")", unknown, acknowledged);
    }

    /** The coordinator's report, asked again briefly while a transaction is being completed (Prepare*: markers being written). */
    private Optional<ProducerState> describeSettled() {
        return describeUntil(reported -> !reported.state().startsWith("Prepare"));
    }

    /** Where {@code lease} (these exact bytes) is in the committed log since this leadership's last lease, if anywhere. */
    private OptionalLong findLease(ProducerRecord<byte[], byte[]> lease) {
        long from = leaseSearchFrom;
        while (true) {
            RoleRecords read = transport.read(role, from, Duration.ZERO);
            for (RawRecord record : read.records()) {
                if (Arrays.equals(record.key(), lease.key()) && Arrays.equals(record.value(), lease.value())) {
                    return OptionalLong.of(record.offset());
                }
            }
            if (read.records().isEmpty() || read.nextOffset() <= from) {
                return OptionalLong.empty();
            }
            from = read.nextOffset();
        }
    }

    /** The batch's metadata once its transaction is known to have committed, the lease's at {@code leaseOffset} (-1: not known). */
    private List<RecordMetadata> committedMetadata(CommitOutcomeUnknownException unknown,
            List<ProducerRecord<byte[], byte[]>> batch, long leaseOffset) {
        Optional<List<RecordMetadata>> acknowledged = unknown.acknowledged();
        if (acknowledged.isPresent() && acknowledged.get().size() == batch.size()) {
            return acknowledged.get();
        }
        List<RecordMetadata> metadata = new ArrayList<>(batch.size());
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        metadata.add(new RecordMetadata(new TopicPartition(lease.topic(), partition), leaseOffset, 0, lease.timestamp(),
                lease.key().length, lease.value() == null ? -1 : lease.value().length));
        for (ProducerRecord<byte[], byte[]> record : batch.subList(1, batch.size())) {
            // Written, but where only the lost answer said: no offset, as Kafka reports for acks=0.
            metadata.add(new RecordMetadata(new TopicPartition(record.topic(),
                    record.partition() != null ? record.partition() : RecordMetadata.UNKNOWN_PARTITION), -1, 0,
                    record.timestamp() != null ? record.timestamp() : RecordBatch.NO_TIMESTAMP, -1, -1));
        }
        return metadata;
    }

    /**
     * Describes after a commit to learn the coordinator's value and the step of one
     * commit. The step counts only if the producer's features did not change since the
     * previous transaction began, since that is when this transaction's version was fixed.
     */
    private void learn(long previousStartGeneration, long generation) {
        ProducerState reported;
        try {
            // Holding the lock: past the next renewal's time it would delay that renewal.
            reported = transport.describeEpoch(role, timeUntil(renewAt())).orElse(null);
        } catch (CoordinationException e) {
            log.debug("Could not describe role {} after a commit; the next lease is conservative", role, e);
            exact = false;
            knownAccurate = false;
            return;
        }
        if (reported == null) {
            exact = false;
            knownAccurate = false;
            return;
        }
        knownAccurate = true;
        boolean stable = previousStartGeneration == generation;
        featureGeneration = generation;
        if (reported.producerId() == knownProducerId) {
            int moved = reported.producerEpoch() - knownEpoch;
            knownEpoch = reported.producerEpoch();
            // More than one step is another InitProducerId (then our next write fails) or a
            // version upgrade's extra bump: either way, do not predict from it.
            boolean oneCommit = moved == 0 || moved == 1;
            if (oneCommit) {
                step = moved;
            }
            exact = oneCommit && stable;
            return;
        }
        // A new producer id is a rollover of our own epoch, or a challenger's id; in the
        // second case our next transaction fails, so adopting it is harmless.
        knownProducerId = reported.producerId();
        knownEpoch = reported.producerEpoch();
        exact = step >= 0 && stable;
    }

    /**
     * The producer failed beyond recovery, so this leadership cannot write again. If the
     * coordinator reports another epoch, a newer one fenced it; otherwise it ended on the
     * failure alone. Either way the member must acquire anew. Only for a transaction that
     * failed before its commit was sent (one sent and unanswered is {@link #resolve}d): so
     * nothing of it was written, which the FencedException says.
     */
    private CoordinationException unusable(CoordinationException failure) {
        boolean superseded;
        try {
            superseded = transport.describeEpoch(role, timeUntil(deadline())).map(this::supersededBy).orElse(true);
        } catch (CoordinationException describeFailed) {
            failure.addSuppressed(describeFailed);
            superseded = false;
        }
        if (superseded) {
            end(State.FENCED);
            return new FencedException("the producer of role " + role + " failed and a newer epoch exists: " + failure.getMessage(),
                    failure);
        }
        end(State.FAILED);
        return new FencedException("the producer of role " + role + " failed beyond recovery, so the leadership of "
                + member + " ended; acquire the role anew", failure, LeadershipEndCause.FAILED);
    }

    /** Whether the coordinator's report shows an epoch newer than this leadership's own commits explain. */
    private boolean supersededBy(ProducerState reported) {
        return reported.producerId() != knownProducerId || reported.producerEpoch() > knownEpoch + Math.max(step, 1);
    }

    /**
     * Asks the transaction coordinator whether a newer epoch exists for the role, and
     * ends this leadership as {@link State#FENCED} if so. For a holder that saw a lease
     * naming another member: the coordinator decides, not a record that any member with
     * Write on the topic could have written. Holds the lock, so no own commit moves the
     * epoch between the describe and the comparison.
     *
     * @return whether the leadership is fenced
     * @throws CoordinationException when the coordinator could not be asked
     */
    synchronized boolean confirmFenced() {
        if (state.get() == State.ACTIVE
                && transport.describeEpoch(role, timeUntil(deadline())).map(this::newerThanOwn).orElse(true)) {
            end(State.FENCED);
        }
        return state.get() == State.FENCED;
    }

    /** How long until {@code instant}, for bounding a describe by the lease; zero once it passed. */
    private Duration timeUntil(Instant instant) {
        Duration left = Duration.between(client.now(), instant);
        return left.isNegative() ? Duration.ZERO : left;
    }

    /** Whether the coordinator reports an epoch that no transaction of this member explains. */
    private boolean newerThanOwn(ProducerState reported) {
        return knownAccurate
                ? reported.producerId() != knownProducerId || reported.producerEpoch() != knownEpoch
                : supersededBy(reported);
    }

    /** The exception for a write or renewal after this leadership ended. */
    private FencedException ended(Throwable cause) {
        State ended = state.get();
        return new FencedException("the leadership of " + member + " over role " + role + " ended (" + ended + ")", cause,
                ended.endCause().orElse(LeadershipEndCause.RELEASED));
    }

    /** Ends the leadership in {@code newState} unless it already ended; never blocks. */
    private boolean end(State newState) {
        if (!state.compareAndSet(State.ACTIVE, newState)) {
            return false;
        }
        // Closing the producer also makes a transaction that blocks on it fail at once.
        epoch.close();
        synchronized (sendLock) {
            // Sends blocked for room fail now rather than at their maxBlock.
            sendLock.notifyAll();
        }
        client.ended(this);
        return true;
    }

    /**
     * Ends the leadership as {@link State#EXPIRED} if its newest lease's deadline passed
     * without a renewal. Never blocks: a renewal that hangs on an unresponsive cluster
     * fails at once, and one that commits afterwards does not revive the leadership.
     *
     * @return whether this call ended it
     */
    public boolean expireIfDue() {
        return expired() && end(State.EXPIRED);
    }

    /**
     * Gives the leadership up without writing anything: for a holder that cannot or must
     * not write any more (a standby may already hold the role). The producer is closed;
     * the member stays in the roster at its rank. Never blocks.
     */
    public void abandon() {
        end(State.RELEASED);
    }

    /**
     * Releases the role: writes a lease tombstone (so a standby takes over at once
     * instead of waiting for the deadline), leaves the roster, and closes the producer.
     * A leadership that was already fenced just closes.
     */
    @Override
    public void close() {
        if (state.get() != State.ACTIVE) {
            return;
        }
        // Refuse new guarded writes now, then wait for the one in flight (the lock): a
        // release never breaks a commit, and the tombstone follows the last write.
        releasing = true;
        awaitSendsWritten();
        synchronized (this) {
            if (state.get() != State.ACTIVE) {
                return;
            }
            try {
                // Leave the roster first, so the next standby ranks 0 when it sees the tombstone.
                transport.deregister(role, member);
                transact(List.of(), ConsumedOffsets.NONE, true);
                log.info("{} released role {} ({})", member, role, token());
                // The commit returns before the coordinator wrote its markers, and a marker
                // need not wake a standby's read_committed fetch (it waits up to its
                // fetch.max.wait); a plain append does. So once the coordinator completed
                // the transaction, append the registration's tombstone once more (a no-op
                // for every reader): a standby still waiting reads the release at once.
                if (awaitComplete()) {
                    transport.deregister(role, member);
                }
            } catch (FencedException alreadyDeposed) {
                log.info("{} closed role {}, which had already ended: {}", member, role, alreadyDeposed.getMessage());
            } finally {
                end(State.RELEASED);
                client.released(this);
            }
        }
    }

    /**
     * Waits until every send accepted before the release is written (or failed). Called
     * on the flushing thread itself (from a send's completion callback), it writes them
     * here: nobody else would, and waiting for the flush to end would wait for itself.
     */
    private void awaitSendsWritten() {
        synchronized (sendLock) {
            // No more lingering: the flusher writes what is queued at once.
            sendLock.notifyAll();
            if (Thread.currentThread() != flusher) {
                while (flushing) {
                    try {
                        sendLock.wait();
                    } catch (InterruptedException e) {
                        // The sends still complete on the flusher; those it writes after the tombstone fail as released.
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                return;
            }
        }
        // Releasing, so nothing new is queued; the flush loop this callback returns to finds the queue empty.
        while (true) {
            List<QueuedSend> batch = nextBatch(false);
            if (batch.isEmpty()) {
                return;
            }
            writeBatch(batch);
        }
    }

    /**
     * Waits, briefly, until the coordinator completed this member's last transaction;
     * gives up quietly after {@link #COMPLETION_WAIT}: it only speeds the handover up.
     *
     * @return false when interrupted (the caller is stopping in a hurry), true otherwise
     */
    private boolean awaitComplete() {
        Optional<ProducerState> last = describeUntil(ProducerState::transactionComplete);
        return last.isEmpty() || last.get().transactionComplete() || !Thread.currentThread().isInterrupted();
    }

    /**
     * Describes the role until the coordinator's report is {@code settled} (or it knows
     * no such id), for at most {@link #COMPLETION_WAIT}, and returns the last report.
     * Describes {@link #COMPLETION_AT_ONCE} times one after the other (a healthy
     * coordinator writes the markers within a few round trips, and the handover waits on
     * this), then after waits from {@link #COMPLETION_FIRST_WAIT} doubling to
     * {@link #COMPLETION_LAST_WAIT}: a coordinator that is slow to complete gets about
     * twenty describes per release, not thousands (many roles release at once when a
     * member shuts down). An interrupt ends the wait and stays set.
     */
    private Optional<ProducerState> describeUntil(java.util.function.Predicate<ProducerState> settled) {
        long start = client.runtime().nanoTime();
        long wait = COMPLETION_FIRST_WAIT.toNanos();
        for (int describes = 1; ; describes++) {
            Optional<ProducerState> reported = transport.describeEpoch(role);
            if (reported.isEmpty() || settled.test(reported.get())) {
                return reported;
            }
            long left = COMPLETION_WAIT.toNanos() - (client.runtime().nanoTime() - start);
            if (left <= 0) {
                return reported;
            }
            if (describes < COMPLETION_AT_ONCE) {
                continue;
            }
            try {
                client.runtime().sleep(Duration.ofNanos(Math.min(wait, left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reported;
            }
            wait = Math.min(wait * 2, COMPLETION_LAST_WAIT.toNanos());
        }
    }

    @Override
    public String toString() {
        return "Leadership[" + member + " holds " + role + ", term " + term + ", " + state.get() + "]";
    }
}
