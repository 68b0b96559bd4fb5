package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The current lease of a role as the fold of its partition sees it.
 *
 * @param member the holder the newest lease record names
 * @param producerId the producer id that record carries
 * @param producerEpoch the producer epoch that record carries
 * @param grantedAt when the leadership began, in epoch milliseconds of the holder's clock
 * @param deadline until when the holder claims the role, in epoch milliseconds of the
 *     holder's clock
 * @param term the offset of the lease record that began this leadership: the first
 *     lease record the fold saw with this member and {@code grantedAt}. A reader that
 *     starts after compaction removed that record sees a later offset of the same
 *     leadership, which still lies below every later grant.
 * @param offset the offset of the newest lease record
 * @param recentEpochs the (producer id, epoch) pairs of this leadership's newest lease
 *     records, oldest first, at most {@link #RECENT_EPOCHS}: a busy holder moves the epoch
 *     on every commit, so a check that reads the coordinator and then the topic compares
 *     against these rather than only the newest. Only epochs this leadership carried first
 *     count: a lease record copying another leadership's epoch adds none
 * @param writtenAt the newest lease record's Kafka timestamp, in epoch milliseconds: its
 *     writer's clock when it wrote the record (the library's members write the deadline as
 *     that instant plus their lease duration)
 */
public record LeaseState(
        MemberId member,
        long producerId,
        short producerEpoch,
        long grantedAt,
        long deadline,
        long term,
        long offset,
        List<ProducerEpoch> recentEpochs,
        long writtenAt) {

    /** How many of a leadership's newest lease epochs the fold remembers. */
    public static final int RECENT_EPOCHS = 256;

    public LeaseState {
        Objects.requireNonNull(member, "member");
        recentEpochs = List.copyOf(recentEpochs);
    }

    /** Whether this leadership wrote a lease with exactly this (producer id, epoch) recently. */
    public boolean wrote(long otherProducerId, short otherEpoch) {
        return recentEpochs.contains(new ProducerEpoch(otherProducerId, otherEpoch));
    }

    /** The token this lease names. */
    public FencingToken token() {
        return FencingToken.of(term, producerId, producerEpoch);
    }

    /**
     * How long a lease its writer claims: the deadline less the record's timestamp (a
     * member's lease duration), saturated at {@link Long#MIN_VALUE} and {@link Long#MAX_VALUE}:
     * a forged or corrupt record's extreme times must not wrap around into a plausible one.
     */
    public long declaredDurationMillis() {
        long difference = deadline - writtenAt;
        // Overflow iff the operands have different signs and the result's sign differs from the deadline's.
        if (((deadline ^ writtenAt) & (deadline ^ difference)) < 0) {
            return deadline < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return difference;
    }

    /** The deadline as an instant. */
    public Instant deadlineInstant() {
        return Instant.ofEpochMilli(deadline);
    }

    /**
     * This lease with another deadline: for a reader that will not wait on a deadline
     * beyond what any holder can claim (a forged or absurd record).
     */
    public LeaseState withDeadline(long newDeadline) {
        return new LeaseState(
                member, producerId, producerEpoch, grantedAt, newDeadline, term, offset, recentEpochs, writtenAt);
    }

    /** Whether {@code other} is a renewal of the same leadership: same holder, same grant time. */
    boolean sameLeadershipAs(MemberId otherMember, long otherGrantedAt) {
        return member.equals(otherMember) && grantedAt == otherGrantedAt;
    }
}
