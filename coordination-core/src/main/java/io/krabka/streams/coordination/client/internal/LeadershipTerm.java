package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The library's {@link Leadership}: one member's hold on one role, from the grant until it
 * is fenced or closed. Its writes go through the lease transaction and the lease writer;
 * its end through the lifecycle. The contract of each public method is on the interface.
 */
public final class LeadershipTerm implements Leadership {

    private final TermHost engine;
    private final RoleEpoch epoch;
    private final Role role;
    private final MemberId member;
    private final long grantedAt;
    private final LeadershipLifecycle life;
    private final LeaseClock clock;
    private final LeaseTransaction transaction;
    private final LeaseWriter lease;
    private final GroupCommit sends;

    private LeadershipTerm(
            TermHost engine,
            CoordinationTransport transport,
            RoleEpoch epoch,
            MemberId member,
            ProducerState initial,
            long leaseSearchFrom) {
        this.engine = engine;
        this.epoch = epoch;
        this.role = epoch.role();
        this.member = member;
        this.grantedAt = engine.grantTime(epoch.role());
        this.life = new LeadershipLifecycle(member, role);
        this.clock = new LeaseClock(engine.config(), engine.runtime());
        this.transaction = new LeaseTransaction(
                this, engine.config(), engine.runtime(), life, transport, epoch, clock, initial, leaseSearchFrom);
        this.lease = new LeaseWriter(this, engine, life, transport, clock, transaction);
        this.sends = new GroupCommit(engine.runtime(), engine.sendBatching(), role, life, lease);
    }

    /** What the coordinator reports right after {@code epoch}'s InitProducerId: the grant's starting point. */
    static ProducerState describedAfterInit(CoordinationTransport transport, RoleEpoch epoch) {
        return transport
                .describeEpoch(epoch.role())
                .orElseThrow(() -> new RetriableCoordinationException(
                        "the coordinator reports no epoch for role " + epoch.role() + " right after InitProducerId",
                        null));
    }

    /** A grant's leadership, from {@code initial}, what {@link #describedAfterInit} reported. */
    static LeadershipTerm grant(
            TermHost engine,
            CoordinationTransport transport,
            RoleEpoch epoch,
            MemberId member,
            boolean confirm,
            long leaseSearchFrom,
            ProducerState initial) {
        LeadershipTerm leadership = new LeadershipTerm(engine, transport, epoch, member, initial, leaseSearchFrom);
        leadership.lease.grant(confirm);
        return leadership;
    }

    /** Writes confirming leases until {@code current()} turns true, as {@link LeaseWriter#confirm()} says. */
    public void confirm() {
        lease.confirm();
    }

    @Override
    public Role role() {
        return role;
    }

    @Override
    public MemberId member() {
        return member;
    }

    @Override
    public FencingToken token() {
        return transaction.token();
    }

    @Override
    public long term() {
        return transaction.term();
    }

    @Override
    public Instant grantedAt() {
        return Instant.ofEpochMilli(grantedAt);
    }

    @Override
    public Instant deadline() {
        return clock.deadline();
    }

    @Override
    public Instant renewAt() {
        return clock.renewAt();
    }

    @Override
    public boolean renewDue() {
        return untilRenew().compareTo(Duration.ZERO) <= 0;
    }

    /** How long until the next renewal is due, by whichever clock says so first (see {@link LeaseClock#untilRenew}). */
    Duration untilRenew() {
        return clock.untilRenew();
    }

    @Override
    public boolean expired() {
        return clock.expired();
    }

    /** How long until {@link #expired()} turns true, by whichever clock says so first. */
    public Duration untilExpired() {
        return clock.untilExpired();
    }

    @Override
    public boolean isActive() {
        return life.active();
    }

    @Override
    public State state() {
        return life.state();
    }

    @Override
    public void renew() {
        lease.renew();
    }

    @Override
    public RecordMetadata write(ProducerRecord<byte[], byte[]> record) {
        return write(List.of(record)).get(0);
    }

    @Override
    public List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records) {
        return write(records, ConsumedOffsets.NONE);
    }

    @Override
    public List<RecordMetadata> write(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(consumed, "consumed");
        return lease.write(records, consumed, false);
    }

    @Override
    public CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        Objects.requireNonNull(record, "record");
        return sends.send(record);
    }

    /** Ends this leadership as {@link State#FENCED} if the coordinator reports a newer epoch: {@link LeaseTransaction#confirmFenced}. */
    public boolean confirmFenced() {
        return lease.confirmFenced();
    }

    /** Ends the leadership in {@code newState} unless it already ended; never blocks. */
    public boolean end(State newState) {
        if (!life.end(newState)) {
            return false;
        }
        // Closing the producer also makes a transaction that blocks on it fail at once.
        epoch.close();
        // Sends blocked for room fail now rather than at their maxBlock.
        sends.wakeAll();
        engine.ended(this);
        return true;
    }

    @Override
    public boolean expireIfDue() {
        return expired() && end(State.EXPIRED);
    }

    @Override
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
