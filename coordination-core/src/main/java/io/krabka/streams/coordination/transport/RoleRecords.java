package io.krabka.streams.coordination.transport;

import java.util.List;

/**
 * The committed records of a role's partition from a position up to the partition's
 * end (its last stable offset). The partition may hold records of other roles.
 *
 * @param records the records, in offset order
 * @param nextOffset the position after the read; it may lie past the last record
 *     (transaction markers and compacted offsets take no record)
 */
public record RoleRecords(List<RawRecord> records, long nextOffset) {

    public RoleRecords {
        records = List.copyOf(records);
    }
}
