package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.MemberId;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How the roles one member reads are shared out, as its own folds show them: what the
 * {@link io.krabka.streams.coordination.Balance#SPREAD} rules decide on.
 *
 * @param roles how many roles the member reads
 * @param held per member, how many of those roles its newest lease names (none for a lease
 *     that ran out with no one to take it over: {@link Succession#abandoned})
 * @param live the members the reader counts as alive: itself, every member whose lease
 *     has not run out, every member that registered within the last lease, less those a
 *     handover found silent
 */
public record Shares(int roles, Map<MemberId, Integer> held, Set<MemberId> live) {

    public Shares {
        held = Map.copyOf(held);
        live = Set.copyOf(live);
        if (roles < 0) {
            throw new IllegalArgumentException("roles must not be negative, but is " + roles);
        }
    }

    /** How many of the roles {@code member} holds. */
    public int held(MemberId member) {
        return held.getOrDefault(Objects.requireNonNull(member, "member"), 0);
    }

    /**
     * These shares with {@code member} holding {@code count} roles: a member counts its own
     * roles exactly (its grants and challenges in flight), which its folds show late.
     */
    public Shares withHeld(MemberId member, int count) {
        Map<MemberId, Integer> exact = new HashMap<>(held);
        exact.put(Objects.requireNonNull(member, "member"), count);
        return new Shares(roles, exact, live);
    }

    /** The most roles one live member holds in an even share: {@code ceil(roles / live)}. */
    public int fairShare() {
        int members = Math.max(1, live.size());
        return (roles + members - 1) / members;
    }

    /** Whether {@code member} holds its share already: one role more would put it over. */
    public boolean full(MemberId member) {
        return held(member) >= fairShare();
    }
}
