package io.krabka.coordination.chaos.check;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each rule of the checker, on hand-written histories: a clean one passes, each breach is named. */
class CheckerTest {

    private static final Checker CHECKER =
            new Checker(new Checker.GapBound(Duration.ofSeconds(2), Duration.ofMillis(500), 2, Duration.ofSeconds(5)));

    // m1 holds term 1 from t=1000 and renews until 5000; m2 is granted term 10 at 7500 and renews until 12000.
    private final List<Tenure> tenures = new ArrayList<>(List.of(
            new Tenure(1, "m1", 1000, 5000, OptionalLong.empty()),
            new Tenure(10, "m2", 7500, 12000, OptionalLong.empty())));
    // Interleaved with the periodic commands, the pipeline's: m1 processed request r0, m2 (after the failover) r1 and
    // r2.
    private final List<CommittedCommand> commands = new ArrayList<>(List.of(
            new CommittedCommand(0, "m1", 1, 0, 1100),
            new CommittedCommand(1, "m1", 1, 1, 4900),
            forRequest(2, "m1", 1, 3000, "r0"),
            new CommittedCommand(3, "m2", 10, 0, 7600),
            forRequest(4, "m2", 10, 8000, "r1"),
            forRequest(5, "m2", 10, 8000, "r2"),
            new CommittedCommand(6, "m2", 10, 1, 11900)));
    private final List<Ack> acks = new ArrayList<>(List.of(new Ack(1200, "m1", 1, 0), new Ack(7700, "m2", 10, 0)));
    private final List<Delivery> deliveries =
            new ArrayList<>(List.of(new Delivery(1210, "m1", 1, 0, true), new Delivery(7710, "m2", 10, 0, true)));
    private final List<TailCheck> tails = new ArrayList<>();
    private long garbage;
    private Map<String, Long> malformed = Map.of();
    // The producer sent r0..r3; r3's send failed, so it is not acknowledged and not in the input.
    private final Set<String> produced = new HashSet<>(Set.of("r0", "r1", "r2", "r3"));
    private final Set<String> acknowledged = new HashSet<>(Set.of("r0", "r1", "r2"));
    private final Map<String, List<InputPosition>> inputs = new HashMap<>(Map.of(
            "r0", List.of(new InputPosition(0, 0)),
            "r1", List.of(new InputPosition(1, 0)),
            "r2", List.of(new InputPosition(0, 1))));
    // The group committed every input record: partition 0 up to offset 2, partition 1 up to 1.
    private final Map<Integer, Long> committedOffsets = new HashMap<>(Map.of(0, 2L, 1, 1L));

    private final List<History.ChallengerFence> fences = new ArrayList<>();
    private final List<Outage> outages = new ArrayList<>();
    private final List<History.CurrentAnswer> currentAnswers = new ArrayList<>();

    private Checker.Result check() {
        return CHECKER.check(new History(
                commands,
                tenures,
                acks,
                deliveries,
                List.of(),
                tails,
                garbage,
                malformed,
                new Requests(produced, acknowledged, inputs, committedOffsets),
                12100,
                fences,
                outages,
                currentAnswers));
    }

    /** Another role, sharing the dispatcher's coordination partition: its terms are offsets of the same log. */
    private static final String OTHER = "role-1";

    private static CommittedCommand command(String role, long offset, String member, long term, long seq, long began) {
        return new CommittedCommand(role, 0, offset, member, term, seq, began, began, Optional.empty());
    }

    private static Tenure tenure(String role, long term, String member, long grantedAt, long lastLeaseAt) {
        return new Tenure(role, term, member, grantedAt, lastLeaseAt, OptionalLong.empty());
    }

    private static CommittedCommand forRequest(long offset, String member, long term, long began, String request) {
        return new CommittedCommand(offset, member, term, -1, began, Optional.of(request));
    }

    private List<Kind> kinds() {
        return check().violations().stream().map(Violation::kind).toList();
    }

    @Test
    void aCleanHistoryPassesAndItsFiguresAreCounted() {
        Checker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.leadershipChanges()).isEqualTo(1);
        assertThat(result.leadershipChangesByRole()).containsExactly(Map.entry(History.MAIN_ROLE, 1));
        assertThat(result.commandsCommitted()).isEqualTo(4);
        assertThat(result.longestGapMillis()).isEqualTo(2500);
        assertThat(result.longestGapAt()).isEqualTo("term 10");
        assertThat(result.requestsProduced()).isEqualTo(4);
        assertThat(result.requestsAcknowledged()).isEqualTo(3);
        assertThat(result.requestsProcessed()).isEqualTo(3);
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
    void aZombieWhoseWriteBeganBeforeTheGrantButReachedTheLogAfterItIsAStaleDispatch() {
        // The blind window of a rule that trusts the member's time: m1 read 7000, froze inside a
        // write that retries, and its records were appended at 7600, after m2's grant fenced it at 7500.
        commands.add(2, new CommittedCommand(2, "m1", 1, 2, 7000).appendedAt(7600));
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.STALE_DISPATCH);
        assertThat(violations.get(0).evidence()).contains("appended 100 ms after term 10 (m2) had fenced term 1");
    }

    @Test
    void theFencingTimeIsWhenTheNewHolderReportedItsGrantNotTheLeaseClock() {
        // m2's lease clock said 7500, but it reported the grant (after its InitProducerId) at 7550.
        tenures.set(1, new Tenure(10, "m2", 7500, 12000, OptionalLong.empty(), 7550));
        commands.add(2, new CommittedCommand(2, "m1", 1, 2, 7000).appendedAt(7540));
        assertThat(kinds()).isEmpty();
        commands.set(2, new CommittedCommand(2, "m1", 1, 2, 7000).appendedAt(7551));
        assertThat(kinds()).containsExactly(Kind.STALE_DISPATCH);
    }

    @Test
    void aCommandOfATermAChallengerFencedAfterTheChallengersTransactionIsCaught() {
        // A challenger ran InitProducerId when the coordination partition ended at offset 5, committed
        // its marker at offset 1 of the command log, and died without a lease; m1 (term 1) committed after it.
        fences.add(new History.ChallengerFence(0, 1, 5, 4000));
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.FENCED_BY_CHALLENGER_YET_COMMITTED);
        assertThat(violations.get(0).evidence()).contains("offset=2", "term 1 was granted before");
    }

    @Test
    void aChallengersFenceBindsOnlyEarlierTermsAndItsOwnPartition() {
        fences.add(new History.ChallengerFence(0, 2, 5, 6000)); // only term 10 (granted after it) follows
        fences.add(new History.ChallengerFence(1, 0, 5, 4000)); // another partition
        assertThat(kinds()).isEmpty();
    }

    @Test
    void termsAreOrderedPerOutputPartition() {
        // Term 1 in partition 1 after term 10 in partition 0: another log, no order between them.
        commands.add(new CommittedCommand(1, 0, "m1", 1, 3, 4950, 4950, Optional.empty()));
        assertThat(kinds()).isEmpty();
        commands.add(new CommittedCommand(1, 1, "m2", 10, 2, 11950, 11950, Optional.empty()));
        commands.add(new CommittedCommand(1, 2, "m1", 1, 4, 4960, 4960, Optional.empty()));
        assertThat(kinds()).containsExactly(Kind.TERM_BACKWARDS);
    }

    @Test
    void aLaterGrantsFirstWriteBeforeAnEarlierGrantsFirstWriteIsTermsGoingBackwards() {
        // m2 (term 10) wrote first, then m1's first write of term 1 appeared: a grant's first write out of order.
        commands.clear();
        commands.add(new CommittedCommand(0, "m2", 10, 0, 4000));
        commands.add(new CommittedCommand(1, "m1", 1, 0, 4100));
        acks.clear();
        deliveries.clear();
        inputs.clear();
        acknowledged.clear();
        committedOffsets.clear();
        tenures.set(1, new Tenure(10, "m2", 3900, 12000, OptionalLong.empty()));
        tenures.set(0, new Tenure(1, "m1", 1000, 3800, OptionalLong.empty()));
        assertThat(kinds()).contains(Kind.TERM_BACKWARDS);
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

    @Test
    void aRequestProcessedAgainAfterAFailoverIsADuplicate() {
        // m2 took over and wrote r0 again, although m1's transaction had committed r0 with its input offset.
        commands.add(4, forRequest(4, "m2", 10, 7650, "r0"));
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.REQUEST_DUPLICATED);
        assertThat(violations.get(0).evidence())
                .contains(
                        "request r0 (acknowledged, input [p0@0]) has 2 commands",
                        "offset 2 by m1 under term 1",
                        "offset 4 by m2 under term 10");
    }

    @Test
    void anUnacknowledgedRequestMayAppearOnceButNeverTwice() {
        // r3's acknowledgement was lost (a broker died), yet the write landed and the pipeline processed it.
        inputs.put("r3", List.of(new InputPosition(1, 1)));
        committedOffsets.put(1, 2L);
        commands.add(6, forRequest(6, "m2", 10, 9000, "r3"));
        assertThat(kinds()).isEmpty();
        assertThat(check().requestsProcessed()).isEqualTo(4);

        commands.add(7, forRequest(7, "m2", 10, 9100, "r3"));
        assertThat(kinds()).containsExactly(Kind.REQUEST_DUPLICATED);
    }

    @Test
    void anAcknowledgedRequestWithoutACommandWhoseOffsetWasCommittedIsLost() {
        commands.remove(4); // r1: its input offset p1@0 is below the committed 1, so some transaction claimed it
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.REQUEST_LOST);
        assertThat(violations.get(0).evidence()).contains("request r1", "[p1@0]", "committed past it");
    }

    @Test
    void anAcknowledgedRequestMissingFromTheInputTopicIsLost() {
        acknowledged.add("r3");
        assertThat(kinds()).containsExactly(Kind.REQUEST_LOST);
    }

    @Test
    void anAcknowledgedRequestTheGroupNeverPassedWasNotProcessedRatherThanLost() {
        commands.remove(4);
        committedOffsets.remove(1); // nothing committed on partition 1: the pipeline never got to r1
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.REQUEST_NOT_PROCESSED);
        assertThat(violations.get(0).evidence())
                .startsWith("1 acknowledged requests")
                .contains("r1@[p1@0]");
    }

    @Test
    void describeMayCallEachHolderCurrentDuringItsLeadershipAndTheOldOneUntilTheNewFencedIt() {
        currentAnswers.add(new History.CurrentAnswer(2000, 2010, History.MAIN_ROLE, "m1", 1));
        // Asked before m2's grant fenced m1 at 7500, answered after: m1 may still be called current.
        currentAnswers.add(new History.CurrentAnswer(7400, 7600, History.MAIN_ROLE, "m1", 1));
        currentAnswers.add(new History.CurrentAnswer(8000, 8010, History.MAIN_ROLE, "m2", 10));
        assertThat(kinds()).isEmpty();
    }

    @Test
    void describeCallingAForgedOrDeposedHolderCurrentIsCaught() {
        // A stranger a forged lease named, under the forged record's offset as its term.
        currentAnswers.add(new History.CurrentAnswer(3000, 3010, History.MAIN_ROLE, "intruder", 3));
        // m1, deposed at 7500 by m2's grant, called current at 9000 (a lease copying m2's epoch).
        currentAnswers.add(new History.CurrentAnswer(9000, 9010, History.MAIN_ROLE, "m1", 1));
        List<Violation> violations = check().violations();
        assertThat(violations)
                .extracting(Violation::kind)
                .containsExactly(Kind.CURRENT_FOR_NON_HOLDER, Kind.CURRENT_FOR_NON_HOLDER);
        assertThat(violations.get(0).evidence()).contains("intruder", "no leadership");
        assertThat(violations.get(1).evidence()).contains("m1", "m2 had fenced it by 7500");
    }

    @Test
    void aCommandForARequestNeverSentIsCaught() {
        commands.add(6, forRequest(6, "m2", 10, 9000, "r99"));
        assertThat(kinds()).containsExactly(Kind.REQUEST_UNKNOWN);
    }

    @Test
    void aPipelineCommandOfALowerTermAfterAHigherOneIsTermsGoingBackwards() {
        // r3, unacknowledged but written, committed under m1's term 1 after m2's commands of term 10.
        inputs.put("r3", List.of(new InputPosition(1, 1)));
        commands.add(forRequest(7, "m1", 1, 4950, "r3"));
        assertThat(kinds()).containsExactly(Kind.TERM_BACKWARDS);
    }

    @Test
    void aPipelineBatchCommittedAfterALaterGrantIsAStaleDispatch() {
        // m1, deposed at 7500, committed a batch it processed at 7600, before m2's first command in the log.
        inputs.put("r3", List.of(new InputPosition(1, 1)));
        commands.add(3, forRequest(3, "m1", 1, 7600, "r3"));
        assertThat(kinds()).containsExactly(Kind.STALE_DISPATCH);
    }

    @Test
    void aPipelineCommandDoesNotStandInForAnAcknowledgedPeriodicCommand() {
        // An acknowledged periodic (m2, 10, -1) cannot happen, but the pipeline's seq must never satisfy the rule.
        acks.add(new Ack(8100, "m2", 10, -1));
        assertThat(kinds()).containsExactly(Kind.ACKED_BUT_MISSING);
    }

    @Test
    void theSameTermNumberInTwoRolesIsTwoGrants() {
        // role-1's term 10 (m1) is another offset-10 grant than the dispatcher's term 10 (m2).
        tenures.add(tenure(OTHER, 10, "m1", 1000, 12000));
        commands.add(command(OTHER, 7, "m1", 10, 0, 11950));
        assertThat(kinds()).isEmpty();
    }

    @Test
    void aCommandUnderATermGrantedOnlyInAnotherRoleIsUngranted() {
        commands.add(command(OTHER, 7, "m2", 10, 0, 11950)); // term 10 is the dispatcher's grant to m2
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.UNGRANTED_TERM);
        assertThat(violations.get(0).evidence()).contains("role-1 term 10 is no grant");
    }

    @Test
    void onlyALaterGrantOfTheSameRoleMakesACommandStale() {
        // m3 holds role-1's term 5 and commits at 9000, after the dispatcher's term 10 was granted at 7500.
        tenures.add(tenure(OTHER, 5, "m3", 1000, 12000));
        commands.add(command(OTHER, 7, "m3", 5, 0, 9000));
        assertThat(kinds()).isEmpty();
        tenures.add(tenure(OTHER, 20, "m4", 8000, 12000)); // role-1 itself moved on at 8000
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.STALE_DISPATCH);
        assertThat(violations.get(0).evidence()).contains("1000 ms after role-1 term 20 (m4) had fenced term 5");
    }

    @Test
    void termsOfTwoRolesInterleaveInAPartitionButEachRolesTermsOnlyRise() {
        tenures.add(tenure(OTHER, 3, "m3", 1000, 6000));
        tenures.add(tenure(OTHER, 30, "m4", 6500, 12000));
        commands.add(command(OTHER, 7, "m3", 3, 0, 2000)); // after the dispatcher's term 10
        commands.add(command(OTHER, 8, "m4", 30, 0, 7000));
        commands.add(new CommittedCommand(9, "m2", 10, 2, 11950)); // the dispatcher's term 10 after role-1's 30
        assertThat(kinds()).isEmpty();
        commands.add(command(OTHER, 10, "m3", 3, 1, 5900));
        assertThat(kinds()).containsExactly(Kind.TERM_BACKWARDS);
    }

    @Test
    void aGapOfAnotherRoleAloneIsALeaderlessGapNamingThatRole() {
        tenures.add(tenure(OTHER, 3, "m3", 1000, 2000));
        tenures.add(tenure(OTHER, 30, "m4", 10000, 12000)); // 8000 ms: just the bound
        assertThat(kinds()).isEmpty();
        tenures.set(3, tenure(OTHER, 30, "m4", 10001, 12000));
        Checker.Result result = check();
        assertThat(result.violations()).extracting(Violation::kind).containsExactly(Kind.LEADERLESS_GAP);
        assertThat(result.violations().get(0).evidence()).contains("8001 ms without a holder before role-1 term 30");
        assertThat(result.longestGapMillis()).isEqualTo(8001);
        assertThat(result.longestGapAt()).isEqualTo("role-1 term 30");
    }

    @Test
    void theTimeAGapSpentInAHarnessOutageDoesNotCount() {
        // role-1 has no holder from 2000 to 11000: 9000 ms, 1000 over the bound.
        tenures.add(tenure(OTHER, 3, "m3", 1000, 2000));
        tenures.add(tenure(OTHER, 30, "m4", 11000, 12000));
        outages.add(new Outage(1500, 3000)); // 1000 ms of it inside the gap
        Checker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.longestGapMillis()).isEqualTo(8000);

        // Two overlapping outages covering 999 ms of the gap: counted once, 8001 ms remain.
        outages.set(0, new Outage(1500, 2600));
        outages.add(new Outage(2500, 2999));
        List<Violation> violations = check().violations();
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.LEADERLESS_GAP);
        assertThat(violations.get(0).evidence())
                .contains("9000 ms without a holder", "999 ms of it in harness outages", "= 8000 ms");
    }

    @Test
    void aRoleLeftWithoutAHolderAtTheEndDuringAnOutageIsNoGap() {
        tenures.add(tenure(OTHER, 3, "m3", 1000, 2000)); // 10100 ms to the end at 12100
        assertThat(kinds()).containsExactly(Kind.LEADERLESS_GAP);
        outages.add(new Outage(2000, 4100));
        assertThat(kinds()).isEmpty();
    }

    @Test
    void leadershipChangesAreCountedPerRoleAndSummed() {
        tenures.add(tenure(OTHER, 3, "m3", 1000, 4000));
        tenures.add(tenure(OTHER, 30, "m4", 4500, 8000));
        tenures.add(tenure(OTHER, 31, "m3", 8500, 12000));
        tenures.add(tenure("role-2", 2, "m5", 1000, 12000));
        Checker.Result result = check();
        assertThat(result.violations()).isEmpty();
        assertThat(result.leadershipChangesByRole())
                .containsExactlyInAnyOrderEntriesOf(Map.of(History.MAIN_ROLE, 1, OTHER, 2, "role-2", 0));
        assertThat(result.leadershipChanges()).isEqualTo(3);
    }

    @Test
    void anAckIsSatisfiedOnlyByACommandOfItsRole() {
        // The dispatcher has (m1, 1, 0); role-1 does not.
        acks.add(new Ack(1300, OTHER, "m1", 1, 0));
        assertThat(kinds()).containsExactly(Kind.ACKED_BUT_MISSING);
        tenures.add(tenure(OTHER, 1, "m1", 1000, 12000));
        commands.add(command(OTHER, 7, "m1", 1, 0, 1250));
        assertThat(kinds()).isEmpty();
    }

    @Test
    void aChallengersFenceBindsOnlyTheMainRole() {
        // The challenger fenced the dispatcher's terms below 5, not role-1's term 3.
        fences.add(new History.ChallengerFence(0, 6, 5, 11000));
        tenures.add(tenure(OTHER, 3, "m3", 1000, 12000));
        commands.add(command(OTHER, 7, "m3", 3, 0, 11500));
        assertThat(kinds()).isEmpty();
        commands.add(new CommittedCommand(8, "m1", 1, 2, 4990));
        assertThat(kinds()).contains(Kind.FENCED_BY_CHALLENGER_YET_COMMITTED);
    }
}
