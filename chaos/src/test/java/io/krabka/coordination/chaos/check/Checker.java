package io.krabka.coordination.chaos.check;

import io.krabka.coordination.chaos.check.History.Ack;
import io.krabka.coordination.chaos.check.History.CommittedCommand;
import io.krabka.coordination.chaos.check.History.Delivery;
import io.krabka.coordination.chaos.check.History.TailCheck;
import io.krabka.coordination.chaos.check.History.Tenure;
import io.krabka.coordination.chaos.check.Violation.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks a {@link History} against what the product promises. It trusts only the
 * history: the checker shares no code with the coordination library.
 *
 * <p>The stale-dispatch rule rests on one fact of Kafka's transaction coordinator: a
 * new holder is granted only after its InitProducerId returned, and from that moment
 * every transaction the previous producer begins is refused. A grant's
 * {@code grantedAt} is read after InitProducerId, so a command whose transaction
 * began (its {@code began}, read before {@code beginTransaction}) after the grant of
 * any later term must never be committed.
 */
public final class Checker {

    /** The leaderless-gap bound: lease + stagger x standbys + slack. */
    public record GapBound(Duration lease, Duration stagger, int standbys, Duration slack) {

        public long millis() {
            return lease.toMillis() + stagger.toMillis() * standbys + slack.toMillis();
        }

        @Override
        public String toString() {
            return "lease " + lease.toMillis() + " ms + stagger " + stagger.toMillis() + " ms x " + standbys
                    + " standbys + slack " + slack.toMillis() + " ms = " + millis() + " ms";
        }
    }

    /** The verdict and the figures of a run. */
    public record Result(List<Violation> violations, int leadershipChanges, int commandsCommitted, long longestGapMillis,
            String longestGapAt, long deliveriesRefused) {

        public boolean passed() {
            return violations.isEmpty();
        }
    }

    private final GapBound gapBound;

    public Checker(GapBound gapBound) {
        this.gapBound = gapBound;
    }

    public Result check(History history) {
        List<Violation> violations = new ArrayList<>();
        TreeMap<Long, Tenure> tenures = new TreeMap<>();
        history.tenures().forEach(tenure -> tenures.put(tenure.term(), tenure));

        checkCommandLog(history.commands(), tenures, violations);
        Set<String> committed = keys(history.commands());
        checkAcks(history, committed, violations);
        checkDeliveries(history, committed, violations);
        long[] longest = checkGaps(tenures, history.endedAt(), violations);
        checkMalformed(history, violations);
        for (TailCheck tail : history.tailChecks()) {
            if (!tail.behind().isEmpty()) {
                violations.add(new Violation(Kind.RESTART_NOT_AT_TAIL, tail.member() + " restarted but still ranks ahead of "
                        + tail.behind()));
            }
        }
        long refused = history.deliveries().stream().filter(delivery -> !delivery.accepted()).count();
        return new Result(Collections.unmodifiableList(violations), Math.max(0, tenures.size() - 1),
                history.commands().size(), longest[0], longest[0] == 0 ? "-" : "term " + longest[1], refused);
    }

    private static void checkCommandLog(List<CommittedCommand> commands, TreeMap<Long, Tenure> tenures,
            List<Violation> violations) {
        Map<Long, Set<String>> membersByTerm = new HashMap<>();
        CommittedCommand previous = null;
        for (CommittedCommand command : commands) {
            Tenure tenure = tenures.get(command.term());
            if (tenure == null || !tenure.member().equals(command.member())) {
                violations.add(new Violation(Kind.UNGRANTED_TERM, command + " but term " + command.term() + " is "
                        + (tenure == null ? "no grant" : "granted to " + tenure.member())));
            }
            // The earliest grant of any later term: from then on this term's producer is fenced.
            Long supersededAt = tenures.tailMap(command.term(), false).values().stream()
                    .map(Tenure::grantedAt).min(Long::compare).orElse(null);
            if (supersededAt != null && command.began() > supersededAt) {
                violations.add(new Violation(Kind.STALE_DISPATCH, command + " began " + (command.began() - supersededAt)
                        + " ms after term " + command.term() + " was superseded at " + supersededAt));
            }
            if (previous != null && command.term() < previous.term()) {
                violations.add(new Violation(Kind.TERM_BACKWARDS, command + " after " + previous));
            }
            membersByTerm.computeIfAbsent(command.term(), term -> new HashSet<>()).add(command.member());
            previous = command;
        }
        membersByTerm.forEach((term, members) -> {
            if (members.size() > 1) {
                violations.add(new Violation(Kind.SHARED_TERM, "term " + term + " has commands of " + members));
            }
        });
    }

    private static Set<String> keys(List<CommittedCommand> commands) {
        Set<String> keys = new HashSet<>();
        commands.forEach(command -> keys.add(key(command.member(), command.term(), command.seq())));
        return keys;
    }

    private static String key(String member, long term, long seq) {
        return member + "/" + term + "/" + seq;
    }

    private static void checkAcks(History history, Set<String> committed, List<Violation> violations) {
        for (Ack ack : history.acks()) {
            if (!committed.contains(key(ack.member(), ack.term(), ack.seq()))) {
                violations.add(new Violation(Kind.ACKED_BUT_MISSING, ack.toString()));
            }
        }
    }

    private static void checkDeliveries(History history, Set<String> committed, List<Violation> violations) {
        for (Delivery delivery : history.deliveries()) {
            if (!committed.contains(key(delivery.member(), delivery.term(), delivery.seq()))) {
                violations.add(new Violation(Kind.DISPATCHED_BUT_NOT_COMMITTED, delivery.toString()));
            }
        }
    }

    /** Returns {longest gap ms, term granted after it}. */
    private long[] checkGaps(TreeMap<Long, Tenure> tenures, long endedAt, List<Violation> violations) {
        long[] longest = {0, -1};
        Tenure previous = null;
        for (Tenure tenure : tenures.values()) {
            if (previous != null) {
                long gap = tenure.grantedAt() - previous.endedAt();
                if (gap > longest[0]) {
                    longest[0] = gap;
                    longest[1] = tenure.term();
                }
                if (gap > gapBound.millis()) {
                    violations.add(new Violation(Kind.LEADERLESS_GAP, gap + " ms without a holder before term "
                            + tenure.term() + " (" + previous.member() + " -> " + tenure.member() + "); bound: " + gapBound));
                }
            }
            previous = tenure;
        }
        // A role left without a holder at the end is a gap too, even with no grant to close it.
        if (previous != null && endedAt - previous.endedAt() > gapBound.millis()) {
            violations.add(new Violation(Kind.LEADERLESS_GAP, (endedAt - previous.endedAt())
                    + " ms without a holder at the end of the run after " + previous.member() + "; bound: " + gapBound));
        }
        return longest;
    }

    private static void checkMalformed(History history, List<Violation> violations) {
        if (history.garbageInjected() == 0) {
            return;
        }
        long most = history.malformedCounted().values().stream().mapToLong(Long::longValue).max().orElse(0);
        if (most < history.garbageInjected()) {
            violations.add(new Violation(Kind.MALFORMED_NOT_COUNTED, history.garbageInjected()
                    + " malformed records appended, but the most any member counted is " + most + " "
                    + history.malformedCounted()));
        }
    }
}
