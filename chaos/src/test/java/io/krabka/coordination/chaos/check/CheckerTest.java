package io.krabka.coordination.chaos.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.coordination.chaos.check.History.Ack;
import io.krabka.coordination.chaos.check.History.CommittedCommand;
import io.krabka.coordination.chaos.check.History.Delivery;
import io.krabka.coordination.chaos.check.History.TailCheck;
import io.krabka.coordination.chaos.check.History.Tenure;
import io.krabka.coordination.chaos.check.Violation.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Each rule of the checker, on hand-written histories: a clean one passes, each breach is named. */
class CheckerTest {

    private static final Checker CHECKER = new Checker(
            new Checker.GapBound(Duration.ofSeconds(2), Duration.ofMillis(500), 2, Duration.ofSeconds(5)));

    // m1 holds term 1 from t=1000 and renews until 5000; m2 is granted term 10 at 7500 and renews until 12000.
    private final List<Tenure> tenures = new ArrayList<>(List.of(
            new Tenure(1, "m1", 1000, 5000, OptionalLong.empty()),
            new Tenure(10, "m2", 7500, 12000, OptionalLong.empty())));
    private final List<CommittedCommand> commands = new ArrayList<>(List.of(
            new CommittedCommand(0, "m1", 1, 0, 1100),
            new CommittedCommand(1, "m1", 1, 1, 4900),
            new CommittedCommand(2, "m2", 10, 0, 7600),
            new CommittedCommand(3, "m2", 10, 1, 11900)));
    private final List<Ack> acks = new ArrayList<>(List.of(new Ack(1200, "m1", 1, 0), new Ack(7700, "m2", 10, 0)));
    private final List<Delivery> deliveries = new ArrayList<>(List.of(
            new Delivery(1210, "m1", 1, 0, true), new Delivery(7710, "m2", 10, 0, true)));
    private final List<TailCheck> tails = new ArrayList<>();
    private long garbage;
    private Map<String, Long> malformed = Map.of();

    private Checker.Result check() {
        return CHECKER.check(new History(commands, tenures, acks, deliveries, List.of(), tails, garbage, malformed, 12100));
    }

    private List<Kind> kinds() {
        return check().violations().stream().map(Violation::kind).toList();
    }

    @Test
    void aCleanHistoryPassesAndItsFiguresAreCounted() {
        Checker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.leadershipChanges()).isEqualTo(1);
        assertThat(result.commandsCommitted()).isEqualTo(4);
        assertThat(result.longestGapMillis()).isEqualTo(2500);
    }

    @Test
    void aCommandWhoseTransactionBeganAfterALaterGrantIsAStaleDispatch() {
        // m1, deposed at 7500 (m2's grant), committed a command it began at 7600.
        commands.add(2, new CommittedCommand(2, "m1", 1, 2, 7600));
        assertThat(kinds()).contains(Kind.STALE_DISPATCH);
    }

    @Test
    void aCommandThatBeganBeforeTheNextGrantIsNotStale() {
        commands.add(2, new CommittedCommand(2, "m1", 1, 2, 7499));
        assertThat(kinds()).isEmpty();
    }

    @Test
    void aLowerTermAfterAHigherOneIsTermsGoingBackwards() {
        commands.add(new CommittedCommand(4, "m1", 1, 2, 4950));
        assertThat(kinds()).containsExactly(Kind.TERM_BACKWARDS);
    }

    @Test
    void twoMembersUnderOneTermAreCaught() {
        commands.add(2, new CommittedCommand(2, "m3", 1, 0, 2000));
        assertThat(kinds()).contains(Kind.SHARED_TERM, Kind.UNGRANTED_TERM);
    }

    @Test
    void aTermNoLeaseGrantedIsCaught() {
        commands.add(new CommittedCommand(4, "m2", 11, 0, 11950));
        assertThat(kinds()).containsExactly(Kind.UNGRANTED_TERM);
    }

    @Test
    void anAcknowledgedCommandMissingFromTheLogIsCaught() {
        acks.add(new Ack(8000, "m2", 10, 7));
        assertThat(kinds()).containsExactly(Kind.ACKED_BUT_MISSING);
    }

    @Test
    void aDeliveryOfACommandThatIsNotInTheLogIsCaught() {
        deliveries.add(new Delivery(8000, "m2", 10, 9, true));
        assertThat(kinds()).containsExactly(Kind.DISPATCHED_BUT_NOT_COMMITTED);
    }

    @Test
    void aLeaderlessGapBeyondTheBoundIsCaughtAndAReleaseEndsATenureEarly() {
        tenures.set(1, new Tenure(10, "m2", 13001, 15000, OptionalLong.empty())); // 8001 ms after m1's last lease
        assertThat(kinds()).contains(Kind.LEADERLESS_GAP);

        tenures.set(0, new Tenure(1, "m1", 1000, 5000, OptionalLong.of(3000)));
        tenures.set(1, new Tenure(10, "m2", 11001, 15000, OptionalLong.empty())); // 8001 ms after m1's release
        assertThat(kinds()).contains(Kind.LEADERLESS_GAP);
    }

    @Test
    void aRoleLeftWithoutAHolderAtTheEndIsAGap() {
        tenures.set(1, new Tenure(10, "m2", 7500, 4000, OptionalLong.of(4000)));
        assertThat(kinds()).containsExactly(Kind.LEADERLESS_GAP);
    }

    @Test
    void garbageNoMemberCountedIsCaught() {
        garbage = 3;
        malformed = Map.of("m1", 2L, "m2", 1L);
        assertThat(kinds()).containsExactly(Kind.MALFORMED_NOT_COUNTED);
        malformed = Map.of("m1", 3L);
        assertThat(kinds()).isEmpty();
    }

    @Test
    void aRestartedMemberAheadOfOlderRegistrationsIsCaught() {
        tails.add(new TailCheck(6000, "m1", List.of("m3")));
        assertThat(kinds()).containsExactly(Kind.RESTART_NOT_AT_TAIL);
    }

    @Test
    void refusedDeliveriesAreCountedButAreNotViolations() {
        deliveries.add(new Delivery(7800, "m1", 1, 1, false));
        Checker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.deliveriesRefused()).isEqualTo(1);
    }
}
