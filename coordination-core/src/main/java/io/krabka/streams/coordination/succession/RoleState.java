package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * An immutable snapshot of one role's records, folded in offset order by a
 * {@link RoleStateBuilder}.
 *
 * @param role the role
 * @param roster the registered members in the offset order of their newest
 *     registration; a member that registers again moves to the tail
 * @param lease the current lease, empty when none was written or it was released
 * @param leaseReleasedAt the record timestamp of the tombstone that cleared the last
 *     lease, when the current lease is empty because of one
 * @param nextOffset the offset after the last record folded in
 */
public record RoleState(
        Role role,
        List<RosterEntry> roster,
        Optional<LeaseState> lease,
        OptionalLong leaseReleasedAt,
        long nextOffset) {

    public RoleState {
        Objects.requireNonNull(role, "role");
        roster = List.copyOf(roster);
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(leaseReleasedAt, "leaseReleasedAt");
    }

    /** The state of a role with no records. */
    public static RoleState empty(Role role) {
        return new RoleState(role, List.of(), Optional.empty(), OptionalLong.empty(), 0L);
    }

    /** Returns a builder that folds records into a fresh state of {@code role}. */
    public static RoleStateBuilder builder(Role role) {
        return new RoleStateBuilder(role);
    }

    /**
     * Whether {@code member} registered after the current lease was written: a holder back
     * after its lease ran out, or a standby that joined since. False with no lease.
     */
    public boolean registeredSinceLease(MemberId member) {
        return lease.isPresent()
                && entryOf(member)
                        .filter(entry -> entry.offset() > lease.get().offset())
                        .isPresent();
    }

    /** The roster entry of {@code member}, if it is registered. */
    public Optional<RosterEntry> entryOf(MemberId member) {
        return roster.stream().filter(entry -> entry.member().equals(member)).findFirst();
    }

    /**
     * The rank of {@code member} among the standbys: its position in the roster, not
     * counting the member the current lease names (unless that is {@code member}
     * itself, which happens when a holder restarted and lost its epoch).
     */
    public OptionalInt rankOf(MemberId member) {
        MemberId holder =
                lease.map(LeaseState::member).filter(h -> !h.equals(member)).orElse(null);
        int rank = 0;
        for (RosterEntry entry : roster) {
            if (entry.member().equals(member)) {
                return OptionalInt.of(rank);
            }
            if (!entry.member().equals(holder)) {
                rank++;
            }
        }
        return OptionalInt.empty();
    }
}
