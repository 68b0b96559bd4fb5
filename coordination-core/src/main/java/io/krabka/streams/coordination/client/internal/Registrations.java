package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RosterEntry;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The client's registrations in the roles' rosters, and the pruning of members that missed their turn. */
final class Registrations {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    /** This client's newest registration of a member for a role: the offset and the time it wrote into it. */
    record Registered(long offset, long registeredAt) {}

    private final CoordinationTransport transport;
    private final InstantSource clock;
    private final Map<Role, Registered> registrations = new ConcurrentHashMap<>();

    Registrations(CoordinationTransport transport, InstantSource clock) {
        this.transport = transport;
        this.clock = clock;
    }

    /** This client's registration for {@code role}, or null. */
    @Nullable
    Registered of(Role role) {
        return registrations.get(role);
    }

    int size() {
        return registrations.size();
    }

    boolean has(Role role) {
        return registrations.containsKey(role);
    }

    /** Writes a registration of {@code me} for {@code role}, stamped with this member's clock. */
    Registered register(Role role, MemberId me) {
        long registeredAt = clock.millis();
        Registered registered = new Registered(transport.register(role, me, registeredAt), registeredAt);
        registrations.put(role, registered);
        return registered;
    }

    /** Forgets the registration, which a release or a leave removed from the roster. */
    void forget(Role role) {
        registrations.remove(role);
    }

    /** Removes {@code me} from the roster of {@code role}; false when this client has no registration to remove. */
    boolean leave(Role role, MemberId me) {
        if (!has(role)) {
            return false;
        }
        transport.deregister(role, me);
        forget(role);
        return true;
    }

    /**
     * The state with {@code me}'s newest registration in it, at the tail of the roster, where
     * the fold will put it: it may not be visible yet, or not at all ({@link #withPending}).
     */
    static RoleState withNewest(RoleState state, MemberId me, Registered registered) {
        if (state.entryOf(me)
                .filter(entry -> entry.offset() >= registered.offset())
                .isPresent()) {
            return state;
        }
        List<RosterEntry> roster = new ArrayList<>(state.roster());
        roster.removeIf(entry -> entry.member().equals(me));
        return withPending(
                new RoleState(state.role(), roster, state.lease(), state.leaseReleasedAt(), state.nextOffset()),
                me,
                registered);
    }

    /**
     * The state with {@code me}'s own registration at the tail of the roster: committed
     * but not visible yet (behind an open transaction that read_committed cannot read past).
     */
    static RoleState withPending(RoleState state, MemberId me, Registered registered) {
        List<RosterEntry> roster = new ArrayList<>(state.roster());
        roster.add(new RosterEntry(me, registered.offset(), registered.registeredAt()));
        return new RoleState(state.role(), roster, state.lease(), state.leaseReleasedAt(), state.nextOffset());
    }

    /**
     * Removes from the roster the members that should have taken the role before
     * {@code me} and did not: the previous holder and every standby due before it
     * ({@link io.krabka.streams.coordination.succession.Succession#dueBefore}). A dead
     * registration would otherwise add a stagger to every later failover. A member pruned
     * while merely slow sees itself missing and registers again, at the tail.
     */
    void prune(Role role, MemberId me, RoleState state, List<MemberId> dueBefore) {
        List<MemberId> silent = new ArrayList<>();
        state.lease()
                .map(LeaseState::member)
                .filter(holder -> !holder.equals(me))
                .ifPresent(silent::add);
        dueBefore.stream().filter(member -> !silent.contains(member)).forEach(silent::add);
        for (MemberId member : silent) {
            try {
                transport.deregister(role, member);
                log.info(
                        "{} took role {} and removed {} from its roster: it did not take the role in its turn",
                        me,
                        role,
                        member);
            } catch (CoordinationException e) {
                log.warn("{} could not remove silent member {} from role {}; it keeps its rank", me, member, role, e);
            }
        }
    }
}
