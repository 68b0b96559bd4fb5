package io.krabka.coordination.chaos.check;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Everything a run recorded, gathered after it ended: the committed command log and
 * the role's leases (both read back read_committed from the cluster), what each member
 * saw acknowledged, what reached the device, what the request producer sent and where
 * its requests landed, and what the harness did. All times are
 * epoch milliseconds on this machine's one wall clock; {@code endedAt} is when the
 * fault plan ended, before the members were stopped.
 */
public record History(
        List<CommittedCommand> commands,
        List<Tenure> tenures,
        List<Ack> acks,
        List<Delivery> deliveries,
        List<Fault> faults,
        List<TailCheck> tailChecks,
        long garbageInjected,
        Map<String, Long> malformedCounted,
        Requests requests,
        long endedAt,
        List<ChallengerFence> fences) {

    /** A run without challenger fences. */
    public History(List<CommittedCommand> commands, List<Tenure> tenures, List<Ack> acks, List<Delivery> deliveries,
            List<Fault> faults, List<TailCheck> tailChecks, long garbageInjected, Map<String, Long> malformedCounted,
            Requests requests, long endedAt) {
        this(commands, tenures, acks, deliveries, faults, tailChecks, garbageInjected, malformedCounted, requests, endedAt,
                List.of());
    }

    public History {
        fences = List.copyOf(fences);
        commands = List.copyOf(commands);
        tenures = List.copyOf(tenures);
        acks = List.copyOf(acks);
        deliveries = List.copyOf(deliveries);
        faults = List.copyOf(faults);
        tailChecks = List.copyOf(tailChecks);
        malformedCounted = Map.copyOf(malformedCounted);
        Objects.requireNonNull(requests, "requests");
    }

    /**
     * A command record in the command topic, in offset order. A command of the leader
     * pipeline carries the id of the request it was written for ({@code request}); its
     * {@code seq} means nothing (-1).
     */
    public record CommittedCommand(int partition, long offset, String member, long term, long seq, long began,
            long appendedAt, Optional<String> request) {

        /** A periodic command of a member's dispatch loop, in partition 0, appended when it began. */
        public CommittedCommand(long offset, String member, long term, long seq, long began) {
            this(0, offset, member, term, seq, began, began, Optional.empty());
        }

        /** A command in partition 0, appended when it began. */
        public CommittedCommand(long offset, String member, long term, long seq, long began, Optional<String> request) {
            this(0, offset, member, term, seq, began, began, request);
        }

        /** The same command appended by the broker at {@code appendedAt}. */
        public CommittedCommand appendedAt(long appendedAt) {
            return new CommittedCommand(partition, offset, member, term, seq, began, appendedAt, request);
        }
    }

    /**
     * A transaction a challenger committed to an output partition right after its
     * InitProducerId for the role's transactional id, before it died without writing a
     * lease (the harness plays it). {@code termsBelow} is the end of the role's
     * coordination partition read before that InitProducerId: every term below it was
     * granted to a producer the challenger fenced, so none of them may have a command
     * after {@code offset} in {@code partition}.
     */
    public record ChallengerFence(int partition, long offset, long termsBelow, long at) {
    }

    /**
     * The request producer's side of the leader pipeline: every request id it sent (or
     * tried to), the ids the cluster acknowledged (acks=all), where each request is in the
     * input topic (read back at the end; a request that was never written has no entry,
     * one written twice has two), and the pipeline group's committed offset per input
     * partition at the end (a partition without one is absent: nothing committed there).
     */
    public record Requests(Set<String> produced, Set<String> acknowledged, Map<String, List<InputPosition>> inputs,
            Map<Integer, Long> committedOffsets) {

        /** A run without a request producer. */
        public static final Requests NONE = new Requests(Set.of(), Set.of(), Map.of(), Map.of());

        public Requests {
            produced = Set.copyOf(produced);
            acknowledged = Set.copyOf(acknowledged);
            inputs = Map.copyOf(inputs);
            committedOffsets = Map.copyOf(committedOffsets);
        }

        /** Whether a holder committed the input offsets past this position: its output must be visible. */
        public boolean committedPast(InputPosition position) {
            return committedOffsets.getOrDefault(position.partition(), 0L) > position.offset();
        }
    }

    /** Where a request record is in the input topic. */
    public record InputPosition(int partition, long offset) {

        @Override
        public String toString() {
            return "p" + partition + "@" + offset;
        }
    }

    /**
     * One leadership as its lease records show it: the grant (the first lease record of a
     * new member/grantedAt pair; its offset is the term), its last lease record's
     * timestamp, and the release tombstone's timestamp when it ended by a release.
     * {@code fencesFrom} is a wall-clock time by which the holder's InitProducerId had
     * returned, so every producer of an earlier term was fenced: when the member reported
     * the grant ({@code GRANTED}, written after the grant's transaction committed), else
     * the grant record's timestamp.
     */
    public record Tenure(long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt,
            long fencesFrom) {

        public Tenure(long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt) {
            this(term, member, grantedAt, lastLeaseAt, releasedAt, grantedAt);
        }

        /** When the role stopped being served by this leadership, as far as the records tell. */
        public long endedAt() {
            return releasedAt.orElse(lastLeaseAt);
        }
    }

    /** A member saw its commit of (term, seq) acknowledged. */
    public record Ack(long at, String member, long term, long seq) {
    }

    /** A command reached the device, which accepted or refused it. */
    public record Delivery(long at, String member, long term, long seq, boolean accepted) {
    }

    /** A fault the harness injected (or healed). */
    public record Fault(long at, String kind, String target) {
    }

    /**
     * A restarted member's place in the roster once its new registration was seen:
     * {@code behind} lists the members that registered before that registration but rank
     * after it (it should be none: a restarted member goes to the tail).
     */
    public record TailCheck(long at, String member, List<String> behind) {
    }
}
