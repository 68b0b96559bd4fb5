package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.Leadership.State;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which lease transactions a leadership writes, and when: the grant and the confirming
 * leases after it, every renewal and guarded write (retried while the lease lasts), and
 * the release's tombstone. Runs each {@link LeaseTransaction} under the leadership's lock,
 * one at a time.
 */
final class LeaseWriter {

    // The leadership's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    private static final int MAX_CONFIRMS = 3;
    private static final Duration FIRST_RETRY = Duration.ofMillis(50);
    private static final Duration LAST_RETRY = Duration.ofSeconds(1);

    private final LeadershipTerm leadership;
    // The leadership itself: the lock that runs its transactions one at a time (the send
    // queue's lock is taken inside it, never around it).
    private final Object lock;
    private final LeadershipLifecycle life;
    private final TermHost client;
    private final CoordinationTransport transport;
    private final Role role;
    private final MemberId member;
    private final LeaseClock clock;
    private final LeaseTransaction transaction;

    LeaseWriter(
            LeadershipTerm leadership,
            TermHost client,
            LeadershipLifecycle life,
            CoordinationTransport transport,
            LeaseClock clock,
            LeaseTransaction transaction) {
        this.leadership = leadership;
        this.lock = leadership;
        this.life = life;
        this.client = client;
        this.transport = transport;
        this.role = leadership.role();
        this.member = leadership.member();
        this.clock = clock;
        this.transaction = transaction;
    }

    /**
     * Writes the grant lease with the epoch described right after InitProducerId (a
     * race there can only make this write fail), takes its offset as the term, and, with
     * {@code confirm}, learns the step and writes a confirming lease so {@code current()}
     * turns true (otherwise {@link #confirm()} does that later).
     *
     * <p>A grant whose commit got no answer until its lease deadline is resolved like any
     * write ({@link Leadership#write(List)}): one that committed is a grant, with its lease
     * record's offset as the term, even though its producer cannot go on (the leadership is
     * then already {@link Leadership.State#FAILED}); one that was aborted throws
     * {@link FencedException}; one that neither the coordinator nor the log decide throws
     * {@link CommitOutcomeUnknownException}.
     */
    void grant(boolean confirm) {
        if (!confirm) {
            transaction.learnGrantLater();
        }
        transact(List.of(), ConsumedOffsets.NONE, false, false);
        if (confirm && life.active()) {
            confirm();
        }
        log.info("{} was granted role {} with {}", member, role, transaction.token());
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
            synchronized (lock) {
                if (transaction.lastLeasePredicted() || attempt > 0 && !life.active()) {
                    return;
                }
                transact(List.of(), ConsumedOffsets.NONE, false, false);
            }
        }
    }

    /** Writes a new lease, retrying transient failures while the lease lasts. */
    void renew() {
        client.instrumentation()
                .around(
                        CoordinationInstrumentation.Operation.RENEW,
                        role,
                        member,
                        transaction::term,
                        0,
                        () -> retrying(List.of(), ConsumedOffsets.NONE, false));
        confirmIfBehind();
    }

    /**
     * After a lease that carried the last epoch this member knew rather than a prediction
     * (a transaction failed, a describe failed, the producer reconnected), writes the
     * confirming leases now rather than over the next renewals: a lease behind the
     * coordinator's epoch shows standbys an epoch that no lease explains, so a crash in
     * that window would cost them a whole extra lease. Only a fence ends the renewal: the
     * renewal itself committed, so any other failure here waits for the next renewal.
     */
    private void confirmIfBehind() {
        // Not for a thread being stopped (its describes fail at once, so every confirm would
        // be behind again): the next renewal confirms instead.
        if (!life.active()
                || life.releasing()
                || transaction.lastLeasePredicted()
                || Thread.currentThread().isInterrupted()) {
            return;
        }
        try {
            confirm();
        } catch (CoordinationException failed) {
            // Never the caller's: its own transaction committed, and a write that returns must
            // say so. A confirm that was fenced ended the leadership, which the next call sees.
            log.debug(
                    "Role {} wrote a lease behind its epoch, and the leases that carry it again failed: {}",
                    role,
                    failed.getMessage());
        }
    }

    /**
     * Writes {@code records} and commits {@code consumed} in one lease transaction,
     * retrying transient failures while the lease lasts; returns the records' metadata.
     *
     * @param accepted whether these are sends accepted before a release began: they are still written
     */
    List<RecordMetadata> write(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, boolean accepted) {
        List<RecordMetadata> written = client.instrumentation()
                .around(
                        CoordinationInstrumentation.Operation.WRITE,
                        role,
                        member,
                        transaction::term,
                        records.size(),
                        () -> retrying(records, consumed, accepted));
        confirmIfBehind();
        return written;
    }

    private List<RecordMetadata> retrying(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, boolean accepted) {
        Duration backoff = FIRST_RETRY;
        while (true) {
            try {
                List<RecordMetadata> written = transact(records, consumed, false, accepted);
                return written.subList(1, written.size());
            } catch (RetriableCoordinationException e) {
                if (clock.expired()) {
                    throw e;
                }
                log.info(
                        "A transaction of role {} failed transiently; retrying in {}: {}",
                        role,
                        DurationText.of(backoff),
                        e.getMessage());
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
     * Releases the role once the guarded write in flight finished (the lock): leaves the
     * roster, writes the lease tombstone, and ends the leadership as released. A
     * leadership that already ended just ends.
     */
    void release() {
        synchronized (lock) {
            if (life.state() != State.ACTIVE) {
                return;
            }
            try {
                // Leave the roster first, so the next standby ranks 0 when it sees the tombstone.
                transport.deregister(role, member);
                transact(List.of(), ConsumedOffsets.NONE, true, false);
                log.info("{} released role {} ({})", member, role, transaction.token());
                // The commit returns before the coordinator wrote its markers, and a marker
                // need not wake a standby's read_committed fetch (it waits up to its
                // fetch.max.wait); a plain append does. So once the coordinator completed
                // the transaction, append the registration's tombstone once more (a no-op
                // for every reader): a standby still waiting reads the release at once.
                if (transaction.awaitComplete()) {
                    transport.deregister(role, member);
                }
            } catch (FencedException superseded) {
                if (life.state() == State.RELEASED) {
                    log.info(
                            "{} released role {}: the next standby took it over before the lease tombstone committed",
                            member,
                            role);
                } else {
                    log.info("{} closed role {}, which had already ended: {}", member, role, superseded.getMessage());
                }
            } finally {
                leadership.end(State.RELEASED);
                client.released(leadership);
            }
        }
    }

    /** {@link LeaseTransaction#confirmFenced()}, under the lock: no own commit moves the epoch meanwhile. */
    boolean confirmFenced() {
        synchronized (lock) {
            return transaction.confirmFenced();
        }
    }

    private List<RecordMetadata> transact(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, boolean release, boolean accepted) {
        synchronized (lock) {
            return transaction.run(records, consumed, release, accepted);
        }
    }
}
