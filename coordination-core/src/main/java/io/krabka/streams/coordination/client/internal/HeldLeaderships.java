package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's live leaderships, by role: a grant adds its own, a release or an end takes
 * it out, and closing the client releases what is left. One per role: the transport holds
 * one transactional producer per role.
 */
final class HeldLeaderships {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    private final Map<Role, LeadershipTerm> held = new ConcurrentHashMap<>();

    /** Whether this client holds {@code role} through a leadership that is still active. */
    boolean holdsActive(Role role) {
        LeadershipTerm current = held.get(role);
        return current != null && current.isActive();
    }

    /** Whether some leadership of {@code role}, active or not yet taken out, is here. */
    boolean holds(Role role) {
        return held.containsKey(role);
    }

    /** How many roles {@code member} holds through this client with a leadership that is still active. */
    int activeOf(MemberId member) {
        return (int) held.values().stream()
                .filter(l -> l.member().equals(member) && l.isActive())
                .count();
    }

    int size() {
        return held.size();
    }

    void granted(LeadershipTerm leadership) {
        held.put(leadership.role(), leadership);
    }

    /** Takes out {@code leadership}, not a later one of the same role. */
    void ended(LeadershipTerm leadership) {
        held.remove(leadership.role(), leadership);
    }

    /** Releases every leadership still held; a release that fails is logged, and the others still run. */
    void releaseAll() {
        for (LeadershipTerm leadership : List.copyOf(held.values())) {
            try {
                leadership.close();
            } catch (RuntimeException e) {
                log.warn("Releasing role {} on close failed", leadership.role(), e);
            }
        }
    }
}
