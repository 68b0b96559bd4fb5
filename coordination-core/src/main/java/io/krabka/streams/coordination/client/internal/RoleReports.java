package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RosterEntry;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the client reports of roles ({@link CoordinationClient#describe(Role)},
 * {@link CoordinationClient#describe(Collection)}, {@link CoordinationClient#observe}):
 * the role's fold of the coordination topic and, for a describe, what the transaction
 * coordinator says of its epoch. Joins no group and takes no epoch.
 */
final class RoleReports {

    private final CoordinationTransport transport;
    private final RoleFolds folds;
    // Whether something of this client uses the role (a contender, an acquire): then its fold is shared.
    private final java.util.function.Predicate<Role> inUse;

    RoleReports(CoordinationTransport transport, RoleFolds folds, java.util.function.Predicate<Role> inUse) {
        this.inUse = inUse;
        this.transport = transport;
        this.folds = folds;
    }

    LeadershipStatus describe(Role role) {
        // The coordinator first: the topic, read after it, holds every lease written up to
        // that moment, and a deposition before this call always shows as a mismatch.
        Optional<ProducerState> coordinator = transport.describeEpoch(role);
        return status(folds.report(role, inUse.test(role), Duration.ZERO), coordinator);
    }

    /** The status of every distinct role of {@code roles}, in their order, from the describe folds. */
    Map<Role, LeadershipStatus> describe(Collection<Role> roles) {
        List<Role> distinct = List.copyOf(new LinkedHashSet<>(roles));
        if (distinct.isEmpty()) {
            return Map.of();
        }
        // The coordinator first, as for one role: the reads after it hold every lease
        // written up to that moment.
        Map<Role, Optional<ProducerState>> coordinator = transport.describeEpochs(distinct);
        Map<Role, RoleState> states = folds.readMany(distinct);
        Map<Role, LeadershipStatus> described = new LinkedHashMap<>();
        for (Role role : distinct) {
            Optional<ProducerState> reported = coordinator.get(role);
            if (reported == null) {
                throw new IllegalStateException("the transport described no epoch for role " + role + ": "
                        + transport.getClass().getName() + " breaks the contract of describeEpochs");
            }
            described.put(role, status(Objects.requireNonNull(states.get(role)), reported));
        }
        return described;
    }

    /** The role as the topic shows it, waiting up to {@code maxWait} for news; no coordinator asked. */
    LeadershipStatus observe(Role role, Duration maxWait) {
        return status(folds.report(role, inUse.test(role), maxWait), Optional.empty());
    }

    /** A third party's view of the role of {@code state}, with what the coordinator reported. */
    static LeadershipStatus status(RoleState state, Optional<ProducerState> coordinator) {
        List<RankedMember> roster = new ArrayList<>();
        Optional<MemberId> holder = state.lease().map(LeaseState::member);
        for (RosterEntry entry : state.roster()) {
            int rank = holder.filter(entry.member()::equals).isPresent()
                    ? -1
                    : state.rankOf(entry.member()).orElseThrow();
            roster.add(
                    new RankedMember(entry.member(), rank, entry.offset(), Instant.ofEpochMilli(entry.registeredAt())));
        }
        boolean current = state.lease().isPresent()
                && coordinator.isPresent()
                && state.lease()
                        .get()
                        .wrote(coordinator.get().producerId(), coordinator.get().producerEpoch());
        Optional<LeaseSnapshot> lease = state.lease()
                .map(l -> new LeaseSnapshot(
                        l.member(), l.token(), Instant.ofEpochMilli(l.grantedAt()), l.deadlineInstant()));
        return new LeadershipStatus(state.role(), lease, coordinator, roster, state.nextOffset(), current);
    }
}
