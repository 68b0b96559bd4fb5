package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.krabka.coordination.sample.RoleHistory.Gap;
import io.krabka.coordination.sample.RoleHistory.History;
import io.krabka.coordination.sample.RoleHistory.Tenure;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The role's history from the device's accepted commands: tenures, gaps, the window, the bounds. No broker. */
class RoleHistoryTest {

    private static final Instant T0 = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration FIVE_MINUTES = Duration.ofMinutes(5);

    private final RoleHistory history = RoleHistory.forDispatchInterval(Duration.ofMillis(200), null);

    @Test
    void derivesTheShortestGapAndTheLiveToleranceFromTheDispatchInterval() {
        assertThat(history.minGap()).isEqualTo(Duration.ofMillis(300));
        assertThat(RoleHistory.forDispatchInterval(Duration.ofSeconds(1), null).minGap())
                .isEqualTo(Duration.ofMillis(1500));
        assertThat(RoleHistory.forDispatchInterval(Duration.ofMillis(200), Duration.ofMillis(1))
                        .minGap())
                .isEqualTo(Duration.ofMillis(1));
        // A shortest gap beyond the live tolerance widens the tolerance.
        assertThat(RoleHistory.forDispatchInterval(Duration.ofMillis(200), Duration.ofSeconds(5))
                        .minGap())
                .isEqualTo(Duration.ofSeconds(5));
        assertThatThrownBy(() -> new RoleHistory(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oneTenurePerTermFromItsFirstToItsLastCommandAndAGapBetweenHolders() {
        commands("n0", 1, 0, 200, 10_000);
        // n0 released; n1 took over 6 s after n0's last command.
        commands("n1", 219, 16_000, 200, 20_000);

        History window = history.window(at(20_100), FIVE_MINUTES);

        assertThat(window.role()).isEqualTo("controller");
        assertThat(window.from()).isEqualTo(at(20_100).minus(FIVE_MINUTES));
        assertThat(window.now()).isEqualTo(at(20_100));
        assertThat(window.minutes()).isEqualTo(5);
        assertThat(window.minGapMillis()).isEqualTo(300);
        assertThat(window.tenures())
                .containsExactly(
                        new Tenure(1, "n0", at(0), at(10_000), 51, false),
                        new Tenure(219, "n1", at(16_000), at(20_000), 21, true));
        assertThat(window.gaps()).containsExactly(new Gap(at(10_000), at(16_000), 6_000, 1, 219L, false));
    }

    @Test
    void aHandOffWithinTheCommandCadenceIsNoGap() {
        commands("n0", 1, 0, 200, 2_000);
        commands("n1", 2, 2_250, 200, 3_850);
        commands("n2", 3, 4_150, 200, 6_000);

        History window = history.window(at(6_000), FIVE_MINUTES);

        assertThat(window.tenures())
                .extracting(Tenure::term, Tenure::to)
                .containsExactly(tuple(1L, at(2_000)), tuple(2L, at(3_850)), tuple(3L, at(5_950)));
        // 250 ms is within the cadence; 300 ms is the shortest gap.
        assertThat(window.gaps()).containsExactly(new Gap(at(3_850), at(4_150), 300, 2, 3L, false));
    }

    @Test
    void theNewestTenureEndsInAnOngoingGapOnceItsCommandsStop() {
        commands("n0", 7, 0, 200, 3_000);

        History live = history.window(at(3_900), FIVE_MINUTES);
        assertThat(live.tenures()).singleElement().extracting(Tenure::ongoing).isEqualTo(true);
        assertThat(live.gaps()).isEmpty();

        // More than the live tolerance (1 s) without a command: n0 is gone, nobody took over yet.
        History stopped = history.window(at(4_500), FIVE_MINUTES);
        assertThat(stopped.tenures()).containsExactly(new Tenure(7, "n0", at(0), at(3_000), 16, false));
        assertThat(stopped.gaps()).containsExactly(new Gap(at(3_000), at(4_500), 1_500, 7, null, true));

        // The next holder closes it.
        commands("n1", 9, 9_000, 200, 9_400);
        History after = history.window(at(9_500), FIVE_MINUTES);
        assertThat(after.tenures())
                .extracting(Tenure::term, Tenure::ongoing)
                .containsExactly(tuple(7L, false), tuple(9L, true));
        assertThat(after.gaps()).containsExactly(new Gap(at(3_000), at(9_000), 6_000, 7, 9L, false));
    }

    @Test
    void theWindowCutsOffWhatEndedBeforeItButKeepsWhatOverlapsItsStart() {
        Instant now = at(0).plus(Duration.ofMinutes(10));
        Instant windowStart = now.minus(FIVE_MINUTES);
        // Ended 9 minutes ago: before the window, and so is the 2 s gap after it.
        commands("n0", 1, 0, 1_000, 60_000);
        Instant n0End = at(60_000);
        // 2 s later; ran until 4 minutes ago: overlaps the window's start.
        Instant n1Start = n0End.plusSeconds(2);
        Instant n1End = now.minus(Duration.ofMinutes(4));
        commands("n1", 2, n1Start, Duration.ofSeconds(1), n1End);
        // 30 s without a holder, inside the window; then n2 until now.
        commands("n2", 3, n1End.plusSeconds(30), Duration.ofSeconds(1), now);

        History window = history.window(now, FIVE_MINUTES);

        assertThat(window.from()).isEqualTo(windowStart);
        assertThat(window.tenures()).extracting(Tenure::term).containsExactly(2L, 3L);
        assertThat(window.tenures().get(0).from())
                .as("not clipped to the window")
                .isBefore(windowStart);
        assertThat(window.gaps()).containsExactly(new Gap(n1End, n1End.plusSeconds(30), 30_000, 2, 3L, false));

        // A one-minute window holds n2 alone, and no gap.
        History minute = history.window(now, Duration.ofMinutes(1));
        assertThat(minute.tenures()).extracting(Tenure::term).containsExactly(3L);
        assertThat(minute.gaps()).isEmpty();
    }

    @Test
    void aGapThatStraddlesTheWindowsStartIsShown() {
        commands("n0", 1, 0, 1_000, 10_000);
        Instant now = at(10_000).plus(Duration.ofMinutes(7));
        commands("n1", 2, now.minus(Duration.ofMinutes(1)), Duration.ofSeconds(1), now);

        History window = history.window(now, FIVE_MINUTES);

        assertThat(window.tenures()).extracting(Tenure::term).containsExactly(2L);
        assertThat(window.gaps())
                .containsExactly(new Gap(
                        at(10_000),
                        now.minus(Duration.ofMinutes(1)),
                        Duration.ofMinutes(6).toMillis(),
                        1,
                        2L,
                        false));
    }

    @Test
    void ignoresALowerTermAndCountsCommandsSentOutOfOrderWithinATerm() {
        history.record("n1", 5, at(1_000));
        history.record("n1", 5, at(400));
        history.record("n0", 4, at(1_200));
        history.record("n1", 5, at(900));

        assertThat(history.window(at(1_100), FIVE_MINUTES).tenures())
                .containsExactly(new Tenure(5, "n1", at(400), at(1_000), 3, true));
    }

    @Test
    void keepsAtMostItsLimitAndOnlyWhatEndedWithinItsRetention() {
        for (int term = 1; term <= RoleHistory.MAX_TENURES + 500; term++) {
            history.record("n" + term % 3, term, at(term * 1_000L));
        }
        History all = history.window(at((RoleHistory.MAX_TENURES + 500) * 1_000L), Duration.ofDays(1));
        assertThat(all.tenures()).hasSize(RoleHistory.MAX_TENURES);
        assertThat(all.tenures().get(0).term()).isEqualTo(501);

        // A term an hour later: of the old ones only the last stays, for the gap before the new one.
        Instant later = at((RoleHistory.MAX_TENURES + 500) * 1_000L).plus(Duration.ofHours(1));
        history.record("n9", 10_000, later);
        History after = history.window(later, Duration.ofDays(1));
        assertThat(after.tenures())
                .extracting(Tenure::term)
                .containsExactly((long) RoleHistory.MAX_TENURES + 500, 10_000L);
        assertThat(after.gaps())
                .singleElement()
                .extracting(Gap::millis)
                .isEqualTo(Duration.ofHours(1).toMillis());
    }

    /** One command of {@code term} every {@code every} from {@code from} up to and including {@code to}. */
    private void commands(String member, long term, Instant from, Duration every, Instant to) {
        for (Instant t = from; !t.isAfter(to); t = t.plus(every)) {
            history.record(member, term, t);
        }
    }

    /** The same in milliseconds after {@link #T0}. */
    private void commands(String member, long term, long fromMillis, long everyMillis, long toMillis) {
        commands(member, term, at(fromMillis), Duration.ofMillis(everyMillis), at(toMillis));
    }

    private static Instant at(long millis) {
        return T0.plusMillis(millis);
    }
}
