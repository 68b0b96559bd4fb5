package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.CoordinationRecord.Lease;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import io.krabka.streams.coordination.record.MalformedRecordException;
import io.krabka.streams.coordination.record.RecordKind;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * The incremental fold of one role's records in offset order. A reader keeps one
 * builder per role and applies each new record once; it never re-reads the
 * partition from the start. Records of other roles that share the partition are
 * ignored, and so is a record at an offset the builder has already passed, so a
 * reader may replay after a reconnect.
 *
 * <p>Not thread-safe: one reader owns it, and {@link #build()} hands out immutable
 * snapshots.
 */
public final class RoleStateBuilder {

    /**
     * How many recent leaderships' terms a fold remembers: a leadership whose lease records
     * are interrupted by records of more leaderships than this gets a new term at its next.
     */
    public static final int REMEMBERED_LEADERSHIPS = 8;

    private final Role role;
    private final List<RosterEntry> roster = new ArrayList<>();
    private @Nullable LeaseState lease;
    private final ArrayDeque<ProducerEpoch> recentEpochs = new ArrayDeque<>();
    // The epochs of the newest lease records of any leadership, kept across new
    // leaderships and tombstones: what the coordinator may still report when the newest
    // lease is not the holder's (a forged one, or a release).
    private final ArrayDeque<ProducerEpoch> carriedEpochs = new ArrayDeque<>();
    private OptionalLong leaseReleasedAt = OptionalLong.empty();
    private long nextOffset;
    // The terms of the newest leaderships, by (member, granted_at): a leadership whose
    // lease records another record interrupted (a forged lease, a tombstone it did not
    // write) keeps its term when its holder renews, so observers see one term per leadership.
    private final Map<Leader, Long> terms = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Leader, Long> eldest) {
            return size() > REMEMBERED_LEADERSHIPS;
        }
    };

    // Per producer id (the few newest), the newest epoch a lease carried and the leadership
    // that carried it first: see ownsEpoch.
    private final Map<Long, EpochOwner> epochOwners = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, EpochOwner> eldest) {
            return size() > REMEMBERED_LEADERSHIPS;
        }
    };

    private record Leader(MemberId member, long grantedAt) {}

    private record EpochOwner(short epoch, Leader leader) {}

    RoleStateBuilder(Role role) {
        this.role = Objects.requireNonNull(role, "role");
    }

    /**
     * Folds one decoded record.
     *
     * @param offset the record's offset in the partition
     * @param timestamp the record's Kafka timestamp, in epoch milliseconds; used only to
     *     anchor the challenge after a lease tombstone
     * @param key the decoded key
     * @param value the decoded value, or empty for a tombstone
     * @return whether the record changed this role's state (false for another role's
     *     record or an offset already passed)
     * @throws MalformedRecordException when the key and value disagree (a registration
     *     value naming another member than its key); the state is left unchanged
     */
    public boolean apply(long offset, long timestamp, CoordinationKey key, Optional<CoordinationRecord> value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        if (!key.role().equals(role) || offset < nextOffset) {
            return false;
        }
        if (value.isPresent() && value.get().kind() != key.kind()) {
            throw new IllegalArgumentException("a " + value.get().kind() + " value under a " + key.kind() + " key");
        }
        if (key.kind() == RecordKind.REGISTRATION) {
            MemberId member = key.registrant().orElseThrow();
            if (value.isPresent() && !value.get().member().equals(member)) {
                throw new MalformedRecordException(
                        MalformedRecordException.Problem.MEMBER_MISMATCH,
                        "registration at offset " + offset + " has key member \"" + member + "\" but value member \""
                                + value.get().member() + '"');
            }
            roster.removeIf(entry -> entry.member().equals(member));
            value.ifPresent(
                    record -> roster.add(new RosterEntry(member, offset, ((Registration) record).registeredAt())));
            LeaseState current = lease;
            if (value.isEmpty() && current != null && current.member().equals(member)) {
                // The holder left the roster after its newest lease: the first act of its
                // release, a plain append that readers see before the lease tombstone's
                // transaction completes. The lease ends here (a holder that renews after
                // it holds again, under the same term).
                release(timestamp);
            }
        } else if (value.isPresent()) {
            Lease written = (Lease) value.get();
            Leader leader = new Leader(written.member(), written.grantedAt());
            LeaseState current = lease;
            boolean renewal = current != null && current.sameLeadershipAs(written.member(), written.grantedAt());
            long term;
            if (current != null && renewal) {
                term = current.term();
            } else {
                recentEpochs.clear();
                term = terms.computeIfAbsent(leader, first -> offset);
            }
            if (ownsEpoch(leader, written)) {
                recentEpochs.addLast(new ProducerEpoch(written.producerId(), written.producerEpoch()));
                if (recentEpochs.size() > LeaseState.RECENT_EPOCHS) {
                    recentEpochs.removeFirst();
                }
            }
            carriedEpochs.addLast(new ProducerEpoch(written.producerId(), written.producerEpoch()));
            if (carriedEpochs.size() > LeaseState.RECENT_EPOCHS) {
                carriedEpochs.removeFirst();
            }
            lease = new LeaseState(
                    written.member(),
                    written.producerId(),
                    written.producerEpoch(),
                    written.grantedAt(),
                    written.deadline(),
                    term,
                    offset,
                    List.copyOf(recentEpochs),
                    timestamp);
            leaseReleasedAt = OptionalLong.empty();
        } else {
            release(timestamp);
        }
        nextOffset = offset + 1;
        return true;
    }

    /** Clears the lease; a release already under way (its holder left the roster) keeps its instant. */
    private void release(long timestamp) {
        if (lease != null || leaseReleasedAt.isEmpty()) {
            leaseReleasedAt = OptionalLong.of(timestamp);
        }
        lease = null;
        recentEpochs.clear();
    }

    /**
     * Whether {@code leader} may count the epoch {@code written} carries, so that readers
     * report it current while the coordinator reports that epoch. Only the leadership that
     * first carried an epoch does: a grant follows InitProducerId, which mints an epoch
     * newer than every one the producer id had (or a new producer id) after fencing every
     * earlier holder, and a holder's leases never go back to a lower epoch. A lease that
     * anyone with Write appends with an epoch copied from the topic, naming a stranger or
     * a deposed member, so counts for no one; the holder's own leases still do.
     */
    private boolean ownsEpoch(Leader leader, Lease written) {
        EpochOwner owner = epochOwners.get(written.producerId());
        if (owner == null || written.producerEpoch() > owner.epoch()) {
            epochOwners.put(written.producerId(), new EpochOwner(written.producerEpoch(), leader));
            return true;
        }
        return written.producerEpoch() == owner.epoch() && owner.leader().equals(leader);
    }

    /** Folds a registration of {@code member} (for tests and the in-memory transport). */
    public RoleStateBuilder register(long offset, MemberId member, long registeredAt) {
        apply(
                offset,
                registeredAt,
                CoordinationKey.registration(role, member),
                Optional.of(new Registration(member, registeredAt)));
        return this;
    }

    /** Folds the tombstone of {@code member}'s registration. */
    public RoleStateBuilder deregister(long offset, MemberId member) {
        return deregister(offset, member, 0L);
    }

    /** Folds a registration tombstone written at {@code timestamp}: a holder's leaves its lease released then. */
    public RoleStateBuilder deregister(long offset, MemberId member, long timestamp) {
        apply(offset, timestamp, CoordinationKey.registration(role, member), Optional.empty());
        return this;
    }

    /** Folds a lease record. */
    public RoleStateBuilder lease(
            long offset, MemberId member, long producerId, short producerEpoch, long grantedAt, long deadline) {
        apply(
                offset,
                grantedAt,
                CoordinationKey.lease(role),
                Optional.of(new Lease(member, producerId, producerEpoch, grantedAt, deadline)));
        return this;
    }

    /** Folds a lease tombstone written at {@code timestamp}. */
    public RoleStateBuilder release(long offset, long timestamp) {
        apply(offset, timestamp, CoordinationKey.lease(role), Optional.empty());
        return this;
    }

    /**
     * Marks every offset below {@code offset} as read, for a reader whose position moved
     * past records that were not this role's, or were compacted away or skipped as malformed.
     */
    public RoleStateBuilder advanceTo(long offset) {
        nextOffset = Math.max(nextOffset, offset);
        return this;
    }

    /**
     * Whether one of the newest lease records folded so far, of any leadership (also one
     * that ended or was followed by another's lease), carried this (producer id, epoch).
     */
    public boolean carried(long producerId, short producerEpoch) {
        return carriedEpochs.contains(new ProducerEpoch(producerId, producerEpoch));
    }

    /** The offset after the last record folded in. */
    public long nextOffset() {
        return nextOffset;
    }

    /** A snapshot of the state so far; the builder can go on folding. */
    public RoleState build() {
        return new RoleState(role, roster, Optional.ofNullable(lease), leaseReleasedAt, nextOffset);
    }
}
