package io.krabka.streams.coordination;

import java.time.Instant;
import java.util.Objects;

/**
 * One registered member of a role as {@code LeadershipStatus} reports it.
 *
 * @param member the member
 * @param rank its rank among the standbys (0 challenges first), or -1 for the member
 *     the current lease names
 * @param registrationOffset the offset of its newest registration: its join sequence
 * @param registeredAt the member's clock when it registered
 */
public record RankedMember(MemberId member, int rank, long registrationOffset, Instant registeredAt) {

    public RankedMember {
        Objects.requireNonNull(member, "member");
        Objects.requireNonNull(registeredAt, "registeredAt");
    }

    /** Whether the current lease names this member. */
    public boolean holder() {
        return rank < 0;
    }
}
