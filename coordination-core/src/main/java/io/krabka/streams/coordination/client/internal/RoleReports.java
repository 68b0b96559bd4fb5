package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
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
        return LeadershipStatus.of(folds.report(role, inUse.test(role), Duration.ZERO), coordinator);
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
            described.put(role, LeadershipStatus.of(states.get(role), reported));
        }
        return described;
    }

    /** The role as the topic shows it, waiting up to {@code maxWait} for news; no coordinator asked. */
    LeadershipStatus observe(Role role, Duration maxWait) {
        return LeadershipStatus.of(folds.report(role, inUse.test(role), maxWait), Optional.empty());
    }
}
