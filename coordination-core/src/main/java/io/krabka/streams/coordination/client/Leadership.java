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
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

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

    private final CoordinationClient client;
    private final RoleEpoch epoch;
    private final Role role;
    private final MemberId member;
    private final long grantedAt;
    private final LeadershipLifecycle life;
    private final LeaseClock clock;
    private final LeaseTransaction transaction;
    private final LeaseWriter lease;
    private final GroupCommit sends;

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
        this.epoch = epoch;
        this.role = epoch.role();
        this.member = member;
        this.grantedAt = client.grantTime(epoch.role());
        this.life = new LeadershipLifecycle(member, role);
        this.clock = new LeaseClock(client);
        this.transaction = new LeaseTransaction(this, client, life, transport, epoch, clock, initial, leaseSearchFrom);
        this.lease = new LeaseWriter(this, client, life, transport, clock, transaction);
        this.sends = new GroupCommit(client, role, life, lease);
    }

    /**
     * Takes the role with {@code epoch}, fresh from InitProducerId: writes the grant lease
     * and, with {@code confirm}, a confirming one, as {@link LeaseWriter#grant} says.
     *
     * @param leaseSearchFrom an offset of the role's partition at or before the grant's
     *     lease record: where the challenge's decision had read to
     */
    static Leadership grant(CoordinationClient client, CoordinationTransport transport, RoleEpoch epoch, MemberId member,
            boolean confirm, long leaseSearchFrom) {
        ProducerState initial = transport.describeEpoch(epoch.role()).orElseThrow(() -> new RetriableCoordinationException(
                "the coordinator reports no epoch for role " + epoch.role() + " right after InitProducerId", null));
        Leadership leadership = new Leadership(client, transport, epoch, member, initial, leaseSearchFrom);
        leadership.lease.grant(confirm);
        return leadership;
    }

    /** Writes confirming leases until {@code current()} turns true, as {@link LeaseWriter#confirm()} says. */
    void confirm() {
        lease.confirm();
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
        return transaction.token();
    }

    /** The term of this leadership: the same for every write of it, larger for every later grant. */
    public long term() {
        return transaction.term();
    }

    /** When this leadership began, on this member's clock. */
    public Instant grantedAt() {
        return Instant.ofEpochMilli(grantedAt);
    }

    /** The deadline of the newest lease this member wrote. */
    public Instant deadline() {
        return clock.deadline();
    }

    /** When the next renewal is due: one renew interval after the newest lease. */
    public Instant renewAt() {
        return clock.renewAt();
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
        return clock.expired();
    }

    /** How long until {@link #expired()} turns true, by whichever clock says so first. */
    Duration untilExpired() {
        return clock.untilExpired();
    }

    /** Whether the leadership has not ended and is not being released. */
    public boolean isActive() {
        return life.active();
    }

    /**
     * Where this leadership is in its life. Any thread may end it (a guarded write that
     * is fenced, a producer failure, the expiry watchdog, {@link #close()}); this tells
     * the others how.
     */
    public State state() {
        return life.state();
    }

    /**
     * Writes a new lease, retrying transient failures while the lease lasts.
     *
     * @throws FencedException when the role has a newer epoch: the leadership is over
     */
    public void renew() {
        lease.renew();
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
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(consumed, "consumed");
        return lease.write(records, consumed, false);
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

    /** Ends this leadership as {@link State#FENCED} if the coordinator reports a newer epoch: {@link LeaseTransaction#confirmFenced}. */
    boolean confirmFenced() {
        return lease.confirmFenced();
    }

    /** Ends the leadership in {@code newState} unless it already ended; never blocks. */
    boolean end(State newState) {
        if (!life.end(newState)) {
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
        if (life.state() != State.ACTIVE) {
            return;
        }
        // Refuse new guarded writes now, then wait for the one in flight (the lock): a
        // release never breaks a commit, and the tombstone follows the last write.
        life.beginRelease();
        sends.awaitWritten();
        lease.release();
    }

    @Override
    public String toString() {
        return "Leadership[" + member + " holds " + role + ", term " + term() + ", " + life.state() + "]";
    }
}
