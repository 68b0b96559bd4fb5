package io.krabka.coordination.chaos.check;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Everything a run recorded, gathered after it ended: the committed command log and
 * every role's leases (both read back read_committed from the cluster), what each member
 * saw acknowledged, what reached the device, what the request producer sent and where
 * its requests landed, and what the harness did. All times are
 * epoch milliseconds on this machine's one wall clock; {@code endedAt} is when the
 * fault plan ended, before the members were stopped.
 *
 * <p>A run holds several roles, and roles share coordination partitions, so a term (an
 * offset in the role's coordination partition) names a grant only together with its
 * role: commands, tenures and acks carry the role. {@link #MAIN_ROLE} is the role of the
 * leader pipeline, the device and the challenger; the records that speak only of it
 * (deliveries, challenger fences) carry none.
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
        List<ChallengerFence> fences,
        List<Outage> outages,
        List<CurrentAnswer> currentAnswers) {

    /** The role of the leader pipeline, the device and the challenger. */
    public static final String MAIN_ROLE = "dispatcher";

    /** A run without challenger fences or outages. */
    public History(
            List<CommittedCommand> commands,
            List<Tenure> tenures,
            List<Ack> acks,
            List<Delivery> deliveries,
            List<Fault> faults,
            List<TailCheck> tailChecks,
            long garbageInjected,
            Map<String, Long> malformedCounted,
            Requests requests,
            long endedAt) {
        this(
                commands,
                tenures,
                acks,
                deliveries,
                faults,
                tailChecks,
                garbageInjected,
                malformedCounted,
                requests,
                endedAt,
                List.of());
    }

    /** A run that asked no {@code describe()}. */
    public History(
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
            List<ChallengerFence> fences,
            List<Outage> outages) {
        this(
                commands,
                tenures,
                acks,
                deliveries,
                faults,
                tailChecks,
                garbageInjected,
                malformedCounted,
                requests,
                endedAt,
                fences,
                outages,
                List.of());
    }

    /** A run without outages. */
    public History(
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
        this(
                commands,
                tenures,
                acks,
                deliveries,
                faults,
                tailChecks,
                garbageInjected,
                malformedCounted,
                requests,
                endedAt,
                fences,
                List.of());
    }

    public History {
        fences = List.copyOf(fences);
        outages = List.copyOf(outages);
        currentAnswers = List.copyOf(currentAnswers);
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
     * A command record in the command topic, in offset order; every role writes there, and
     * the record key is the {@code role}. A command of the leader pipeline carries the id
     * of the request it was written for ({@code request}); its {@code seq} means nothing (-1).
     */
    public record CommittedCommand(
            String role,
            int partition,
            long offset,
            String member,
            long term,
            long seq,
            long began,
            long appendedAt,
            Optional<String> request) {

        public CommittedCommand {
            Objects.requireNonNull(role, "role");
        }

        /** A command of {@link #MAIN_ROLE}. */
        public CommittedCommand(
                int partition,
                long offset,
                String member,
                long term,
                long seq,
                long began,
                long appendedAt,
                Optional<String> request) {
            this(MAIN_ROLE, partition, offset, member, term, seq, began, appendedAt, request);
        }

        /** A periodic command of a {@link #MAIN_ROLE} member's dispatch loop, in partition 0, appended when it began. */
        public CommittedCommand(long offset, String member, long term, long seq, long began) {
            this(0, offset, member, term, seq, began, began, Optional.empty());
        }

        /** A command of {@link #MAIN_ROLE} in partition 0, appended when it began. */
        public CommittedCommand(long offset, String member, long term, long seq, long began, Optional<String> request) {
            this(0, offset, member, term, seq, began, began, request);
        }

        /** The same command appended by the broker at {@code appendedAt}. */
        public CommittedCommand appendedAt(long appendedAt) {
            return new CommittedCommand(role, partition, offset, member, term, seq, began, appendedAt, request);
        }
    }

    /**
     * A transaction a challenger committed to an output partition right after its
     * InitProducerId for {@link #MAIN_ROLE}'s transactional id, before it died without
     * writing a lease (the harness plays it). {@code termsBelow} is the end of that role's
     * coordination partition read before that InitProducerId: every term of the role below
     * it was granted to a producer the challenger fenced, so none of them may have a
     * command after {@code offset} in {@code partition}.
     */
    public record ChallengerFence(int partition, long offset, long termsBelow, long at) {}

    /**
     * The request producer's side of the leader pipeline: every request id it sent (or
     * tried to), the ids the cluster acknowledged (acks=all), where each request is in the
     * input topic (read back at the end; a request that was never written has no entry,
     * one written twice has two), and the pipeline group's committed offset per input
     * partition at the end (a partition without one is absent: nothing committed there).
     */
    public record Requests(
            Set<String> produced,
            Set<String> acknowledged,
            Map<String, List<InputPosition>> inputs,
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
     * the grant record's timestamp. The term is unique only within its {@code role}.
     */
    public record Tenure(
            String role,
            long term,
            String member,
            long grantedAt,
            long lastLeaseAt,
            OptionalLong releasedAt,
            long fencesFrom) {

        public Tenure {
            Objects.requireNonNull(role, "role");
        }

        /** A tenure whose holder fenced earlier producers by its grant record's timestamp. */
        public Tenure(
                String role, long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt) {
            this(role, term, member, grantedAt, lastLeaseAt, releasedAt, grantedAt);
        }

        /** A tenure of {@link #MAIN_ROLE}. */
        public Tenure(
                long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt, long fencesFrom) {
            this(MAIN_ROLE, term, member, grantedAt, lastLeaseAt, releasedAt, fencesFrom);
        }

        /** A tenure of {@link #MAIN_ROLE} whose holder fenced earlier producers by its grant record's timestamp. */
        public Tenure(long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt) {
            this(MAIN_ROLE, term, member, grantedAt, lastLeaseAt, releasedAt, grantedAt);
        }

        /** When the role stopped being served by this leadership, as far as the records tell. */
        public long endedAt() {
            return releasedAt.orElse(lastLeaseAt);
        }
    }

    /** A member saw its commit of (term, seq) of {@code role} acknowledged. */
    public record Ack(long at, String role, String member, long term, long seq) {

        public Ack {
            Objects.requireNonNull(role, "role");
        }

        /** An ack of {@link #MAIN_ROLE}. */
        public Ack(long at, String member, long term, long seq) {
            this(at, MAIN_ROLE, member, term, seq);
        }
    }

    /** A command of {@link #MAIN_ROLE} (the only role with a device) reached the device, which accepted or refused it. */
    public record Delivery(long at, String member, long term, long seq, boolean accepted) {}

    /**
     * A window in which the harness itself froze every member (all member JVMs SIGSTOPped
     * for longer than the broker's transactional.id.expiration.ms, so that the transactional
     * ids expire). No member can hold a role then by the fault's design, so the time a
     * leaderless gap overlaps an outage is the harness's, not the product's, and is not
     * held against the gap bound.
     */
    public record Outage(long from, long to) {

        public Outage {
            if (to < from) {
                throw new IllegalArgumentException("outage ends at " + to + " before it starts at " + from);
            }
        }
    }

    /** A fault the harness injected (or healed). */
    public record Fault(long at, String kind, String target) {}

    /**
     * An answer of {@code describe()} that called a member current: {@code holder} held
     * {@code role} under {@code term}, as far as the coordinator's epoch and the topic told,
     * asked between {@code startedAt} and {@code endedAt}.
     */
    public record CurrentAnswer(long startedAt, long endedAt, String role, String holder, long term) {}

    /**
     * A restarted member's place in the roster once its new registration was seen:
     * {@code behind} lists the members that registered before that registration but rank
     * after it (it should be none: a restarted member goes to the tail).
     */
    public record TailCheck(long at, String member, List<String> behind) {}
}
