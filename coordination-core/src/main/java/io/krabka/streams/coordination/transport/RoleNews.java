package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RecordKind;
import org.jspecify.annotations.Nullable;

/**
 * What a committed record of a role was, as far as waking a contender goes.
 *
 * @param lease whether it is a lease record or a lease tombstone (else a registration or
 *     its tombstone)
 * @param member the member it names (the lease's holder, the registrant), or null for a
 *     lease tombstone, which names nobody
 * @param grantedAt a lease record's grant time, {@link #UNKNOWN} for every other record
 * @param deadline a lease record's deadline, {@link #UNKNOWN} for every other record: a
 *     standby that knows this leadership already learns from it that its turn moved later,
 *     without reading the partition
 */
public record RoleNews(boolean lease, @Nullable MemberId member, long grantedAt, long deadline) {

    /** The grant time and deadline of a record that is not a readable lease. */
    public static final long UNKNOWN = Long.MIN_VALUE;

    /** News that carries no lease times: a registration, a tombstone, an undecodable lease. */
    public RoleNews(boolean lease, @Nullable MemberId member) {
        this(lease, member, UNKNOWN, UNKNOWN);
    }

    /** What a record of a role says, for a wake-up; an undecodable value names nobody. */
    public static RoleNews of(CoordinationKey key, byte[] value) {
        if (key.kind() != RecordKind.LEASE) {
            return new RoleNews(false, key.registrant().orElse(null));
        }
        if (value == null) {
            return new RoleNews(true, null);
        }
        try {
            return CoordinationCodec.decodeValue(RecordKind.LEASE, value)
                    .filter(CoordinationRecord.Lease.class::isInstance)
                    .map(CoordinationRecord.Lease.class::cast)
                    .map(lease -> new RoleNews(true, lease.member(), lease.grantedAt(), lease.deadline()))
                    .orElse(new RoleNews(true, null));
        } catch (RuntimeException malformed) {
            return new RoleNews(true, null);
        }
    }
}
