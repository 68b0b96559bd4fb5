package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.MemberId;

/**
 * What a committed record of a role was, as far as waking a contender goes.
 *
 * @param lease whether it is a lease record or a lease tombstone (else a registration or
 *     its tombstone)
 * @param member the member it names (the lease's holder, the registrant), or null for a
 *     lease tombstone, which names nobody
 */
public record RoleNews(boolean lease, MemberId member) {
}
