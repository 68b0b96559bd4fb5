package io.krabka.streams.coordination.succession;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The rules at explicit instants. Whole failovers are in {@link FailoverTest}. */
class SuccessionTest {

    private static final Role ROLE = Role.of("controller");
    private static final MemberId A = MemberId.of("a");
    private static final MemberId B = MemberId.of("b");
    private static final MemberId C = MemberId.of("c");
    private static final LeaseConfig CONFIG = LeaseConfig.DEFAULTS; // 30 s lease, 10 s renew, 5 s stagger
    private static final long T0 = 1_700_000_000_000L;

    @Test
    void unregisteredMemberRegistersFirst() {
        RoleState state = RoleState.builder(ROLE).register(0, A, T0).build();
        assertThat(Succession.evaluate(state, B, false, CONFIG, Instant.ofEpochMilli(T0)))
                .isEqualTo(new Decision.Register());
    }

    @Test
    void firstMemberOfAnIdleRoleChallengesAtItsOwnRegistration() {
        RoleState state = RoleState.builder(ROLE).register(0, A, T0).build();
        assertThat(Succession.evaluate(state, A, false, CONFIG, Instant.ofEpochMilli(T0)))
                .isEqualTo(new Decision.Challenge(0, Instant.ofEpochMilli(T0)));
    }

    @Test
    void secondMemberOfAnIdleRoleWaitsOneStaggerAfterItsOwnRegistration() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0 + 100)
                .build();
        Instant challengeAt = Instant.ofEpochMilli(T0 + 100).plus(CONFIG.challengeStagger());
        assertThat(Succession.evaluate(state, B, false, CONFIG, Instant.ofEpochMilli(T0 + 200)))
                .isEqualTo(new Decision.Wait(1, challengeAt));
        assertThat(Succession.evaluate(state, B, false, CONFIG, challengeAt))
                .isEqualTo(new Decision.Challenge(1, challengeAt));
    }

    @Test
    void theStaggerGrowsWithRankUpToOneLeaseAndNoFurther() {
        // rank -> the wait after the anchor, at a 30 s lease and a 5 s stagger
        long[][] table = {{0, 0}, {1, 5}, {5, 25}, {6, 30}, {7, 30}, {720, 30}};
        for (long[] row : table) {
            assertThat(Succession.stagger((int) row[0], CONFIG))
                    .as("rank %d", row[0])
                    .isEqualTo(Duration.ofSeconds(row[1]));
        }
    }

    @Test
    void aStandbyBehindHundredsOfStaleRegistrationsChallengesOneLeaseAfterTheDeadline() {
        RoleStateBuilder roster = RoleState.builder(ROLE).register(0, A, T0).lease(1, A, 7, (short) 0, T0, T0 + 30_000);
        for (int i = 0; i < 720; i++) {
            roster.register(2 + i, MemberId.of("stale-" + i), T0);
        }
        RoleState state = roster.register(722, B, T0).build();
        Instant oneLeaseLater = Instant.ofEpochMilli(T0 + 30_000).plus(CONFIG.duration());
        assertThat(Succession.evaluate(state, B, false, CONFIG, Instant.ofEpochMilli(T0 + 31_000)))
                .isEqualTo(new Decision.Wait(720, oneLeaseLater));
        assertThat(Succession.evaluate(state, B, false, CONFIG, oneLeaseLater))
                .isEqualTo(new Decision.Challenge(720, oneLeaseLater));
    }

    @Test
    void underSpreadAStandbyBelowItsShareTakesARoleThatRanOutBeforeOneAtItsShareAheadOfIt() {
        MemberId d = MemberId.of("d");
        // a held the role and crashed; b is first in the roster but holds its share already.
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .lease(1, A, 7, (short) 0, T0, T0 + 30_000)
                .register(2, B, T0)
                .register(3, C, T0)
                .register(4, d, T0)
                .build();
        Shares shares = new Shares(8, java.util.Map.of(B, 4, C, 1, d, 1), java.util.Set.of(A, B, C, d));
        Instant deadline = Instant.ofEpochMilli(T0 + 30_000);
        Decision b = Succession.evaluate(state, B, false, CONFIG, deadline, shares);
        Decision c = Succession.evaluate(state, C, false, CONFIG, deadline, shares);
        Decision dd = Succession.evaluate(state, d, false, CONFIG, deadline, shares);
        // c and d, below their share, go first, in an order hashed from the role and the member; b after both,
        // but never more than one stagger after its roster rank (0) says.
        assertThat(java.util.List.of(c, dd))
                .extracting(Object::getClass)
                .containsExactlyInAnyOrder(Decision.Challenge.class, Decision.Wait.class);
        assertThat(b).isEqualTo(new Decision.Wait(2, deadline.plus(CONFIG.challengeStagger())));
        MemberId first = c instanceof Decision.Challenge ? C : d;
        assertThat(Succession.dueBefore(state, first, CONFIG, shares)).isEmpty();
        assertThat(Succession.dueBefore(state, B, CONFIG, shares)).containsExactly(first);
        // Without shares, the roster order: b first.
        assertThat(Succession.evaluate(state, B, false, CONFIG, deadline))
                .isEqualTo(new Decision.Challenge(0, deadline));
    }

    @Test
    void underSpreadAReleaseKeepsTheRosterOrderThatAHandoverArranged() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .lease(1, A, 7, (short) 0, T0, T0 + 30_000)
                .register(2, B, T0)
                .register(3, C, T0)
                .deregister(4, A, T0 + 1_000)
                .release(5, T0 + 1_000)
                .build();
        Shares shares = new Shares(8, java.util.Map.of(B, 4, C, 0), java.util.Set.of(B, C));
        Instant released =
                Instant.ofEpochMilli(Math.max(T0, state.leaseReleasedAt().orElseThrow()));
        assertThat(Succession.evaluate(state, B, false, CONFIG, released, shares))
                .isEqualTo(new Decision.Challenge(0, released));
        assertThat(Succession.evaluate(state, C, false, CONFIG, released, shares))
                .isEqualTo(new Decision.Wait(1, released.plus(CONFIG.challengeStagger())));
    }

    @Test
    void underSpreadARoleThatNeverHadALeaseIsPlacedOnceFromTheNewestRegistration() {
        // Three members started together: none holds anything, the newest registered at T0 + 2 s.
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0 + 1_000)
                .register(2, C, T0 + 2_000)
                .build();
        Shares none = new Shares(3, java.util.Map.of(), java.util.Set.of(A, B, C));
        Instant gathered = Instant.ofEpochMilli(T0 + 2_000).plus(CONFIG.challengeStagger());
        java.util.List<Decision> decisions = java.util.stream.Stream.of(A, B, C)
                .map(m -> Succession.evaluate(state, m, false, CONFIG, gathered, none))
                .toList();
        // One member (by a hash of role and member, not by who registered first) goes at the common anchor, the
        // others one and two staggers later: their places in the spread order.
        assertThat(decisions).filteredOn(Decision.Challenge.class::isInstance).hasSize(1);
        assertThat(decisions)
                .filteredOn(Decision.Wait.class::isInstance)
                .extracting(d -> ((Decision.Wait) d).challengeAt())
                .containsExactlyInAnyOrder(
                        gathered.plus(CONFIG.challengeStagger()),
                        gathered.plus(CONFIG.challengeStagger().multipliedBy(2)));
        // Before the anchor, no one: a member registered first no longer takes every role at once.
        assertThat(Succession.evaluate(state, A, false, CONFIG, gathered.minusMillis(1), none))
                .isInstanceOf(Decision.Wait.class);
        // Without shares (Balance.NONE), the roster order as before: a at its own registration.
        assertThat(Succession.evaluate(state, A, false, CONFIG, Instant.ofEpochMilli(T0)))
                .isEqualTo(new Decision.Challenge(0, Instant.ofEpochMilli(T0)));
        // A winner prunes no one as silent there: the others may have let it go first.
        assertThat(Succession.dueBefore(state, C, CONFIG, none)).isEmpty();
    }

    @Test
    void underSpreadAMemberAtItsShareGoesAfterTheOthersForAFreshRoleAndStillTakesIt() {
        RoleState state =
                RoleState.builder(ROLE).register(0, A, T0).register(1, B, T0).build();
        Shares aFull = new Shares(2, java.util.Map.of(A, 1), java.util.Set.of(A, B));
        Instant gathered = Instant.ofEpochMilli(T0).plus(CONFIG.challengeStagger());
        assertThat(Succession.evaluate(state, B, false, CONFIG, gathered, aFull))
                .isEqualTo(new Decision.Challenge(0, gathered));
        // After every place below its share (b's, the first), one stagger after the last: a is second, so two.
        Instant afterTheOthers = gathered.plus(CONFIG.challengeStagger().multipliedBy(2));
        assertThat(Succession.evaluate(state, A, false, CONFIG, gathered, aFull))
                .isEqualTo(new Decision.Wait(1, afterTheOthers));
        assertThat(Succession.evaluate(state, A, false, CONFIG, afterTheOthers, aFull))
                .isEqualTo(new Decision.Challenge(1, afterTheOthers));
        // The member's own count of what it holds decides, through withHeld: below its share, its place in the
        // spread order (first or second), not one lease more.
        Decision counted = Succession.evaluate(state, A, false, CONFIG, gathered, aFull.withHeld(A, 0));
        Instant at = counted instanceof Decision.Wait wait
                ? wait.challengeAt()
                : ((Decision.Challenge) counted).challengeAt();
        assertThat(at).isBetween(gathered, gathered.plus(CONFIG.challengeStagger()));
    }

    @Test
    void underSpreadAMemberWaitingForItsPlaceReadsAgainAfterEachEarlierTurn() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .register(2, C, T0)
                .build();
        Instant gathered = Instant.ofEpochMilli(T0).plus(CONFIG.challengeStagger());
        Duration half = CONFIG.challengeStagger().dividedBy(2);
        Instant third = gathered.plus(CONFIG.challengeStagger().multipliedBy(2));
        // Third in the spread order: half a stagger after the first place's turn, then after the second's.
        assertThat(Succession.placementReadAgain(state, C, CONFIG, Instant.ofEpochMilli(T0), third))
                .contains(gathered.plus(half));
        assertThat(Succession.placementReadAgain(state, C, CONFIG, gathered.plus(half), third))
                .contains(gathered.plus(CONFIG.challengeStagger()).plus(half));
        // None left before its own turn, and none for the first place.
        assertThat(Succession.placementReadAgain(
                        state,
                        C,
                        CONFIG,
                        gathered.plus(CONFIG.challengeStagger()).plus(half),
                        third))
                .isEmpty();
        assertThat(Succession.placementReadAgain(state, C, CONFIG, Instant.ofEpochMilli(T0), gathered))
                .isEmpty();
    }

    @Test
    void aMemberThatRegistersAgainAndAgainDelaysAFreshRoleByOneLeaseAtMost() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0 + 3_600_000)
                .build();
        Shares none = new Shares(1, java.util.Map.of(), java.util.Set.of(A, B));
        Decision a = Succession.evaluate(state, A, false, CONFIG, Instant.ofEpochMilli(T0), none);
        Instant latest = Instant.ofEpochMilli(T0).plus(CONFIG.duration()).plus(CONFIG.challengeStagger());
        assertThat(((Decision.Wait) a).challengeAt()).isBetween(latest, latest.plus(CONFIG.challengeStagger()));
    }

    @Test
    void aChallengeInFlightSeenAtSomeInstantIsWaitedForLikeALeaseFirstSeenThen() {
        Instant seen = Instant.ofEpochMilli(T0);
        assertThat(Succession.challengeAfter(seen, 0, CONFIG)).isEqualTo(seen.plus(CONFIG.duration()));
        assertThat(Succession.challengeAfter(seen, 2, CONFIG))
                .isEqualTo(seen.plus(CONFIG.duration()).plusSeconds(10));
    }

    @Test
    void holderRenewsOneRenewIntervalAfterItsNewestLease() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .lease(1, A, 7, (short) 0, T0, T0 + 30_000)
                .build();
        Instant renewAt = Instant.ofEpochMilli(T0 + 10_000);
        assertThat(Succession.evaluate(state, A, true, CONFIG, Instant.ofEpochMilli(T0 + 9_999)))
                .isEqualTo(new Decision.Hold(renewAt));
        assertThat(Succession.evaluate(state, A, true, CONFIG, renewAt)).isEqualTo(new Decision.Renew(renewAt));
        // The holder's own schedule (Leadership.renewAt) asks the same rule, from when it wrote the lease.
        assertThat(Succession.renewAt(Instant.ofEpochMilli(T0), CONFIG)).isEqualTo(renewAt);
        // Past the deadline the holder still renews: the broker, not the lease, decides whether it may write.
        assertThat(Succession.evaluate(state, A, true, CONFIG, Instant.ofEpochMilli(T0 + 60_000)))
                .isInstanceOf(Decision.Renew.class);
    }

    @Test
    void holderWithNoVisibleLeaseWritesOneNow() {
        RoleState state = RoleState.builder(ROLE).register(0, A, T0).build();
        Instant now = Instant.ofEpochMilli(T0 + 5);
        assertThat(Succession.evaluate(state, A, true, CONFIG, now)).isEqualTo(new Decision.Renew(now));
    }

    @Test
    void holderThatSeesAnotherMembersLeaseStepsDown() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .lease(2, A, 7, (short) 0, T0, T0 + 30_000)
                .lease(3, B, 7, (short) 2, T0 + 31_000, T0 + 61_000)
                .build();
        assertThat(Succession.evaluate(state, A, true, CONFIG, Instant.ofEpochMilli(T0 + 31_500)))
                .isEqualTo(new Decision.StepDown(B));
    }

    @Test
    void standbysChallengeAtDeadlinePlusRankStaggers() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .register(2, C, T0)
                .lease(3, A, 7, (short) 0, T0, T0 + 30_000)
                .build();
        Instant deadline = Instant.ofEpochMilli(T0 + 30_000);
        Instant early = Instant.ofEpochMilli(T0 + 1_000);
        assertThat(Succession.evaluate(state, B, false, CONFIG, early)).isEqualTo(new Decision.Wait(0, deadline));
        assertThat(Succession.evaluate(state, C, false, CONFIG, early))
                .isEqualTo(new Decision.Wait(1, deadline.plusSeconds(5)));
    }

    @Test
    void afterAGracefulReleaseRankZeroChallengesAtOnceAndRankOneOneStaggerLater() {
        // The release begins with the holder leaving the roster (a plain append, seen first),
        // then its lease tombstone: the standbys anchor on the first.
        RoleStateBuilder builder = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .register(2, C, T0)
                .lease(3, A, 7, (short) 0, T0, T0 + 30_000);
        builder.apply(4, T0 + 12_000, CoordinationKey.registration(ROLE, A), Optional.empty());
        RoleState state = builder.release(5, T0 + 12_004).build();
        Instant released = Instant.ofEpochMilli(T0 + 12_000);
        assertThat(Succession.evaluate(state, B, false, CONFIG, released))
                .isEqualTo(new Decision.Challenge(0, released));
        assertThat(Succession.evaluate(state, C, false, CONFIG, released))
                .isEqualTo(new Decision.Wait(1, released.plusSeconds(5)));
    }

    @Test
    void challengeInstantDoesNotMoveWithNow() {
        // The seed's warning: an anchor of "now + n staggers" would recede on every
        // evaluation, so rank 1 would never challenge while rank 0 is dead.
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .register(2, C, T0)
                .lease(3, A, 7, (short) 0, T0, T0 + 30_000)
                .build();
        ManualClock clock = new ManualClock(Instant.ofEpochMilli(T0));
        Instant expected = Instant.ofEpochMilli(T0 + 35_000);
        Decision decision = Succession.evaluate(state, C, false, CONFIG, clock.instant());
        while (decision instanceof Decision.Wait wait) {
            assertThat(wait.challengeAt()).isEqualTo(expected);
            clock.advance(Duration.ofMillis(700));
            decision = Succession.evaluate(state, C, false, CONFIG, clock.instant());
        }
        assertThat(decision).isEqualTo(new Decision.Challenge(1, expected));
        assertThat(clock.instant()).isBetween(expected, expected.plusMillis(700));
    }

    @Test
    void zeroStaggerLetsEveryStandbyChallengeAtTheDeadline() {
        LeaseConfig noStagger = CONFIG.withChallengeStagger(Duration.ZERO);
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .register(2, C, T0)
                .lease(3, A, 7, (short) 0, T0, T0 + 30_000)
                .build();
        Instant deadline = Instant.ofEpochMilli(T0 + 30_000);
        assertThat(Succession.evaluate(state, B, false, noStagger, deadline))
                .isEqualTo(new Decision.Challenge(0, deadline));
        assertThat(Succession.evaluate(state, C, false, noStagger, deadline))
                .isEqualTo(new Decision.Challenge(1, deadline));
    }

    @Test
    void restartedHolderWaitsBehindTheStandbysInsteadOfFailingBack() {
        // A held the role, crashed, restarted and registered again: it is at the tail.
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, T0)
                .register(1, B, T0)
                .lease(2, A, 7, (short) 0, T0, T0 + 30_000)
                .register(3, A, T0 + 5_000)
                .build();
        Instant deadline = Instant.ofEpochMilli(T0 + 30_000);
        assertThat(Succession.evaluate(state, B, false, CONFIG, deadline))
                .isEqualTo(new Decision.Challenge(0, deadline));
        assertThat(Succession.evaluate(state, A, false, CONFIG, deadline))
                .isEqualTo(new Decision.Wait(1, deadline.plusSeconds(5)));
    }
}
