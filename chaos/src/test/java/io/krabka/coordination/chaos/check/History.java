package io.krabka.coordination.chaos.check;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Everything a run recorded, gathered after it ended: the committed command log and
 * the role's leases (both read back read_committed from the cluster), what each member
 * saw acknowledged, what reached the device, and what the harness did. All times are
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
        long endedAt) {

    public History {
        commands = List.copyOf(commands);
        tenures = List.copyOf(tenures);
        acks = List.copyOf(acks);
        deliveries = List.copyOf(deliveries);
        faults = List.copyOf(faults);
        tailChecks = List.copyOf(tailChecks);
        malformedCounted = Map.copyOf(malformedCounted);
    }

    /** A command record in the command topic, in offset order. */
    public record CommittedCommand(long offset, String member, long term, long seq, long began) {
    }

    /**
     * One leadership as its lease records show it: the grant (the first lease record of a
     * new member/grantedAt pair; its offset is the term), its last lease record's
     * timestamp, and the release tombstone's timestamp when it ended by a release.
     */
    public record Tenure(long term, String member, long grantedAt, long lastLeaseAt, OptionalLong releasedAt) {

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
