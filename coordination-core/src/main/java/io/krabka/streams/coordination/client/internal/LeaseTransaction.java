package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeadershipReleasedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.Leadership.State;
import io.krabka.streams.coordination.fencing.TokenHeaders;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one lease transaction of a leadership and tells what became of it: the role's
 * lease record (or its tombstone) first, with the epoch {@link EpochPrediction} expects
 * the coordinator to report once the transaction commits, then the records. A commit
 * whose epoch was not predicted is learned from a describe; a fence ends the leadership;
 * a producer that cannot go on ends it as fenced or failed, as the coordinator says; a
 * commit that got no answer is resolved by {@link CommitOutcomeResolver}. Keeps what the
 * transactions established: the token, and where the next lease could be.
 *
 * <p>Not thread-safe: {@link LeaseWriter} runs it under the leadership's lock.
 *
 * <p>Size: one class, since every outcome of a transaction (a commit, a fence, an unknown
 * commit) updates the token and the next lease's place that the next transaction reads.
 */
final class LeaseTransaction {

    // The leadership's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    private final LeadershipTerm leadership;
    private final LeadershipLifecycle life;
    private final LeaseConfig config;
    private final CoordinationRuntime runtime;
    private final CoordinationTransport transport;
    private final RoleEpoch epoch;
    private final Role role;
    private final MemberId member;
    private final long grantedAt;
    private final int partition;
    private final LeaseClock clock;
    private final CommitOutcomeResolver outcomes;
    private long term = -1;
    // Where a lease of this leadership could first be: after the last one committed (or,
    // before the grant, after the role state the challenge decided on). Guarded by the lock.
    private long leaseSearchFrom;
    // Which epoch the next commit leaves the producer at. Guarded by the lock.
    private final EpochPrediction epochs;
    // Volatile, and published whole: token() never waits for the lock, which a write stuck
    // on an unresponsive cluster may hold for a whole timeout (the contender reads it meanwhile).
    private volatile FencingToken published = FencingToken.NO_EPOCH;
    // Whether the grant's commit is learned from a describe only before the next use of
    // the epoch (a contender's grant: the describe then stays off the handover's path),
    // and the learn still owed for it. Guarded by the lock.
    private boolean learnGrantLater;
    private EpochPrediction.@Nullable Transaction owedLearn;
    private long owedGeneration;

    /**
     * @param initial the coordinator's report right after InitProducerId
     * @param leaseSearchFrom an offset of the role's partition at or before the grant's lease record
     */
    LeaseTransaction(
            LeadershipTerm leadership,
            LeaseConfig config,
            CoordinationRuntime runtime,
            LeadershipLifecycle life,
            CoordinationTransport transport,
            RoleEpoch epoch,
            LeaseClock clock,
            ProducerState initial,
            long leaseSearchFrom) {
        this.leadership = leadership;
        this.life = life;
        this.config = config;
        this.runtime = runtime;
        this.transport = transport;
        this.epoch = epoch;
        this.role = leadership.role();
        this.member = leadership.member();
        this.grantedAt = leadership.grantedAt().toEpochMilli();
        this.partition = RolePartitioner.partitionFor(role, transport.partitionCount());
        this.clock = clock;
        this.epochs = new EpochPrediction(initial, epoch.featureGeneration());
        this.leaseSearchFrom = leaseSearchFrom;
        this.outcomes = new CommitOutcomeResolver(leadership, runtime, transport, partition);
    }

    /**
     * The grant's commit is learned (a describe) only before this leadership's next
     * transaction or epoch check, not before the grant returns: {@link LeaseWriter#confirm}
     * pays for it, off the handover's path. Until then the token carries the epoch reported
     * right after InitProducerId.
     */
    void learnGrantLater() {
        learnGrantLater = true;
    }

    /** Learns what the coordinator reported after the grant's commit, if that is still owed. */
    private void payOwedLearn() {
        if (owedLearn != null) {
            EpochPrediction.Transaction owed = owedLearn;
            owedLearn = null;
            learn(owed, owedGeneration);
            publish();
        }
    }

    /** The token: the term and the (producer id, epoch) the coordinator reported after the last commit. */
    FencingToken token() {
        return published;
    }

    /** The grant lease's offset; -1 until it committed. */
    long term() {
        return term;
    }

    /** Whether the newest committed lease carried a predicted epoch, so {@code current()} is true for it. */
    boolean lastLeasePredicted() {
        return epochs.lastLeasePredicted();
    }

    /** Publishes the token after its parts changed; called with the lock held. */
    private void publish() {
        if (term >= 0) {
            published = FencingToken.of(term, epochs.producerId(), epochs.epoch());
        }
    }

    /**
     * Runs one transaction: the lease record (or, for a {@code release}, its tombstone)
     * first, then {@code records}; returns all their metadata. Refused once the leadership
     * ended, and while it is being released unless it is the release's own or writes sends
     * {@code accepted} before.
     */
    List<RecordMetadata> run(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, boolean release, boolean accepted) {
        if (life.state() != State.ACTIVE || (life.releasing() && !release && !accepted)) {
            throw life.refusal();
        }
        payOwedLearn();
        long now = runtime.clock().instant().toEpochMilli();
        long nowNanos = runtime.nanoTime();
        EpochPrediction.Transaction predicted = epochs.begin(epoch.featureGeneration());
        long leaseDeadline = now + config.duration().toMillis();
        byte[] leaseValue = release
                ? null
                : CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                        member, epochs.producerId(), predicted.leaseEpoch(), grantedAt, leaseDeadline));
        List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(records.size() + 1);
        // The timestamp is on the lease clock: after a release, standbys anchor on it.
        batch.add(new ProducerRecord<>(
                transport.topic(),
                partition,
                now,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                leaseValue));
        if (!records.isEmpty() && term < 0) {
            throw new IllegalStateException("records of role " + role + " before its grant committed");
        }
        // Stamped with the lease's own token, so a consumer can refuse a deposed leader's records.
        if (!records.isEmpty()) {
            FencingToken stamp = FencingToken.of(term, epochs.producerId(), predicted.leaseEpoch());
            batch.addAll(TokenHeaders.stampAll(records, role, stamp));
        }
        List<RecordMetadata> written;
        // A commit that times out is sent again until the lease ends: until the current
        // lease's deadline, or the new one's for the grant (nothing to outlast before it).
        long currentDeadline = clock.deadline().toEpochMilli();
        long retryUntil = currentDeadline > 0 ? currentDeadline : leaseDeadline;
        try {
            written = epoch.transact(batch, consumed, Duration.ofMillis(Math.max(0, retryUntil - now)));
        } catch (CommitOutcomeUnknownException unknown) {
            if (release) {
                // A tombstone's outcome changes nothing for the release: a standby whose
                // InitProducerId fenced it took the role over, and one that did not land leaves
                // a lease that runs out. The release ends as a fence during a release does.
                epochs.lost();
                leadership.end(supersededAs(true));
                throw FencedException.ended(
                        "the tombstone of role " + role + " may not have committed (" + unknown.getMessage()
                                + "); the release of " + member + " is done",
                        unknown,
                        leadership.state().endCause().orElse(LeadershipEndCause.RELEASED));
            }
            written = outcomes.resolve(unknown, batch, versionOf(predicted), epochs, leaseSearchFrom);
            epochs.lost();
            if (written.get(0).hasOffset()) {
                if (term < 0) {
                    term = written.get(0).offset();
                }
                leaseSearchFrom = written.get(0).offset() + 1;
            }
            clock.written(now, nowNanos, leaseDeadline);
            publish();
            return written;
        } catch (FencedException fenced) {
            leadership.end(supersededAs(release));
            if (leadership.state() == State.RELEASED && !(fenced instanceof LeadershipReleasedException)) {
                // Fenced during this member's own release: a planned end, as the leadership says.
                // A FencedException is always built with a message: pass it on as it is.
                String message = Objects.requireNonNullElse(fenced.getMessage(), fenced.toString());
                throw new LeadershipReleasedException(message, fenced);
            }
            throw fenced;
        } catch (CoordinationException e) {
            // An abort moves the epoch under transaction version 2: learn it again.
            epochs.lost();
            if (life.state() != State.ACTIVE) {
                // Ended meanwhile by another thread (the watchdog closed the producer under it).
                throw life.ended(e);
            }
            if (!epoch.usable()) {
                throw unusable(e, release);
            }
            throw e;
        }
        clock.written(now, nowNanos, leaseDeadline);
        leaseSearchFrom = written.get(0).offset() + 1;
        boolean grant = term < 0;
        if (grant) {
            // The grant's lease: its offset is the term.
            term = written.get(0).offset();
        }
        long end = epoch.featureGeneration();
        if (!epochs.committed(predicted, end)) {
            if (grant && learnGrantLater) {
                owedLearn = predicted;
                owedGeneration = end;
            } else {
                learn(predicted, end);
            }
        }
        publish();
        return written;
    }

    /**
     * The transaction version {@code transaction} ran under, as far as this member knows: the
     * step of its own last commit, trusted only when the producer's features did not change
     * since (a prediction) and after a commit that succeeded, so after the epoch read right
     * after InitProducerId proved its own.
     */
    private CommitOutcome.Version versionOf(EpochPrediction.Transaction transaction) {
        if (!transaction.predicted()) {
            return CommitOutcome.Version.UNKNOWN;
        }
        return epochs.step() == 1
                ? CommitOutcome.Version.TWO
                : epochs.step() == 0 ? CommitOutcome.Version.ONE : CommitOutcome.Version.UNKNOWN;
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
            reported = transport.describeEpoch(role, timeUntil(clock.renewAt())).orElse(null);
        } catch (CoordinationException e) {
            log.debug("Could not describe role {} after a commit; the next lease is conservative", role, e);
            epochs.lost();
            return;
        }
        epochs.learned(transaction, reported, generation);
    }

    /**
     * How a leadership ends that a newer epoch superseded. During its own release, before
     * its lease ran out, that is the next standby taking over: the holder left the roster
     * first, which standbys act on while the tombstone commits, so the handover is the
     * release (RELEASED). Otherwise, and for a release begun after the lease ran out (a
     * standby may have taken over on expiry), the leadership was deposed (FENCED).
     */
    private State supersededAs(boolean release) {
        return release && !clock.expired() ? State.RELEASED : State.FENCED;
    }

    /**
     * The producer failed beyond recovery, so this leadership cannot write again. If the
     * coordinator reports another epoch, a newer one fenced it; otherwise it ended on the
     * failure alone. Either way the member must acquire anew. Only for a transaction that
     * failed before its commit was sent (one sent and unanswered is resolved by
     * {@link CommitOutcomeResolver#resolve}): so nothing of it was written, which the
     * FencedException says.
     */
    private CoordinationException unusable(CoordinationException failure, boolean release) {
        boolean superseded;
        try {
            superseded = transport
                    .describeEpoch(role, timeUntil(clock.deadline()))
                    .map(epochs::supersededBy)
                    .orElse(true);
        } catch (CoordinationException describeFailed) {
            failure.addSuppressed(describeFailed);
            superseded = false;
        }
        if (superseded) {
            leadership.end(supersededAs(release));
            return FencedException.ended(
                    "the producer of role " + role + " failed and a newer epoch exists: " + failure.getMessage(),
                    failure,
                    leadership.state().endCause().orElse(LeadershipEndCause.FENCED));
        }
        leadership.end(State.FAILED);
        return new FencedException(
                "the producer of role " + role + " failed beyond recovery, so the leadership of " + member
                        + " ended; acquire the role anew",
                failure,
                LeadershipEndCause.FAILED);
    }

    /**
     * Asks the transaction coordinator whether a newer epoch exists for the role, and
     * ends this leadership as {@link State#FENCED} if so. For a holder that saw a lease
     * naming another member: the coordinator decides, not a record that any member with
     * Write on the topic could have written. Runs under the lock, so no own commit moves
     * the epoch between the describe and the comparison.
     *
     * @return whether the leadership is fenced
     * @throws CoordinationException when the coordinator could not be asked
     */
    boolean confirmFenced() {
        if (life.state() == State.ACTIVE) {
            payOwedLearn();
        }
        if (life.state() == State.ACTIVE
                && transport
                        .describeEpoch(role, timeUntil(clock.deadline()))
                        .map(epochs::newerThanOwn)
                        .orElse(true)) {
            leadership.end(State.FENCED);
        }
        return life.state() == State.FENCED;
    }

    /**
     * Waits, briefly, until the coordinator completed this member's last transaction;
     * gives up quietly after {@link CommitOutcomeResolver#COMPLETION_WAIT}: it only speeds the handover up.
     *
     * @return false when interrupted (the caller is stopping in a hurry), true otherwise
     */
    boolean awaitComplete() {
        Optional<ProducerState> last = outcomes.describeUntil(ProducerState::transactionComplete);
        return last.isEmpty()
                || last.get().transactionComplete()
                || !Thread.currentThread().isInterrupted();
    }

    /** How long until {@code instant}, for bounding a describe by the lease; zero once it passed. */
    private Duration timeUntil(Instant instant) {
        Duration left = Duration.between(runtime.clock().instant(), instant);
        return left.isNegative() ? Duration.ZERO : left;
    }
}
