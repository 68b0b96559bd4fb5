package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A third party's view of a role: the fold of the coordination topic plus what the
 * transaction coordinator reports. Taking it joins no group and needs no epoch.
 *
 * @param role the role
 * @param lease the newest lease record, if any
 * @param coordinator what the transaction coordinator reported for the role, taken
 *     before the topic was read; empty when it knows no such id or was not asked
 * @param roster the registered members in registration order, with their ranks
 * @param readUpTo the offset up to which the role's partition was read
 * @param current whether the member the lease names still held the epoch when the
 *     coordinator was asked: the coordinator's (producer id, producer epoch) equals one
 *     that a lease of the current leadership carries (the newest, or a recent one, since
 *     a busy holder may commit between the two reads). The holder writes in every
 *     transaction the value the coordinator will report once it commits, and never a
 *     larger one, so no lease of a deposed holder carries an epoch as new as the one a
 *     challenger's InitProducerId minted: any challenge makes this false. False means
 *     either that no member holds the role, or that a challenger minted a newer epoch;
 *     in both cases the broker already rejects the lease author's writes. It can also
 *     be briefly false for a live holder: while its transaction is being committed,
 *     right after a grant until its confirming lease, and around an epoch rollover
 *     (about every 32 767 transactions) until its next lease.
 */
public record LeadershipStatus(
        Role role,
        Optional<LeaseSnapshot> lease,
        Optional<ProducerState> coordinator,
        List<RankedMember> roster,
        long readUpTo,
        boolean current) {

    public LeadershipStatus {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(coordinator, "coordinator");
        roster = List.copyOf(roster);
    }

    /** The member the newest lease record names, if any. */
    public Optional<MemberId> holder() {
        return lease.map(LeaseSnapshot::holder);
    }

    /**
     * The token the coordinator reports, with the term of the newest lease; {@link
     * FencingToken#NO_EPOCH} when there is no lease or the coordinator knows no epoch.
     */
    public FencingToken token() {
        if (lease.isEmpty() || coordinator.isEmpty()) {
            return FencingToken.NO_EPOCH;
        }
        return FencingToken.of(
                lease.get().token().term(),
                coordinator.get().producerId(),
                coordinator.get().producerEpoch());
    }

    /** The lease's deadline on the holder's clock, if there is a lease. */
    public Optional<Instant> deadline() {
        return lease.map(LeaseSnapshot::deadline);
    }

    /** When the current leadership began on the holder's clock, if there is a lease. */
    public Optional<Instant> grantedAt() {
        return lease.map(LeaseSnapshot::grantedAt);
    }
}
