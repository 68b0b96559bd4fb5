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
import io.krabka.streams.coordination.succession.Succession;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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

    private static final int MAX_CONFIRMS = 3;
    private static final Duration FIRST_RETRY = Duration.ofMillis(50);
    private static final Duration LAST_RETRY = Duration.ofSeconds(1);

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
    // Which epoch the next commit leaves the producer at. Guarded by the lock.
    private final EpochPrediction epochs;

    // Volatile, and the token published whole: renewAt() and token() never wait for the
    // lock, which a write stuck on an unresponsive cluster may hold for a whole timeout
    // (the expiry watchdog and the contender read them meanwhile).
    private volatile long lastLeaseAt;
    private volatile FencingToken published;
    // Volatile, not guarded by the lock: a watchdog asks expired() while a renewal blocks.
    private volatile long deadline;
    // The same deadline on the runtime's monotonic ticker: a wall clock stepped back must
    // not keep a holder believing past the lease it measured when it wrote it.
    private volatile long deadlineNanos = Long.MAX_VALUE;
    // Changed without the lock, so a watchdog or a release can end a leadership whose
    // write blocks; the first end wins and later ones change nothing.
    private final AtomicReference<State> state = new AtomicReference<>(State.ACTIVE);
    // Set by close() before it waits for a write in flight: no new guarded write starts.
    private volatile boolean releasing;
    private final GroupCommit sends;
    private final CommitOutcomeResolver outcomes;

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
        this.epochs = new EpochPrediction(initial, epoch.featureGeneration());
        this.published = FencingToken.NO_EPOCH;
        this.leaseSearchFrom = leaseSearchFrom;
        this.sends = new GroupCommit(this);
        this.outcomes = new CommitOutcomeResolver(this, transport, partition);
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
                if (epochs.lastLeasePredicted()) {
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
            published = FencingToken.of(term, epochs.producerId(), epochs.epoch());
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
        return Succession.renewAt(Instant.ofEpochMilli(lastLeaseAt), client.config());
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
        // Whichever clock says so first: the wall clock the deadline was written in, or the
        // ticker measured from the moment the lease was written (a step back of the wall
        // clock cannot delay the end; a step forward ends it early, which is safe).
        return untilExpired().isNegative();
    }

    /** A lease written at {@code now} (wall clock) and {@code nowNanos} (ticker) lasts until {@code leaseDeadline}. */
    private void leaseWritten(long now, long nowNanos, long leaseDeadline) {
        lastLeaseAt = now;
        deadline = leaseDeadline;
        deadlineNanos = nowNanos + client.config().duration().toNanos();
    }

    /** How long until {@link #expired()} turns true, by whichever clock says so first. */
    Duration untilExpired() {
        Duration byWall = Duration.between(client.now(), Instant.ofEpochMilli(deadline));
        long due = deadlineNanos;
        if (due == Long.MAX_VALUE) {
            return byWall;
        }
        Duration byTicker = Duration.ofNanos(due - client.runtime().nanoTime());
        return byTicker.compareTo(byWall) < 0 ? byTicker : byWall;
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
        return sends.send(record);
    }

    /** Whether a send may be queued now: the leadership is active and not being released. */
    boolean acceptsSends() {
        return state.get() == State.ACTIVE && !releasing;
    }

    /** Why a send is refused now: the leadership ended, or it is being released. */
    FencedException refusal() {
        return state.get() != State.ACTIVE ? ended(null) : new FencedException("the leadership of " + member + " over role "
                + role + " is being released", null, LeadershipEndCause.RELEASED);
    }

    /** Whether a release began: queued sends are written at once, no new guarded write starts. */
    boolean releasing() {
        return releasing;
    }

    /** Writes sends accepted before a release began: they are still written, also during the release. */
    List<RecordMetadata> writeAccepted(List<ProducerRecord<byte[], byte[]>> records) {
        return write(records, ConsumedOffsets.NONE, true);
    }

    CoordinationClient client() {
        return client;
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
        long nowNanos = client.runtime().nanoTime();
        EpochPrediction.Transaction predicted = epochs.begin(epoch.featureGeneration());
        long leaseDeadline = now + client.config().duration().toMillis();
        byte[] leaseValue = release ? null : CoordinationCodec.encodeValue(
                new CoordinationRecord.Lease(member, epochs.producerId(), predicted.leaseEpoch(), grantedAt, leaseDeadline));
        List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(records.size() + 1);
        // The timestamp is on the lease clock: after a release, standbys anchor on it.
        batch.add(new ProducerRecord<>(transport.topic(), partition, now, CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                leaseValue));
        batch.addAll(records);
        List<RecordMetadata> written;
        // A commit that times out is sent again until the lease ends: until the current
        // lease's deadline, or the new one's for the grant (nothing to outlast before it).
        long retryUntil = deadline > 0 ? deadline : leaseDeadline;
        try {
            written = epoch.transact(batch, consumed, Duration.ofMillis(Math.max(0, retryUntil - now)));
        } catch (CommitOutcomeUnknownException unknown) {
            written = outcomes.resolve(unknown, batch, predicted.predicted() && epochs.step() == 1, epochs, leaseSearchFrom);
            epochs.lost();
            if (written.get(0).hasOffset()) {
                if (term < 0) {
                    term = written.get(0).offset();
                }
                leaseSearchFrom = written.get(0).offset() + 1;
            }
            leaseWritten(now, nowNanos, leaseDeadline);
            publish();
            return written;
        } catch (FencedException fenced) {
            end(State.FENCED);
            throw fenced;
        } catch (CoordinationException e) {
            // An abort moves the epoch under transaction version 2: learn it again.
            epochs.lost();
            if (state.get() != State.ACTIVE) {
                // Ended meanwhile by another thread (the watchdog closed the producer under it).
                throw ended(e);
            }
            if (!epoch.usable()) {
                throw unusable(e);
            }
            throw e;
        }
        leaseWritten(now, nowNanos, leaseDeadline);
        leaseSearchFrom = written.get(0).offset() + 1;
        long end = epoch.featureGeneration();
        if (!epochs.committed(predicted, end)) {
            learn(predicted, end);
        }
        publish();
        return written;
    }

    /**
     * Describes after a commit to learn the coordinator's value and the step of one
     * commit. The step counts only if the producer's features did not change since the
     * previous transaction began, since that is when this transaction's version was fixed.
     */
    private void learn(EpochPrediction.Transaction transaction, long generation) {
        ProducerState reported;
        try {
            // Holding the lock: past the next renewal's time it would delay that renewal.
            reported = transport.describeEpoch(role, timeUntil(renewAt())).orElse(null);
        } catch (CoordinationException e) {
            log.debug("Could not describe role {} after a commit; the next lease is conservative", role, e);
            epochs.lost();
            return;
        }
        epochs.learned(transaction, reported, generation);
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
            superseded = transport.describeEpoch(role, timeUntil(deadline())).map(epochs::supersededBy).orElse(true);
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
                && transport.describeEpoch(role, timeUntil(deadline())).map(epochs::newerThanOwn).orElse(true)) {
            end(State.FENCED);
        }
        return state.get() == State.FENCED;
    }

    /** How long until {@code instant}, for bounding a describe by the lease; zero once it passed. */
    private Duration timeUntil(Instant instant) {
        Duration left = Duration.between(client.now(), instant);
        return left.isNegative() ? Duration.ZERO : left;
    }

    /** The exception for a write or renewal after this leadership ended. */
    private FencedException ended(Throwable cause) {
        State ended = state.get();
        return new FencedException("the leadership of " + member + " over role " + role + " ended (" + ended + ")", cause,
                ended.endCause().orElse(LeadershipEndCause.RELEASED));
    }

    /** Ends the leadership in {@code newState} unless it already ended; never blocks. */
    boolean end(State newState) {
        if (!state.compareAndSet(State.ACTIVE, newState)) {
            return false;
        }
        // Closing the producer also makes a transaction that blocks on it fail at once.
        epoch.close();
        // Sends blocked for room fail now rather than at their maxBlock.
        sends.wakeAll();
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
        sends.awaitWritten();
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
     * Waits, briefly, until the coordinator completed this member's last transaction;
     * gives up quietly after {@link CommitOutcomeResolver#COMPLETION_WAIT}: it only speeds the handover up.
     *
     * @return false when interrupted (the caller is stopping in a hurry), true otherwise
     */
    private boolean awaitComplete() {
        Optional<ProducerState> last = outcomes.describeUntil(ProducerState::transactionComplete);
        return last.isEmpty() || last.get().transactionComplete() || !Thread.currentThread().isInterrupted();
    }

    @Override
    public String toString() {
        return "Leadership[" + member + " holds " + role + ", term " + term + ", " + state.get() + "]";
    }
}
