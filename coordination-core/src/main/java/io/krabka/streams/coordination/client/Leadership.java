package io.krabka.streams.coordination.client;

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
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
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

    private final CoordinationClient client;
    private final CoordinationTransport transport;
    private final RoleEpoch epoch;
    private final Role role;
    private final MemberId member;
    private final long grantedAt;
    private final int partition;
    private long term = -1;

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

    // Group commit: sends waiting for a transaction, and whether a flush is under way.
    private final Object sendLock = new Object();
    private final ArrayDeque<QueuedSend> queued = new ArrayDeque<>();
    private boolean flushing;

    /** One {@link #send}, waiting for its transaction. */
    private record QueuedSend(ProducerRecord<byte[], byte[]> record, CompletableFuture<RecordMetadata> result,
            long queuedAtNanos) {
    }

    /** Runs flushes of every leadership's queued sends; a thread only while one flushes. */
    private static final ExecutorService FLUSHERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "krabka-guarded-send");
        thread.setDaemon(true);
        return thread;
    });

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
            ProducerState initial) {
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
    }

    /**
     * Writes the grant lease with the epoch described right after InitProducerId (a
     * race there can only make this write fail), takes its offset as the term, and, with
     * {@code confirm}, learns the step and writes a confirming lease so {@code current()}
     * turns true (otherwise {@link #confirm()} does that later).
     */
    static Leadership grant(CoordinationClient client, CoordinationTransport transport, RoleEpoch epoch, MemberId member,
            boolean confirm) {
        ProducerState initial = transport.describeEpoch(epoch.role()).orElseThrow(() -> new RetriableCoordinationException(
                "the coordinator reports no epoch for role " + epoch.role() + " right after InitProducerId", null));
        Leadership leadership = new Leadership(client, transport, epoch, member, initial);
        List<RecordMetadata> grant = leadership.transact(List.of(), ConsumedOffsets.NONE, false);
        synchronized (leadership) {
            leadership.term = grant.get(0).offset();
            leadership.publish();
        }
        if (confirm) {
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
     * committed and acknowledged by all in-sync replicas.
     *
     * @return the metadata of each record, in order
     * @throws FencedException when the leadership is over: the role has a newer epoch,
     *     or the leadership expired, failed or was released before or during this write
     *     ({@link FencedException#endCause()} says which); nothing of it was written
     * @throws CoordinationTimeoutException when the cluster did not answer in time; the
     *     leadership may still be alive
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
                    Thread.sleep(backoff.toMillis());
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
     * batch. Records are written in the order of their sends. A send after the
     * leadership ended, or while it is being released, fails at once with
     * {@link FencedException}; the sends queued before a release are written before its
     * tombstone.
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        Objects.requireNonNull(record, "record");
        CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        boolean start;
        synchronized (sendLock) {
            if (state.get() != State.ACTIVE || releasing) {
                result.completeExceptionally(state.get() != State.ACTIVE ? ended(null) : new FencedException("the leadership of "
                        + member + " over role " + role + " is being released", null, LeadershipEndCause.RELEASED));
                return result;
            }
            queued.add(new QueuedSend(record, result, System.nanoTime()));
            start = !flushing;
            flushing = true;
            if (queued.size() >= client.sendBatching().maxRecords()) {
                sendLock.notifyAll();
            }
        }
        if (start) {
            FLUSHERS.execute(this::flushQueued);
        }
        return result;
    }

    /** Writes queued sends, a batch per transaction, until none wait. */
    private void flushQueued() {
        while (true) {
            List<QueuedSend> batch = nextBatch();
            if (batch.isEmpty()) {
                return;
            }
            writeBatch(batch);
        }
    }

    /** The next batch, once it is full or its oldest send lingered long enough; empty when none wait. */
    private List<QueuedSend> nextBatch() {
        int max = client.sendBatching().maxRecords();
        long linger = client.sendBatching().linger().toNanos();
        synchronized (sendLock) {
            while (!queued.isEmpty() && queued.size() < max && !releasing) {
                long left = queued.peek().queuedAtNanos() + linger - System.nanoTime();
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
            if (batch.isEmpty()) {
                flushing = false;
                sendLock.notifyAll();
            }
            return batch;
        }
    }

    /** Writes one batch in one guarded transaction and completes its futures. */
    private void writeBatch(List<QueuedSend> batch) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(batch.size());
        batch.forEach(send -> records.add(send.record()));
        try {
            List<RecordMetadata> written = write(records, ConsumedOffsets.NONE, true);
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).result().complete(written.get(i));
            }
        } catch (RuntimeException failed) {
            batch.forEach(send -> send.result().completeExceptionally(failed));
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
        try {
            written = epoch.transact(batch, consumed);
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
     * failure alone. Either way the member must acquire anew.
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
                awaitComplete();
                transport.deregister(role, member);
            } catch (FencedException alreadyDeposed) {
                log.info("{} closed role {}, which had already ended: {}", member, role, alreadyDeposed.getMessage());
            } finally {
                end(State.RELEASED);
                client.released(this);
            }
        }
    }

    /** Waits until every send accepted before the release is written (or failed). */
    private void awaitSendsWritten() {
        synchronized (sendLock) {
            // No more lingering: the flusher writes what is queued at once.
            sendLock.notifyAll();
            while (flushing) {
                try {
                    sendLock.wait();
                } catch (InterruptedException e) {
                    // The sends still complete on the flusher; the tombstone just follows them later.
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * Waits, briefly, until the coordinator completed this member's last transaction;
     * gives up quietly after {@link #COMPLETION_WAIT}: it only speeds the handover up.
     */
    private void awaitComplete() {
        long giveUpAt = System.nanoTime() + COMPLETION_WAIT.toNanos();
        do {
            Optional<ProducerState> reported = transport.describeEpoch(role);
            if (reported.isEmpty() || reported.get().transactionComplete()) {
                return;
            }
        } while (System.nanoTime() - giveUpAt < 0);
    }

    @Override
    public String toString() {
        return "Leadership[" + member + " holds " + role + ", term " + term + ", " + state.get() + "]";
    }
}
