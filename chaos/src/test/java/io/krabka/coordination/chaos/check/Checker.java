package io.krabka.coordination.chaos.check;

import io.krabka.coordination.chaos.check.History.Ack;
import io.krabka.coordination.chaos.check.History.CommittedCommand;
import io.krabka.coordination.chaos.check.History.Delivery;
import io.krabka.coordination.chaos.check.History.InputPosition;
import io.krabka.coordination.chaos.check.History.Outage;
import io.krabka.coordination.chaos.check.History.Requests;
import io.krabka.coordination.chaos.check.History.TailCheck;
import io.krabka.coordination.chaos.check.History.Tenure;
import io.krabka.coordination.chaos.check.Violation.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Checks a {@link History} against what the product promises. It trusts only the
 * history: the checker shares no code with the coordination library.
 *
 * <p>The stale-dispatch rule rests on one fact of Kafka's transaction coordinator: a
 * new holder is granted only after its InitProducerId returned, and from that moment
 * the broker refuses every record the previous producer appends and every commit it
 * asks for. A tenure's {@code fencesFrom} is taken after that InitProducerId, so a
 * command the broker appended (log-append time, on the machine's one clock) after it
 * must never be in the committed log. The time a member read before its write is
 * evidence only: a write retries inside the library for up to a lease.
 *
 * <p>The leader pipeline's commands (those carrying a request id) are commands like the
 * others: they go to the same log, so the term, grant and staleness rules hold for them
 * too (a pipeline transaction also commits input offsets, which the fencing must cover).
 * The request rules add exactly-once: every acknowledged request has one command, no
 * request has two, and none has a command without having been sent.
 *
 * <p>The term, grant, staleness, ack and gap rules hold per role: roles share
 * coordination partitions, so a term is unique only within its role, and terms of two
 * roles say nothing about each other (a later grant of another role fences nobody of
 * this one). The challenger, the device and the pipeline belong to
 * {@link History#MAIN_ROLE}. A gap's overlap with the harness's {@link Outage}s is not
 * held against the bound: the harness froze every member then.
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

    /**
     * The verdict and the figures of a run. {@code commandsCommitted} counts the dispatch
     * loops' commands of every role; the pipeline's are {@code requestsProcessed} (distinct
     * requests with a command). {@code leadershipChanges} is the sum of
     * {@code leadershipChangesByRole} (a role's tenures less one). The longest gap is the
     * longest of any role between two of its tenures, outages excluded; {@code longestGapAt}
     * names the term granted after it ("term 42", or "role-3 term 42" outside the main role).
     */
    public record Result(
            List<Violation> violations,
            int leadershipChanges,
            int commandsCommitted,
            long longestGapMillis,
            String longestGapAt,
            long deliveriesRefused,
            int requestsProduced,
            int requestsAcknowledged,
            int requestsProcessed,
            Map<String, Integer> leadershipChangesByRole) {

        public boolean passed() {
            return violations.isEmpty();
        }
    }

    /** Request ids in the order they were sent when they are a prefix and a number ({@code r9} before {@code r10}). */
    private static final Comparator<String> REQUEST_ORDER =
            Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder());

    private final GapBound gapBound;

    public Checker(GapBound gapBound) {
        this.gapBound = gapBound;
    }

    public Result check(History history) {
        List<Violation> violations = new ArrayList<>();
        // Per role, its tenures by term: a term is unique only within its role.
        Map<String, TreeMap<Long, Tenure>> tenures = new TreeMap<>();
        history.tenures()
                .forEach(tenure -> tenures.computeIfAbsent(tenure.role(), role -> new TreeMap<>())
                        .put(tenure.term(), tenure));

        checkCommandLog(history.commands(), history.fences(), tenures, violations);
        Set<String> committed = keys(history.commands());
        checkAcks(history, committed, violations);
        checkDeliveries(history, committed, violations);
        List<Outage> outages = merged(history.outages());
        Gap longest = null;
        Map<String, Integer> changesByRole = new TreeMap<>();
        for (Map.Entry<String, TreeMap<Long, Tenure>> role : tenures.entrySet()) {
            Gap gap = checkGaps(role.getKey(), role.getValue(), history.endedAt(), outages, violations);
            if (gap != null && (longest == null || gap.counted() > longest.counted())) {
                longest = gap;
            }
            changesByRole.put(role.getKey(), Math.max(0, role.getValue().size() - 1));
        }
        checkMalformed(history, violations);
        int processed = checkRequests(history, violations);
        checkCurrentAnswers(history.currentAnswers(), tenures, violations);
        for (TailCheck tail : history.tailChecks()) {
            if (!tail.behind().isEmpty()) {
                violations.add(new Violation(
                        Kind.RESTART_NOT_AT_TAIL,
                        tail.member() + " restarted but still ranks ahead of " + tail.behind()));
            }
        }
        long refused = history.deliveries().stream()
                .filter(delivery -> !delivery.accepted())
                .count();
        int periodic = (int) history.commands().stream()
                .filter(command -> command.request().isEmpty())
                .count();
        int changes =
                changesByRole.values().stream().mapToInt(Integer::intValue).sum();
        boolean gapped = longest != null && longest.counted() > 0;
        return new Result(
                Collections.unmodifiableList(violations),
                changes,
                periodic,
                gapped ? longest.counted() : 0,
                gapped ? termName(longest.role(), longest.term()) : "-",
                refused,
                history.requests().produced().size(),
                history.requests().acknowledged().size(),
                processed,
                Collections.unmodifiableMap(changesByRole));
    }

    /** A term as the evidence names it: with its role unless it is the main role's. */
    private static String termName(String role, long term) {
        return (History.MAIN_ROLE.equals(role) ? "" : role + " ") + "term " + term;
    }

    /**
     * The rules of the committed log. Per output partition and role, in log order: terms
     * never go backwards (so every grant's first write precedes any later grant's of the
     * role: members write at once on grant); terms of two roles come from different
     * coordination offsets and do not compare. Per output partition, no command of a main
     * role's term a challenger fenced follows that challenger's transaction (the challenger
     * only takes the main role's transactional id). Over all partitions: each term belongs
     * to the member its role's lease records grant it to, and no command was appended by
     * the broker after a later term's holder of the same role had fenced every earlier
     * producer of that role (each role has its own transactional id). Appending is what a fenced producer
     * can no longer do, and the broker, not a member, stamps the time (the command topic
     * keeps log-append time): a zombie frozen inside a write that retries for a lease is
     * judged by when its records reached the log, not by when it meant to write them.
     */
    private static void checkCommandLog(
            List<CommittedCommand> commands,
            List<History.ChallengerFence> fences,
            Map<String, TreeMap<Long, Tenure>> tenures,
            List<Violation> violations) {
        Map<String, Set<String>> membersByTerm = new TreeMap<>();
        Map<String, CommittedCommand> highestByPartition = new HashMap<>();
        for (CommittedCommand command : commands) {
            TreeMap<Long, Tenure> roleTenures = tenures.getOrDefault(command.role(), new TreeMap<>());
            String term = termName(command.role(), command.term());
            Tenure tenure = roleTenures.get(command.term());
            if (tenure == null || !tenure.member().equals(command.member())) {
                violations.add(new Violation(
                        Kind.UNGRANTED_TERM,
                        command + " but " + term + " is "
                                + (tenure == null ? "no grant" : "granted to " + tenure.member())));
            }
            // From the role's earliest later grant on, this term's producer is fenced: it can append nothing.
            Tenure superseding = roleTenures.tailMap(command.term(), false).values().stream()
                    .min(Comparator.comparingLong(Tenure::fencesFrom))
                    .orElse(null);
            if (superseding != null && command.appendedAt() > superseding.fencesFrom()) {
                violations.add(new Violation(
                        Kind.STALE_DISPATCH,
                        command + " was appended "
                                + (command.appendedAt() - superseding.fencesFrom()) + " ms after "
                                + termName(superseding.role(), superseding.term()) + " (" + superseding.member()
                                + ") had fenced term " + command.term() + " at " + superseding.fencesFrom()
                                + " (its transaction began at " + command.began() + ")"));
            }
            String partitionOfRole = command.partition() + "/" + command.role();
            CommittedCommand highest = highestByPartition.get(partitionOfRole);
            if (highest != null && command.term() < highest.term()) {
                violations.add(new Violation(Kind.TERM_BACKWARDS, command + " after " + highest));
            }
            if (highest == null || command.term() >= highest.term()) {
                highestByPartition.put(partitionOfRole, command);
            }
            for (History.ChallengerFence fence : fences) {
                if (History.MAIN_ROLE.equals(command.role())
                        && fence.partition() == command.partition()
                        && command.offset() > fence.offset()
                        && command.term() < fence.termsBelow()) {
                    violations.add(new Violation(
                            Kind.FENCED_BY_CHALLENGER_YET_COMMITTED,
                            command + " after " + fence + ": term " + command.term()
                                    + " was granted before the challenger's InitProducerId"));
                }
            }
            membersByTerm.computeIfAbsent(term, key -> new HashSet<>()).add(command.member());
        }
        membersByTerm.forEach((term, members) -> {
            if (members.size() > 1) {
                violations.add(new Violation(Kind.SHARED_TERM, term + " has commands of " + members));
            }
        });
    }

    /** The dispatch loops' commands by (role, member, term, seq); the pipeline's have no seq and are not among them. */
    private static Set<String> keys(List<CommittedCommand> commands) {
        Set<String> keys = new HashSet<>();
        commands.stream()
                .filter(command -> command.request().isEmpty())
                .forEach(command -> keys.add(key(command.role(), command.member(), command.term(), command.seq())));
        return keys;
    }

    private static String key(String role, String member, long term, long seq) {
        return role + "/" + member + "/" + term + "/" + seq;
    }

    private static void checkAcks(History history, Set<String> committed, List<Violation> violations) {
        for (Ack ack : history.acks()) {
            if (!committed.contains(key(ack.role(), ack.member(), ack.term(), ack.seq()))) {
                violations.add(new Violation(Kind.ACKED_BUT_MISSING, ack.toString()));
            }
        }
    }

    /** Only the main role delivers to the device. */
    private static void checkDeliveries(History history, Set<String> committed, List<Violation> violations) {
        for (Delivery delivery : history.deliveries()) {
            if (!committed.contains(key(History.MAIN_ROLE, delivery.member(), delivery.term(), delivery.seq()))) {
                violations.add(new Violation(Kind.DISPATCHED_BUT_NOT_COMMITTED, delivery.toString()));
            }
        }
    }

    /**
     * Each answer that called a member current names a leadership of that member with that
     * term, which no later term's holder had fenced before the answer was asked for.
     */
    private static void checkCurrentAnswers(
            List<History.CurrentAnswer> answers,
            Map<String, TreeMap<Long, Tenure>> tenures,
            List<Violation> violations) {
        for (History.CurrentAnswer answer : answers) {
            TreeMap<Long, Tenure> ofRole = tenures.getOrDefault(answer.role(), new TreeMap<>());
            Tenure named = ofRole.get(answer.term());
            if (named == null || !named.member().equals(answer.holder())) {
                violations.add(new Violation(
                        Kind.CURRENT_FOR_NON_HOLDER,
                        "describe(" + answer.role() + ") at "
                                + answer.startedAt() + " called " + answer.holder() + " current under term "
                                + answer.term()
                                + ", which no leadership of " + answer.holder() + " has"));
                continue;
            }
            ofRole.tailMap(answer.term(), false).values().stream()
                    .filter(later -> later.fencesFrom() < answer.startedAt())
                    .findFirst()
                    .ifPresent(later -> violations.add(new Violation(
                            Kind.CURRENT_FOR_NON_HOLDER,
                            "describe("
                                    + answer.role() + ") at " + answer.startedAt() + " called " + answer.holder()
                                    + " current under term "
                                    + answer.term() + ", but " + later.member() + " had fenced it by "
                                    + later.fencesFrom()
                                    + " with term " + later.term())));
        }
    }

    /** A gap of a role before the grant of {@code term}: {@code counted} is the gap less its time in outages. */
    private record Gap(String role, long term, long counted) {}

    /**
     * The leaderless gaps of one role, over its tenures in term order, and the one left at
     * the end of the run. A gap counts against the bound without the time it overlaps an
     * outage: the harness froze every member then, so no one could hold the role.
     *
     * @return the role's longest counted gap between two tenures, or null with fewer than two
     */
    private Gap checkGaps(
            String role,
            TreeMap<Long, Tenure> tenures,
            long endedAt,
            List<Outage> outages,
            List<Violation> violations) {
        Gap longest = null;
        Tenure previous = null;
        for (Tenure tenure : tenures.values()) {
            if (previous != null) {
                long gap = tenure.grantedAt() - previous.endedAt();
                long frozen = overlap(previous.endedAt(), tenure.grantedAt(), outages);
                if (longest == null || gap - frozen > longest.counted()) {
                    longest = new Gap(role, tenure.term(), gap - frozen);
                }
                if (gap - frozen > gapBound.millis()) {
                    violations.add(new Violation(
                            Kind.LEADERLESS_GAP,
                            gap + " ms without a holder before "
                                    + termName(role, tenure.term()) + " (" + previous.member() + " -> "
                                    + tenure.member()
                                    + "), " + frozen + " ms of it in harness outages; bound: " + gapBound));
                }
            }
            previous = tenure;
        }
        // A role left without a holder at the end is a gap too, even with no grant to close it.
        if (previous != null) {
            long gap = endedAt - previous.endedAt();
            long frozen = overlap(previous.endedAt(), endedAt, outages);
            if (gap - frozen > gapBound.millis()) {
                violations.add(new Violation(
                        Kind.LEADERLESS_GAP,
                        gap + " ms without a holder"
                                + (History.MAIN_ROLE.equals(role) ? "" : " of " + role)
                                + " at the end of the run after "
                                + previous.member() + ", " + frozen + " ms of it in harness outages; bound: "
                                + gapBound));
            }
        }
        return longest;
    }

    /** The outage windows in time order, overlapping ones joined, so that no time is excluded twice. */
    private static List<Outage> merged(List<Outage> outages) {
        List<Outage> merged = new ArrayList<>();
        for (Outage outage :
                outages.stream().sorted(Comparator.comparingLong(Outage::from)).toList()) {
            Outage last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && outage.from() <= last.to()) {
                merged.set(merged.size() - 1, new Outage(last.from(), Math.max(last.to(), outage.to())));
            } else {
                merged.add(outage);
            }
        }
        return merged;
    }

    /**
     * How much of [from, to] lies in the outages, overlapping ones counted once: the time
     * the gap rule does not count, for reports that attribute gaps as this checker does.
     */
    public static long timeInOutages(long from, long to, List<Outage> outages) {
        return overlap(from, to, merged(outages));
    }

    /** How much of [from, to] lies in the (merged) outages; nothing when the window is empty. */
    private static long overlap(long from, long to, List<Outage> outages) {
        long overlap = 0;
        for (Outage outage : outages) {
            overlap += Math.max(0, Math.min(to, outage.to()) - Math.max(from, outage.from()));
        }
        return overlap;
    }

    /**
     * Exactly-once of the leader pipeline, judged on the committed log: no command for a
     * request that was never sent, no request with two commands, and every acknowledged
     * request with one. A missing one is a loss when the group's committed offsets passed
     * its input record (the transaction that committed them should have carried its
     * command), or when it is not in the input at all; otherwise the pipeline never got to
     * it, which the run's drain should have prevented: reported once, with the count.
     * Unacknowledged requests may appear, at most once. Terms going backwards in the log,
     * pipeline commands included, is {@link Kind#TERM_BACKWARDS}.
     *
     * @return how many distinct requests have a command
     */
    private static int checkRequests(History history, List<Violation> violations) {
        Requests requests = history.requests();
        Map<String, List<CommittedCommand>> byRequest = new LinkedHashMap<>();
        for (CommittedCommand command : history.commands()) {
            command.request()
                    .ifPresent(id -> byRequest
                            .computeIfAbsent(id, key -> new ArrayList<>())
                            .add(command));
        }
        byRequest.forEach((id, commands) -> {
            if (!requests.produced().contains(id)) {
                violations.add(new Violation(
                        Kind.REQUEST_UNKNOWN,
                        "request " + id + ", which the producer never sent, has " + describe(commands)));
            }
            if (commands.size() > 1) {
                violations.add(new Violation(
                        Kind.REQUEST_DUPLICATED,
                        "request " + id + " ("
                                + (requests.acknowledged().contains(id) ? "acknowledged" : "not acknowledged")
                                + ", input "
                                + requests.inputs().getOrDefault(id, List.of()) + ") has " + commands.size()
                                + " commands: "
                                + describe(commands)));
            }
        });
        List<String> notProcessed = new ArrayList<>();
        for (String id : requests.acknowledged().stream().sorted(REQUEST_ORDER).toList()) {
            if (byRequest.containsKey(id)) {
                continue;
            }
            List<InputPosition> positions = requests.inputs().getOrDefault(id, List.of());
            if (positions.isEmpty()) {
                violations.add(new Violation(
                        Kind.REQUEST_LOST,
                        "request " + id
                                + " was acknowledged, but it is not in the input topic and no command carries it"));
            } else if (positions.stream().anyMatch(requests::committedPast)) {
                violations.add(new Violation(
                        Kind.REQUEST_LOST,
                        "request " + id + " was acknowledged, is at input " + positions
                                + ", and the pipeline group committed past it (offsets " + requests.committedOffsets()
                                + "), yet no command carries it"));
            } else {
                notProcessed.add(id + "@" + positions);
            }
        }
        if (!notProcessed.isEmpty()) {
            violations.add(new Violation(
                    Kind.REQUEST_NOT_PROCESSED,
                    notProcessed.size()
                            + " acknowledged requests have no command and lie at or past the group's committed offsets "
                            + requests.committedOffsets() + ": the pipeline did not drain. First ones: "
                            + notProcessed.subList(0, Math.min(10, notProcessed.size()))));
        }
        return byRequest.size();
    }

    private static String describe(List<CommittedCommand> commands) {
        return commands.stream()
                .map(command -> "offset " + command.offset() + " by " + command.member() + " under term "
                        + command.term() + " (batch began " + command.began() + ")")
                .collect(Collectors.joining(", "));
    }

    private static void checkMalformed(History history, List<Violation> violations) {
        if (history.garbageInjected() == 0) {
            return;
        }
        long most = history.malformedCounted().values().stream()
                .mapToLong(Long::longValue)
                .max()
                .orElse(0);
        if (most < history.garbageInjected()) {
            violations.add(new Violation(
                    Kind.MALFORMED_NOT_COUNTED,
                    history.garbageInjected()
                            + " malformed records appended, but the most any member counted is " + most + " "
                            + history.malformedCounted()));
        }
    }
}
