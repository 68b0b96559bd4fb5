package io.krabka.streams.coordination.succession;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import io.krabka.streams.coordination.record.MalformedRecordException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RoleStateBuilderTest {

    private static final Role ROLE = Role.of("controller");
    private static final MemberId A = MemberId.of("a");
    private static final MemberId B = MemberId.of("b");
    private static final MemberId C = MemberId.of("c");

    @Test
    void rosterIsInRegistrationOffsetOrderAndReRegistrationMovesToTheTail() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, 100)
                .register(1, B, 101)
                .register(2, C, 102)
                .register(7, A, 200)
                .build();
        assertThat(state.roster()).extracting(RosterEntry::member).containsExactly(B, C, A);
        assertThat(state.entryOf(A)).contains(new RosterEntry(A, 7, 200));
        assertThat(state.nextOffset()).isEqualTo(8);
    }

    @Test
    void registrationTombstoneRemovesTheMember() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, 1)
                .register(1, B, 2)
                .deregister(2, A)
                .build();
        assertThat(state.roster()).extracting(RosterEntry::member).containsExactly(B);
        assertThat(state.rankOf(A)).isEmpty();
    }

    @Test
    void termIsTheOffsetOfTheGrantAndRenewalsKeepIt() {
        RoleStateBuilder builder = RoleState.builder(ROLE)
                .register(0, A, 1)
                .register(1, B, 2)
                .lease(2, A, 1001, (short) 0, 1_000, 31_000)
                .lease(3, A, 1001, (short) 1, 1_000, 41_000)
                .lease(5, A, 1001, (short) 2, 1_000, 51_000);
        LeaseState renewed = builder.build().lease().orElseThrow();
        assertThat(renewed.term()).isEqualTo(2);
        assertThat(renewed.offset()).isEqualTo(5);
        assertThat(renewed.token()).isEqualTo(FencingToken.of(2, 1001, (short) 2));

        // B's grant: a lower producer id (kafka-facts fact 4) but a later term.
        LeaseState granted = builder.lease(9, B, 1, (short) 0, 60_000, 90_000)
                .build()
                .lease()
                .orElseThrow();
        assertThat(granted.term()).isEqualTo(9);
        assertThat(granted.token().supersedes(renewed.token())).isTrue();
    }

    /** Issue 22 item 1: only the leadership that first carried an epoch counts it (what {@code current()} compares). */
    @Test
    void aLeaseCopyingAnotherLeadershipsEpochCountsThatEpochForNoOne() {
        MemberId mallory = MemberId.of("mallory");
        RoleStateBuilder builder = RoleState.builder(ROLE)
                .lease(0, A, 1001, (short) 3, 1_000, 31_000)
                .lease(1, B, 1001, (short) 4, 5_000, 35_000); // B's grant: a newer epoch, A is deposed
        assertThat(builder.build().lease().orElseThrow().wrote(1001, (short) 4)).isTrue();

        // Copies of B's epoch naming a stranger, then the deposed A with its own grant time.
        assertThat(builder.lease(2, mallory, 1001, (short) 4, 6_000, 36_000)
                        .build()
                        .lease()
                        .orElseThrow()
                        .wrote(1001, (short) 4))
                .isFalse();
        assertThat(builder.lease(3, A, 1001, (short) 4, 1_000, 36_000)
                        .build()
                        .lease()
                        .orElseThrow()
                        .wrote(1001, (short) 4))
                .isFalse();
        // A stranger on a producer id no lease carried owns that epoch, but it does not take B's.
        builder.lease(4, mallory, 0, (short) 0, 6_000, Long.MAX_VALUE);
        // B answers on the same epoch (transaction version 1): still its own.
        LeaseState answered = builder.lease(5, B, 1001, (short) 4, 5_000, 45_000)
                .build()
                .lease()
                .orElseThrow();
        assertThat(answered.wrote(1001, (short) 4)).isTrue();
        assertThat(answered.term()).isEqualTo(1);
        // A later epoch on that producer id is a newer grant's, whoever it names.
        assertThat(builder.lease(6, C, 1001, (short) 5, 9_000, 39_000)
                        .build()
                        .lease()
                        .orElseThrow()
                        .wrote(1001, (short) 5))
                .isTrue();
    }

    @Test
    void sameMemberGrantedAgainStartsANewTerm() {
        LeaseState lease = RoleState.builder(ROLE)
                .lease(0, A, 7, (short) 0, 1_000, 31_000)
                .lease(4, A, 7, (short) 5, 50_000, 80_000)
                .build()
                .lease()
                .orElseThrow();
        assertThat(lease.term()).isEqualTo(4);
    }

    /** Issue 22 item 2: observers keep the term of the grant whatever another writer appended between two renewals. */
    @Test
    void aLeadershipKeepsItsTermAcrossAForgedLeaseAndAForeignTombstone() {
        RoleStateBuilder builder = RoleState.builder(ROLE)
                .lease(3, A, 1001, (short) 0, 1_000, 31_000)
                .lease(4, A, 1001, (short) 1, 1_000, 41_000)
                // Anyone with Write on the topic: a lease naming mallory with the coordinator's epoch.
                .lease(5, MemberId.of("mallory"), 1001, (short) 1, 42_000, 72_000);
        assertThat(builder.build().lease().orElseThrow().term())
                .as("the forged record's own")
                .isEqualTo(5);

        builder.lease(6, A, 1001, (short) 2, 1_000, 51_000);
        assertThat(builder.build().lease().orElseThrow().term())
                .as("A's renewal")
                .isEqualTo(3);

        builder.release(7, 52_000).lease(8, A, 1001, (short) 3, 1_000, 61_000);
        assertThat(builder.build().lease().orElseThrow().term())
                .as("A's renewal after a tombstone")
                .isEqualTo(3);

        // A new grant of A has a new granted_at, so a term of its own, above the old one.
        LeaseState regranted = builder.lease(12, A, 1001, (short) 5, 70_000, 100_000)
                .build()
                .lease()
                .orElseThrow();
        assertThat(regranted.term()).isEqualTo(12);
    }

    @Test
    void aLeadershipInterruptedByMoreThanTheRememberedLeadershipsGetsANewTerm() {
        RoleStateBuilder builder = RoleState.builder(ROLE).lease(0, A, 1, (short) 0, 1_000, 31_000);
        for (int i = 1; i <= RoleStateBuilder.REMEMBERED_LEADERSHIPS; i++) {
            builder.lease(i, MemberId.of("forger-" + i), 1, (short) 0, 1_000 + i, 31_000);
        }
        long next = RoleStateBuilder.REMEMBERED_LEADERSHIPS + 1;
        assertThat(builder.lease(next, A, 1, (short) 1, 1_000, 41_000)
                        .build()
                        .lease()
                        .orElseThrow()
                        .term())
                .isEqualTo(next);
    }

    @Test
    void leaseTombstoneClearsTheLeaseAndRemembersWhen() {
        RoleState state = RoleState.builder(ROLE)
                .lease(0, A, 7, (short) 0, 1_000, 31_000)
                .release(1, 5_000)
                .build();
        assertThat(state.lease()).isEmpty();
        assertThat(state.leaseReleasedAt()).hasValue(5_000);
        RoleState regranted = RoleState.builder(ROLE)
                .lease(0, A, 7, (short) 0, 1_000, 31_000)
                .release(1, 5_000)
                .lease(2, B, 7, (short) 2, 6_000, 36_000)
                .build();
        assertThat(regranted.leaseReleasedAt()).isEmpty();
        assertThat(regranted.lease().orElseThrow().term()).isEqualTo(2);
    }

    /**
     * Issue 23 goal 1: a release's first act is the holder's registration tombstone, a plain
     * append that read_committed readers see before the lease tombstone's transaction
     * completes; the next standby takes its turn on it.
     */
    @Test
    void theHolderLeavingTheRosterAfterItsLeaseReleasesTheLease() {
        RoleStateBuilder builder =
                RoleState.builder(ROLE).register(0, A, 1).register(1, B, 2).lease(2, A, 7, (short) 3, 1_000, 31_000);
        builder.apply(3, 5_000, CoordinationKey.registration(ROLE, A), Optional.empty());
        RoleState left = builder.build();
        assertThat(left.lease()).isEmpty();
        assertThat(left.leaseReleasedAt()).hasValue(5_000);
        assertThat(left.rankOf(B)).hasValue(0);
        assertThat(Succession.evaluate(left, B, false, LeaseConfig.DEFAULTS, java.time.Instant.ofEpochMilli(5_000)))
                .isInstanceOf(Decision.Challenge.class);

        // The lease tombstone that follows keeps the instant the release began at.
        RoleState tombstoned = builder.release(4, 5_040).build();
        assertThat(tombstoned.leaseReleasedAt()).hasValue(5_000);
        // A later lease tombstone of no lease (another release, or a forged one) does not move it either.
        assertThat(builder.release(5, 90_000).build().leaseReleasedAt()).hasValue(5_000);
    }

    @Test
    void onlyTheHoldersOwnTombstoneAfterItsLeaseEndsTheLease() {
        // Another member leaving changes nothing for the lease.
        RoleState otherLeft = RoleState.builder(ROLE)
                .register(0, A, 1)
                .register(1, B, 2)
                .lease(2, A, 7, (short) 3, 1_000, 31_000)
                .deregister(3, B)
                .build();
        assertThat(otherLeft.lease()).map(LeaseState::member).contains(A);

        // A member pruned as silent that then wins: its lease comes after its tombstone, so it holds.
        RoleState prunedThenGranted = RoleState.builder(ROLE)
                .register(0, A, 1)
                .register(1, B, 2)
                .deregister(2, A)
                .lease(3, A, 7, (short) 4, 1_000, 31_000)
                .build();
        assertThat(prunedThenGranted.lease()).map(LeaseState::member).contains(A);
        assertThat(prunedThenGranted.leaseReleasedAt()).isEmpty();

        // A holder that renews after leaving holds again, under the same term.
        RoleState renewedAfterLeaving = RoleState.builder(ROLE)
                .register(0, A, 1)
                .lease(1, A, 7, (short) 3, 1_000, 31_000)
                .deregister(2, A)
                .lease(3, A, 7, (short) 4, 1_000, 41_000)
                .build();
        assertThat(renewedAfterLeaving.lease()).map(LeaseState::term).contains(1L);
        assertThat(renewedAfterLeaving.leaseReleasedAt()).isEmpty();
    }

    @Test
    void recordsOfOtherRolesAndAlreadyFoldedOffsetsAreIgnored() {
        RoleStateBuilder builder = RoleState.builder(ROLE).register(3, A, 1);
        CoordinationKey otherRole = CoordinationKey.registration(Role.of("scheduler"), B);
        assertThat(builder.apply(4, 0, otherRole, Optional.of(new Registration(B, 2))))
                .isFalse();
        assertThat(builder.apply(2, 0, CoordinationKey.registration(ROLE, C), Optional.of(new Registration(C, 3))))
                .isFalse();
        assertThat(builder.apply(3, 0, CoordinationKey.registration(ROLE, C), Optional.of(new Registration(C, 3))))
                .isFalse();
        assertThat(builder.build().roster()).extracting(RosterEntry::member).containsExactly(A);
        assertThat(builder.build().nextOffset()).isEqualTo(4);
    }

    @Test
    void registrationNamingAnotherMemberIsRejectedAndChangesNothing() {
        RoleStateBuilder builder = RoleState.builder(ROLE).register(0, A, 1);
        RoleState before = builder.build();
        assertThatThrownBy(() ->
                        builder.apply(1, 0, CoordinationKey.registration(ROLE, B), Optional.of(new Registration(C, 2))))
                .isInstanceOfSatisfying(
                        MalformedRecordException.class,
                        e -> assertThat(e.problem()).isEqualTo(MalformedRecordException.Problem.MEMBER_MISMATCH));
        assertThat(builder.build()).isEqualTo(before);
    }

    @Test
    void advanceToMovesPastSkippedOffsetsButNeverBack() {
        RoleStateBuilder builder =
                RoleState.builder(ROLE).register(0, A, 1).advanceTo(10).advanceTo(5);
        assertThat(builder.nextOffset()).isEqualTo(10);
        assertThat(builder.build().roster()).hasSize(1);
    }

    @Test
    void rankSkipsTheLeaseHolderUnlessItIsTheMemberAsking() {
        RoleState state = RoleState.builder(ROLE)
                .register(0, A, 1)
                .register(1, B, 2)
                .register(2, C, 3)
                .lease(3, A, 7, (short) 0, 10, 20)
                .build();
        assertThat(state.rankOf(B)).hasValue(0);
        assertThat(state.rankOf(C)).hasValue(1);
        // A restarted holder that lost its epoch ranks by its roster position, without skipping itself.
        assertThat(state.rankOf(A)).hasValue(0);
    }
}
