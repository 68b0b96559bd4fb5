package io.krabka.streams.coordination;

import java.util.Comparator;

/**
 * The proof that a member holds a role: the grant's term plus the producer id and
 * producer epoch that Kafka's transaction coordinator minted for the role's
 * {@code transactional.id}.
 *
 * <h2>Why a term, and not the producer id first</h2>
 * The broker enforces the pair (producer id, producer epoch): a write with a
 * superseded epoch is rejected. But the pair does not give an order that a device can
 * compare across leaderships on Kafka 4.x:
 * <ul>
 *   <li>under transaction version 2 the epoch moves on every transaction, not only on
 *       a new leadership, and rolls over to a fresh producer id every ~32 767
 *       transactions;</li>
 *   <li>producer ids come from per-broker blocks, so after the role's transaction
 *       coordinator moves, a new producer id can be <em>smaller</em> than the old one.</li>
 * </ul>
 * The {@link #term() term} is the offset, in the role's partition of
 * {@code __coordination_state}, of the lease record that granted the leadership. The
 * partition is one totally ordered log whose offsets are never reused (the topic
 * forbids unclean leader election), and a new grant's lease record can only be
 * committed after every earlier grant's, so terms grow with every grant. Devices
 * compare terms; {@link #supersedes} does exactly that.
 *
 * <p>A token only protects a resource that checks it. Kafka checks the (producer id,
 * producer epoch) pair on every guarded write; a device that accepts commands from
 * elsewhere must keep the highest term it has seen and refuse lower ones.
 *
 * @param term the offset of the lease record that granted this leadership
 * @param producerId the producer id the coordinator reported for the role
 * @param producerEpoch the producer epoch the coordinator reported for the role
 */
public record FencingToken(long term, long producerId, short producerEpoch) {

    /** The token of a role that no member has ever taken: it ranks below every minted token. */
    public static final FencingToken NO_EPOCH = new FencingToken(-1L, -1L, (short) -1);

    /** Grant order: by term. Tokens of one leadership compare as equal. */
    public static final Comparator<FencingToken> GRANT_ORDER = Comparator.comparingLong(FencingToken::term);

    /**
     * Checks the components: all non-negative, or all -1 for {@link #NO_EPOCH}.
     */
    public FencingToken {
        boolean none = term == -1L && producerId == -1L && producerEpoch == -1;
        if (!none) {
            requireNonNegative("term", term);
            requireNonNegative("producerId", producerId);
            requireNonNegative("producerEpoch", producerEpoch);
        }
    }

    /**
     * Returns a minted token.
     *
     * @throws IllegalArgumentException when any component is negative
     */
    public static FencingToken of(long term, long producerId, short producerEpoch) {
        requireNonNegative("term", term);
        return new FencingToken(term, producerId, producerEpoch);
    }

    /** Whether this token comes from a later grant than {@code other}. */
    public boolean supersedes(FencingToken other) {
        return term > other.term;
    }

    /** Whether both tokens come from the same grant (possibly at different epochs). */
    public boolean sameLeadership(FencingToken other) {
        return isMinted() && term == other.term;
    }

    /** Whether this is a minted token rather than {@link #NO_EPOCH}. */
    public boolean isMinted() {
        return term >= 0;
    }

    /** Returns this leadership's token at another (producer id, producer epoch). */
    public FencingToken withEpoch(long newProducerId, short newProducerEpoch) {
        return of(term, newProducerId, newProducerEpoch);
    }

    private static void requireNonNegative(String field, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("FencingToken " + field + " must not be negative, but is " + value);
        }
    }

    @Override
    public String toString() {
        return isMinted() ? "term " + term + " (producer " + producerId + ", epoch " + producerEpoch + ")" : "NO_EPOCH";
    }
}
