package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.SendQueueFullException;
import java.time.Instant;
import java.util.List;
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
 * <p>Thread-safe; writes run one at a time. The library implements it: a contender or
 * {@link CoordinationClient#acquire} hands one out, and nothing else should.
 */
public interface Leadership extends AutoCloseable {

    /** Where a leadership is in its life. Only {@link #ACTIVE} can write. */
    enum State {
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

    /** The role. */
    Role role();

    /** The member holding the role. */
    MemberId member();

    /**
     * The token of this leadership: its term (the grant record's offset; compare these)
     * and the (producer id, epoch) the coordinator reported after the last commit.
     */
    FencingToken token();

    /** The term of this leadership: the same for every write of it, larger for every later grant. */
    long term();

    /** When this leadership began, on this member's clock. */
    Instant grantedAt();

    /** The deadline of the newest lease this member wrote. */
    Instant deadline();

    /** When the next renewal is due: one renew interval after the newest lease. */
    Instant renewAt();

    /** Whether the renew interval has passed since the newest lease. */
    boolean renewDue();

    /**
     * Whether the newest lease's deadline has passed without a renewal (a standby may be
     * challenging). Never blocks, even while a write is in progress.
     */
    boolean expired();

    /** Whether the leadership has not ended and is not being released. */
    boolean isActive();

    /**
     * Where this leadership is in its life. Any thread may end it (a guarded write that
     * is fenced, a producer failure, the expiry watchdog, {@link #close()}); this tells
     * the others how.
     */
    State state();

    /**
     * Writes a new lease, retrying transient failures while the lease lasts.
     *
     * @throws FencedException when the role has a newer epoch: the leadership is over
     */
    void renew();

    /** A guarded write of one record. */
    RecordMetadata write(ProducerRecord<byte[], byte[]> record);

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
    List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records);

    /**
     * Writes these records and commits the input offsets {@code consumed} in one
     * transaction that also renews the lease: consume-transform-produce under the
     * leadership. The records and the offsets become visible together, or, when the
     * leadership is fenced, neither does, so the next holder resumes from the offsets of
     * the last write that returned. Failures and retries as for {@link #write(List)}.
     *
     * @return the metadata of each record, in order
     */
    List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed);

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
    CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record);

    /**
     * Ends the leadership as {@link State#EXPIRED} if its newest lease's deadline passed
     * without a renewal. Never blocks: a renewal that hangs on an unresponsive cluster
     * fails at once, and one that commits afterwards does not revive the leadership.
     *
     * @return whether this call ended it
     */
    boolean expireIfDue();

    /**
     * Gives the leadership up without writing anything: for a holder that cannot or must
     * not write any more (a standby may already hold the role). The producer is closed;
     * the member stays in the roster at its rank. Never blocks.
     */
    void abandon();

    /**
     * Releases the role: writes a lease tombstone (so a standby takes over at once
     * instead of waiting for the deadline), leaves the roster, and closes the producer.
     * A leadership that was already fenced just closes.
     */
    @Override
    void close();
}
