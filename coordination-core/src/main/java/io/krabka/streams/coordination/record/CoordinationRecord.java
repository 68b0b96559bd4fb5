package io.krabka.streams.coordination.record;

import io.krabka.streams.coordination.MemberId;
import java.util.Objects;

/**
 * The decoded value of one {@code __coordination_state} record. A tombstone (null
 * value) is not a record: it is the absence of one, and {@link CoordinationCodec}
 * decodes it to an empty {@code Optional}.
 */
public sealed interface CoordinationRecord permits CoordinationRecord.Registration, CoordinationRecord.Lease {

    /** The kind of key this value belongs under. */
    RecordKind kind();

    /** The member the value names. */
    MemberId member();

    /**
     * A member's registration for a role.
     *
     * @param member the registering member; equal to the key's member
     * @param registeredAt the registrant's wall clock when it registered, in epoch milliseconds
     */
    record Registration(MemberId member, long registeredAt) implements CoordinationRecord {

        public Registration {
            Objects.requireNonNull(member, "member");
        }

        @Override
        public RecordKind kind() {
            return RecordKind.REGISTRATION;
        }
    }

    /**
     * The lease of a role, written in a transaction of the role's producer.
     *
     * @param member the holder
     * @param producerId the producer id the coordinator reports once this record's
     *     transaction commits
     * @param producerEpoch the producer epoch the coordinator reports once this
     *     record's transaction commits
     * @param grantedAt when the leadership began (the same in every renewal of one
     *     leadership), in epoch milliseconds of the holder's clock
     * @param deadline until when the holder claims the role without renewing, in epoch
     *     milliseconds of the holder's clock
     */
    record Lease(MemberId member, long producerId, short producerEpoch, long grantedAt, long deadline)
            implements CoordinationRecord {

        public Lease {
            Objects.requireNonNull(member, "member");
            if (producerId < 0 || producerEpoch < 0) {
                throw new IllegalArgumentException(
                        "a lease needs a minted producer id and epoch, but got " + producerId + "/" + producerEpoch);
            }
        }

        @Override
        public RecordKind kind() {
            return RecordKind.LEASE;
        }
    }
}
