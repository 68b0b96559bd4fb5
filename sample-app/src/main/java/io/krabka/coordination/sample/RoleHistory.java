package io.krabka.coordination.sample;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Who held the role, as the device's committed log tells it: one <em>tenure</em> per
 * term, from the first to the last command of that term the device accepted (by the
 * commands' {@code sentAt}), and the <em>gaps</em> between consecutive tenures. Every
 * member reads the same log from its beginning, so every member builds the same history,
 * and a page reload loses none of it.
 *
 * <p>A gap is the time from the last command of one term to the first command of the
 * next, when it is at least {@code minGap}. The leader sends a command every dispatch
 * interval, so the last command of a term can precede its end by up to one interval: a
 * shorter pause is the commands' cadence, not time without a holder, and two tenures
 * that close are shown as a hand-off without a gap. A gap is time in which no holder
 * commanded the device: after a release, the new holder's grant; after a crash, the rest
 * of the dead holder's lease and the standby's stagger. When the newest term's last
 * command is older than {@code liveTolerance}, the history ends with an ongoing gap up
 * to now; otherwise the newest tenure is ongoing.
 *
 * <p>Bounded: it keeps at most {@value #MAX_TENURES} tenures, and only those that ended
 * within {@link #RETENTION} of the newest command, plus the one before them, so that the
 * oldest kept tenure still has the gap before it.
 *
 * <p>The commands' times come from the clocks of the members that sent them; on one
 * machine (the demo) they agree.
 */
final class RoleHistory {

    static final int MAX_TENURES = 1_000;
    static final Duration RETENTION = Duration.ofMinutes(30);

    private final Duration minGap;
    private final Duration liveTolerance;
    // Oldest first; terms strictly increase.
    private final List<Span> spans = new ArrayList<>();

    /**
     * @param minGap the shortest pause between two terms' commands that counts as a gap
     * @param liveTolerance how old the newest command may be for its tenure to count as
     *     ongoing; at least {@code minGap}
     */
    RoleHistory(Duration minGap, Duration liveTolerance) {
        if (minGap.isNegative() || liveTolerance.compareTo(minGap) < 0) {
            throw new IllegalArgumentException(
                    "need 0 <= minGap <= liveTolerance, got " + minGap + " and " + liveTolerance);
        }
        this.minGap = minGap;
        this.liveTolerance = liveTolerance;
    }

    /**
     * For a leader that sends a command every {@code dispatchInterval}: a gap is at least
     * 1.5 intervals (300 ms for the default 200 ms) unless {@code minGap} says otherwise
     * ({@code sample.history.min-gap}), and a tenure is ongoing while its newest command
     * is at most 5 intervals old, never less than one second (the device's read lag) nor
     * than the shortest gap.
     *
     * @param minGap the shortest gap, or null for 1.5 dispatch intervals
     */
    static RoleHistory forDispatchInterval(Duration dispatchInterval, Duration minGap) {
        Duration shortest =
                minGap != null ? minGap : dispatchInterval.multipliedBy(3).dividedBy(2);
        Duration live = longest(dispatchInterval.multipliedBy(5), Duration.ofSeconds(1), shortest);
        return new RoleHistory(shortest, live);
    }

    private static Duration longest(Duration first, Duration... others) {
        Duration longest = first;
        for (Duration other : others) {
            if (other.compareTo(longest) > 0) {
                longest = other;
            }
        }
        return longest;
    }

    Duration minGap() {
        return minGap;
    }

    /**
     * One command the device accepted. Its terms never go down, so a lower term than the
     * newest kept is ignored.
     */
    synchronized void record(String member, long term, Instant sentAt) {
        if (member == null || sentAt == null) {
            return;
        }
        Span newest = spans.isEmpty() ? null : spans.get(spans.size() - 1);
        if (newest != null && term == newest.term) {
            newest.add(sentAt);
            return;
        }
        if (newest != null && term < newest.term) {
            return;
        }
        spans.add(new Span(term, member, sentAt));
        prune();
    }

    private void prune() {
        Instant newest = spans.get(spans.size() - 1).to;
        Instant cutOff = newest.minus(RETENTION);
        int drop = Math.max(0, spans.size() - MAX_TENURES);
        // Keep the last tenure that ended before the cut-off: the gap after it is still known.
        while (drop + 1 < spans.size() && spans.get(drop + 1).to.isBefore(cutOff)) {
            drop++;
        }
        if (drop > 0) {
            spans.subList(0, drop).clear();
        }
    }

    /**
     * The tenures and gaps that overlap {@code [now - length, now]}, oldest first. Their
     * times are not clipped to the window.
     */
    synchronized History window(Instant now, Duration length) {
        Instant from = now.minus(length);
        List<Tenure> tenures = new ArrayList<>();
        List<Gap> gaps = new ArrayList<>();
        for (int i = 0; i < spans.size(); i++) {
            Span span = spans.get(i);
            boolean newest = i == spans.size() - 1;
            boolean ongoing = newest && !span.to.plus(liveTolerance).isBefore(now);
            if (i > 0) {
                Span before = spans.get(i - 1);
                Duration pause = Duration.between(before.to, span.from);
                if (pause.compareTo(minGap) >= 0 && !span.from.isBefore(from) && !before.to.isAfter(now)) {
                    gaps.add(new Gap(before.to, span.from, pause.toMillis(), before.term, span.term, false));
                }
            }
            if ((ongoing || !span.to.isBefore(from)) && !span.from.isAfter(now)) {
                tenures.add(new Tenure(span.term, span.member, span.from, span.to, span.commands, ongoing));
            }
            if (newest && !ongoing) {
                // Nobody has commanded the device since this term's last command.
                gaps.add(new Gap(span.to, now, Duration.between(span.to, now).toMillis(), span.term, null, true));
            }
        }
        return new History(CommandDispatcher.ROLE, from, now, length.toMinutes(), minGap.toMillis(), tenures, gaps);
    }

    /**
     * What {@code GET /history} answers.
     *
     * @param role the role whose history this is
     * @param from the window's start
     * @param now the window's end: this member's clock when it answered
     * @param minutes the window's length
     * @param minGapMillis the shortest pause between two terms that counts as a gap
     * @param tenures the tenures that overlap the window, oldest first
     * @param gaps the gaps that overlap the window, oldest first
     */
    record History(
            String role,
            Instant from,
            Instant now,
            long minutes,
            long minGapMillis,
            List<Tenure> tenures,
            List<Gap> gaps) {}

    /**
     * One leadership as the device saw it.
     *
     * @param term its term
     * @param member the member that held it
     * @param from its first command's {@code sentAt}
     * @param to its last command's {@code sentAt} so far
     * @param commands how many of its commands the device accepted
     * @param ongoing whether it is the newest term and its last command is recent: its
     *     holder still commands the device
     */
    record Tenure(long term, String member, Instant from, Instant to, long commands, boolean ongoing) {}

    /**
     * Time without a holder's commands between two tenures.
     *
     * @param from the last command of the term before
     * @param to the first command of the term after, or now while ongoing
     * @param millis its length
     * @param afterTerm the term before it
     * @param beforeTerm the term after it; null while ongoing
     * @param ongoing whether no term has followed yet
     */
    record Gap(Instant from, Instant to, long millis, long afterTerm, Long beforeTerm, boolean ongoing) {}

    private static final class Span {
        final long term;
        final String member;
        Instant from;
        Instant to;
        long commands;

        Span(long term, String member, Instant sentAt) {
            this.term = term;
            this.member = member;
            this.from = sentAt;
            this.to = sentAt;
            this.commands = 1;
        }

        void add(Instant sentAt) {
            if (sentAt.isBefore(from)) {
                from = sentAt;
            }
            if (sentAt.isAfter(to)) {
                to = sentAt;
            }
            commands++;
        }
    }
}
