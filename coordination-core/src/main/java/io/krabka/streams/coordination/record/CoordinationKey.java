package io.krabka.streams.coordination.record;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The decoded key of one {@code __coordination_state} record. A registration key
 * names a role and a member; a lease key names only a role, so every lease of a role
 * shares one key and compaction keeps the newest.
 *
 * @param kind which record this key belongs to
 * @param role the role
 * @param member the member for a registration; {@code null} for a lease (the wire
 *     carries an empty string)
 */
public record CoordinationKey(
        RecordKind kind, Role role, @Nullable MemberId member) {

    /** Checks that a registration key has a member and a lease key has none. */
    public CoordinationKey {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(role, "role");
        if (kind == RecordKind.REGISTRATION && member == null) {
            throw new IllegalArgumentException("a registration key needs a member");
        }
        if (kind == RecordKind.LEASE && member != null) {
            throw new IllegalArgumentException("a lease key has no member, but got " + member);
        }
    }

    /** The key of {@code member}'s registration for {@code role}. */
    public static CoordinationKey registration(Role role, MemberId member) {
        return new CoordinationKey(RecordKind.REGISTRATION, role, Objects.requireNonNull(member, "member"));
    }

    /** The key of {@code role}'s lease. */
    public static CoordinationKey lease(Role role) {
        return new CoordinationKey(RecordKind.LEASE, role, null);
    }

    /** The member of a registration key; empty for a lease key. */
    public Optional<MemberId> registrant() {
        return Optional.ofNullable(member);
    }
}
