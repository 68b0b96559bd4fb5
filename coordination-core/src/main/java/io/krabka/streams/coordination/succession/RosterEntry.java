package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.MemberId;
import java.util.Objects;

/**
 * One registered member of a role, in the roster's offset order.
 *
 * @param member the member
 * @param offset the offset of its newest registration record: its join sequence
 * @param registeredAt the member's wall clock at registration, in epoch milliseconds
 */
public record RosterEntry(MemberId member, long offset, long registeredAt) {

    public RosterEntry {
        Objects.requireNonNull(member, "member");
    }
}
