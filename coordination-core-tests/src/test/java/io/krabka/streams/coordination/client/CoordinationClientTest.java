package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.LeadershipTerm;
import io.krabka.streams.coordination.client.internal.RoleFolds;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client's rules on the in-memory cluster, with a manual clock. Real-broker runs are in the *IT tests. */
class CoordinationClientTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private Member member(String id) {
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock);
        opened.add(transport);
        return new Member(MemberId.of(id), transport, client);
    }

    private record Member(MemberId id, InMemoryCoordinationTransport transport, CoordinationClient client) {
        Optional<Leadership> tryAcquire() {
            return client.tryAcquire(ROLE, id);
        }
    }

    @Test
    void firstMemberTakesAnIdleRoleAndItsTermIsTheGrantRecordsOffset() {
        Member a = member("a");
        Leadership leadership = a.tryAcquire().orElseThrow();
        LeadershipStatus status = a.client().describe(ROLE);
        assertThat(status.holder()).contains(a.id());
        assertThat(status.current()).isTrue();
        assertThat(status.lease().orElseThrow().token().term()).isEqualTo(leadership.term());
        assertThat(status.token()).isEqualTo(leadership.token());
        // Offset 0 is the registration; the grant is the next record.
        assertThat(leadership.term()).isEqualTo(1);
    }

    /** Readers key a leadership's term by (member, granted_at): a member never grants itself one role twice in one millisecond. */
    @Test
    void twoGrantsOfOneMemberOnAClockThatStandsStillHaveDistinctGrantTimesAndTerms() {
        Member a = member("a");
        Leadership first = a.tryAcquire().orElseThrow();
        first.close();
        Leadership second = a.tryAcquire().orElseThrow();
        assertThat(second.grantedAt()).isAfter(first.grantedAt());
        assertThat(a.client().describe(ROLE).token().term())
                .isEqualTo(second.term())
                .isGreaterThan(first.term());
    }

    /** Issue 22 item 5: a standby with a shorter lease than the holder's would cut the live holder's lease; it is named. */
    @Test
    void aStandbyWhoseLeaseDurationDisagreesWithTheHoldersNamesBothAndSaysSoUntilTheyAgree() {
        InMemoryCoordinationTransport longTransport = cluster.transport(TOPIC);
        opened.add(longTransport);
        LeaseConfig longer =
                LeaseConfig.DEFAULTS.withDuration(Duration.ofSeconds(60)).withRenewInterval(Duration.ofSeconds(40));
        CoordinationClient holderClient = new CoordinationClient(longTransport, longer, clock);
        Leadership held = holderClient.tryAcquire(ROLE, MemberId.of("b")).orElseThrow();
        Member a = member("a");

        assertThat(a.tryAcquire()).isEmpty();
        assertThat(a.client().engine().configurationProblem(ROLE))
                .get()
                .isInstanceOf(io.krabka.streams.coordination.CoordinationConfigurationException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains(
                        "member b writes leases of role " + ROLE + " for 60.0 s",
                        "krabka.coordination.lease.duration",
                        "is 30.0 s");

        // A holder on the same settings: no disagreement once its lease is seen.
        held.close();
        a.tryAcquire().orElseThrow().close();
        member("c").tryAcquire().orElseThrow();
        assertThat(a.tryAcquire()).isEmpty();
        assertThat(a.client().engine().configurationProblem(ROLE)).isEmpty();
    }

    /** A forged lease with an absurd deadline is suspicious; it is no member's lease setting, so no disagreement. */
    @Test
    void aForgedLeaseWithAFarDeadlineIsSuspiciousButNamesNoDisagreement() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        a.transport()
                .appendRaw(
                        ROLE,
                        CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE)),
                        CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                                MemberId.of("mallory"),
                                held.token().producerId(),
                                held.token().producerEpoch(),
                                clock.millis(),
                                clock.millis() + Duration.ofDays(365).toMillis())));

        assertThat(b.tryAcquire()).isEmpty();
        assertThat(b.client().suspiciousRecords()).isEqualTo(1);
        assertThat(b.client().engine().configurationProblem(ROLE)).isEmpty();
        // The standby's wait stays cut to its own lease duration after it saw the forgery.
        clock.advance(LeaseConfig.DEFAULTS
                .duration()
                .plus(LeaseConfig.DEFAULTS.challengeStagger().multipliedBy(2)));
        assertThat(b.tryAcquire()).isPresent();
    }

    @Test
    void describeIsNeverCurrentForADeposedHolderWhetherTheChallengerWroteALeaseOrNot() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        held.renew();
        assertThat(b.client().describe(ROLE).current()).isTrue();

        // A challenger that minted an epoch but wrote no lease yet.
        b.transport().initEpoch(ROLE);
        LeadershipStatus minted = b.client().describe(ROLE);
        assertThat(minted.holder()).contains(a.id());
        assertThat(minted.current()).isFalse();
        assertThatThrownBy(held::renew).isInstanceOf(FencedException.class);
        assertThat(held.isActive()).isFalse();
    }

    /**
     * Issue 22 item 1: anyone with Write can append a lease copying the coordinator's
     * (producer id, epoch) from the topic. It names a member that never minted that epoch,
     * so no reader reports it current: not for a stranger, not for a deposed holder.
     */
    @Test
    void aForgedLeaseCopyingTheCoordinatorsEpochIsNeverCurrentForTheMemberItNames() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        Leadership deposed = a.tryAcquire().orElseThrow();
        deposed.close();
        Leadership held = b.tryAcquire().orElseThrow();
        held.renew();
        assertThat(c.client().describe(ROLE).current()).isTrue();
        ProducerState coordinator = c.client().describe(ROLE).coordinator().orElseThrow();
        byte[] leaseKey = CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE));
        List<CoordinationRecord.Lease> forgeries = List.of(
                new CoordinationRecord.Lease(
                        MemberId.of("mallory"),
                        coordinator.producerId(),
                        coordinator.producerEpoch(),
                        clock.millis(),
                        clock.millis() + 30_000),
                new CoordinationRecord.Lease(
                        a.id(),
                        coordinator.producerId(),
                        coordinator.producerEpoch(),
                        deposed.grantedAt().toEpochMilli(),
                        clock.millis() + 30_000));
        for (CoordinationRecord.Lease forged : forgeries) {
            b.transport().appendRaw(ROLE, leaseKey, CoordinationCodec.encodeValue(forged));
            LeadershipStatus status = c.client().describe(ROLE);
            assertThat(status.holder()).contains(forged.member());
            assertThat(status.coordinator()).contains(coordinator);
            assertThat(status.current())
                    .as("a lease naming %s with a copied epoch", forged.member())
                    .isFalse();
        }
        // The holder's own next lease is current again.
        held.renew();
        assertThat(c.client().describe(ROLE).holder()).contains(b.id());
        assertThat(c.client().describe(ROLE).current()).isTrue();
    }

    @Test
    void holderRenewsWhenDueAndStandbyWaitsForTheDeadline() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(held.renewDue()).isFalse();
        clock.advance(Duration.ofSeconds(10));
        assertThat(held.renewDue()).isTrue();
        held.renew();
        assertThat(held.renewDue()).isFalse();
        clock.advance(Duration.ofSeconds(29));
        assertThat(b.tryAcquire()).as("the renewed deadline has not passed").isEmpty();
        clock.advance(Duration.ofSeconds(2));
        Leadership taken = b.tryAcquire().orElseThrow();
        assertThat(taken.token().supersedes(held.token())).isTrue();
        assertThatThrownBy(() -> held.write(List.of())).isInstanceOf(FencedException.class);
    }

    @Test
    void gracefulCloseHandsTheRoleOverWithoutWaitingForTheDeadline() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        held.close();
        // Same instant: b is rank 0 now and challenges at once; c waits one stagger.
        assertThat(c.tryAcquire()).isEmpty();
        Leadership taken = b.tryAcquire().orElseThrow();
        assertThat(taken.token().supersedes(held.token())).isTrue();
        assertThat(b.client().describe(ROLE).roster())
                .extracting(RankedMember::member)
                .doesNotContain(a.id());
    }

    @Test
    void aLeaseRecordWithADeadlineAlreadyPastNeverShortensAStandbysWait() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        byte[] leaseKey = CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE));
        // Forged: naming the live holder (its contender ignores leases naming itself), then
        // another member, each with the coordinator's epoch and a deadline already past.
        for (String named : List.of("a", "mallory")) {
            a.transport()
                    .appendRaw(
                            ROLE,
                            leaseKey,
                            CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                                    MemberId.of(named),
                                    held.token().producerId(),
                                    held.token().producerEpoch(),
                                    clock.millis(),
                                    clock.millis() - 1)));
            assertThat(b.tryAcquire())
                    .as("after a lease naming %s that ended in the past", named)
                    .isEmpty();
        }
        assertThat(b.client().suspiciousRecords())
                .as("no member writes a lease ending before its timestamp")
                .isEqualTo(2);
        assertThat(b.client().engine().configurationProblem(ROLE))
                .as("a forgery is no member's lease setting")
                .isEmpty();
        clock.advance(Duration.between(clock.instant(), held.deadline()).minusMillis(1));
        assertThat(b.tryAcquire()).as("just before the holder's own deadline").isEmpty();
        // The lease naming mallory leaves a in the roster ahead of b: one stagger more.
        clock.advance(Duration.ofMillis(1));
        assertThat(b.tryAcquire()).as("at the holder's own deadline").isEmpty();
        clock.advance(LeaseConfig.DEFAULTS.challengeStagger());
        assertThat(b.tryAcquire())
                .as("one stagger after the holder's own deadline")
                .isPresent();
    }

    @Test
    void malformedRecordsAreSkippedCountedAndChangeNothing() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        LeadershipStatus before = b.client().describe(ROLE);

        HexFormat hex = HexFormat.of();
        byte[] leaseKey = CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE));
        byte[] registrationKey =
                CoordinationCodec.encodeKey(CoordinationKey.registration(ROLE, MemberId.of("mallory")));
        a.transport().appendRaw(ROLE, hex.parseHex("deadbeef"), hex.parseHex("00"));
        a.transport().appendRaw(ROLE, hex.parseHex("0001" + "0001" + "0001" + "78" + "0000"), null);
        a.transport().appendRaw(ROLE, leaseKey, hex.parseHex("0007" + "0000"));
        a.transport().appendRaw(ROLE, registrationKey, hex.parseHex("0000" + "7fff" + "00"));
        a.transport().appendRaw(ROLE, null, null);

        LeadershipStatus after = b.client().describe(ROLE);
        assertThat(b.client().malformedRecords()).isEqualTo(5);
        assertThat(after.roster()).isEqualTo(before.roster());
        assertThat(after.lease()).isEqualTo(before.lease());
        // Both members carry on.
        held.renew();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(a.client().describe(ROLE).current()).isTrue();
    }

    @Test
    void deadRegistrationsLeaveTheRosterSoTheyAddNoStaggerToLaterFailovers() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        Member d = member("d");
        Leadership held = a.tryAcquire().orElseThrow();
        for (Member standby : List.of(b, c, d)) {
            assertThat(standby.tryAcquire()).isEmpty();
        }
        // a (the holder) and b (rank 0) crash without a word.
        Duration lease = LeaseConfig.DEFAULTS.duration();
        Duration stagger = LeaseConfig.DEFAULTS.challengeStagger();
        clock.advance(lease.plus(stagger));
        assertThat(d.tryAcquire()).isEmpty();
        Leadership cHolds = c.tryAcquire().orElseThrow();
        assertThat(cHolds.token().supersedes(held.token())).isTrue();
        assertThat(c.client().observe(ROLE, Duration.ZERO).roster())
                .extracting(RankedMember::member)
                .containsExactly(c.id(), d.id());

        // c crashes too: d is rank 0 now and takes over right at the deadline, not staggers later.
        clock.advance(lease);
        assertThat(d.tryAcquire()).isPresent();
    }

    /** The trust model (issue 22 item 7): anyone with Write can tombstone a standby's registration; it costs that standby its rank. */
    @Test
    void aForgedRegistrationTombstoneCostsTheStandbyItsRankNotItsPlace() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        a.transport().appendRaw(ROLE, CoordinationCodec.encodeKey(CoordinationKey.registration(ROLE, b.id())), null);
        assertThat(c.client().observe(ROLE, Duration.ZERO).roster())
                .extracting(RankedMember::member)
                .containsExactly(a.id(), c.id());

        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.client().observe(ROLE, Duration.ZERO).roster())
                .extracting(RankedMember::member)
                .containsExactly(a.id(), c.id(), b.id());
    }

    @Test
    void aPrunedMemberThatWasMerelySlowRejoinsAtTheTail() {
        Member a = member("a");
        Member b = member("b");
        Member c = member("c");
        a.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(c.tryAcquire()).isEmpty();
        clock.advance(LeaseConfig.DEFAULTS.duration().plus(LeaseConfig.DEFAULTS.challengeStagger()));
        c.tryAcquire().orElseThrow();
        // b was paused past its turn; it wakes, finds itself pruned and registers again.
        assertThat(b.tryAcquire()).isEmpty();
        assertThat(b.client().observe(ROLE, Duration.ZERO).roster())
                .extracting(RankedMember::member)
                .containsExactly(c.id(), b.id());
    }

    @Test
    void aLowerProducerIdAfterExpiryStillGivesALaterTerm() {
        Member a = member("a");
        Member b = member("b");
        cluster.lowerNextProducerId(5000);
        Leadership first = a.tryAcquire().orElseThrow();
        first.close();
        cluster.expire(ROLE);
        cluster.lowerNextProducerId(7);
        Leadership second = b.tryAcquire().orElseThrow();
        assertThat(second.token().producerId()).isLessThan(first.token().producerId());
        assertThat(second.token().supersedes(first.token())).isTrue();
        assertThat(b.client().describe(ROLE).current()).isTrue();
    }

    @Test
    void transactionVersionDowngradeWithAReconnectNeverMakesADeposedHolderCurrent() {
        // The holder learned "+1 per commit" under version 2. After a downgrade and a
        // reconnect its commits stop moving the epoch; a lease predicted one ahead would
        // match the epoch of the next challenger's InitProducerId. Challenge after every
        // number of writes, for every point of the reconnect.
        for (int reconnectBefore = 0; reconnectBefore < 3; reconnectBefore++) {
            for (int writes = 1; writes <= 5; writes++) {
                Role role = Role.of("downgrade-" + reconnectBefore + "-" + writes);
                cluster.setTransactionVersion((short) 2);
                InMemoryCoordinationTransport ta = cluster.transport(TOPIC);
                InMemoryCoordinationTransport tb = cluster.transport(TOPIC);
                opened.add(ta);
                opened.add(tb);
                CoordinationClient a = new CoordinationClient(ta, LeaseConfig.DEFAULTS, clock);
                CoordinationClient b = new CoordinationClient(tb, LeaseConfig.DEFAULTS, clock);
                Leadership held = a.tryAcquire(role, MemberId.of("a")).orElseThrow();
                cluster.setTransactionVersion((short) 1);
                for (int write = 0; write < writes; write++) {
                    if (write == reconnectBefore) {
                        cluster.reconnectProducers();
                    }
                    held.renew();
                }
                tb.initEpoch(role);
                assertThat(b.describe(role).current())
                        .as("deposed holder after %d writes, reconnect before write %d", writes, reconnectBefore)
                        .isFalse();
            }
        }
    }

    @Test
    void afterADowngradeAndReconnectTheHolderRelearnsItsStepWithinTwoWrites() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        cluster.setTransactionVersion((short) 1);
        cluster.reconnectProducers();
        held.renew();
        held.renew();
        assertThat(b.client().describe(ROLE).current()).isTrue();
        held.renew();
        assertThat(b.client().describe(ROLE).current()).isTrue();
    }

    @Test
    void transactionVersionUpgradeWithAReconnectOnlyDelaysCurrent() {
        cluster.setTransactionVersion((short) 1);
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(b.client().describe(ROLE).current()).isTrue();
        cluster.setTransactionVersion((short) 2);
        cluster.reconnectProducers();
        for (int write = 0; write < 4; write++) {
            held.renew();
        }
        assertThat(b.client().describe(ROLE).current()).isTrue();
        b.transport().initEpoch(ROLE);
        assertThat(b.client().describe(ROLE).current()).isFalse();
    }

    @Test
    void epochRolloverKeepsTheTermAndCurrentRecoversWithinTwoWrites() {
        Member a = member("a");
        Member b = member("b");
        Leadership held = a.tryAcquire().orElseThrow();
        long term = held.term();
        long firstProducerId = held.token().producerId();
        int notCurrent = 0;
        for (int write = 0; write < Short.MAX_VALUE + 10; write++) {
            held.renew();
            if (write % 64 == 0 || held.token().producerId() != firstProducerId && notCurrent < 3) {
                if (!b.client().describe(ROLE).current()) {
                    notCurrent++;
                }
            }
        }
        assertThat(held.token().producerId()).isNotEqualTo(firstProducerId);
        assertThat(held.term()).isEqualTo(term);
        assertThat(b.client().describe(ROLE).current()).isTrue();
        assertThat(notCurrent)
                .as("writes after which a live holder looked deposed")
                .isLessThanOrEqualTo(2);
        b.transport().initEpoch(ROLE);
        assertThat(b.client().describe(ROLE).current()).isFalse();
    }

    @Test
    void guardedWritesLandInTheSameTransactionAsTheLease() {
        Member a = member("a");
        Leadership held = a.tryAcquire().orElseThrow();
        var command = new org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]>(
                "commands", 0, "controller".getBytes(), "{\"seq\":0}".getBytes());
        var written = held.write(List.of(command, command));
        assertThat(written).hasSize(2);
        assertThat(cluster.records(new TopicPartition("commands", 0))).hasSize(2);
        int partition = RolePartitioner.partitionFor(ROLE, TOPIC.partitions());
        assertThat(cluster.records(new TopicPartition(TOPIC.name(), partition)).stream()
                        .filter(r -> r.key() != null
                                && java.util.Arrays.equals(
                                        r.key(), CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE)))))
                .hasSize(3);
    }

    @Test
    void everyWriteAfterAnEndThrowsFencedExceptionThatSaysHowItEnded() {
        Member a = member("a");
        Member b = member("b");
        Leadership released = a.tryAcquire().orElseThrow();
        released.close();
        assertThatThrownBy(released::renew)
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.RELEASED));

        Leadership expired = b.tryAcquire().orElseThrow();
        assertThat(expired.expireIfDue()).as("not due yet").isFalse();
        clock.advance(LeaseConfig.DEFAULTS.duration().plusMillis(1));
        assertThat(expired.expireIfDue()).isTrue();
        assertThat(expired.state()).isEqualTo(Leadership.State.EXPIRED);
        assertThatThrownBy(() -> expired.write(List.of()))
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.EXPIRED));

        Leadership fenced = a.tryAcquire().orElseThrow();
        b.transport().initEpoch(ROLE);
        assertThatThrownBy(fenced::renew)
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.FENCED));
        assertThatThrownBy(fenced::renew)
                .isInstanceOfSatisfying(
                        FencedException.class,
                        ended -> assertThat(ended.endCause()).isEqualTo(LeadershipEndCause.FENCED));
    }

    @Test
    void aHolderConfirmsWithTheCoordinatorBeforeItBelievesAStrangersLease() {
        Member a = member("a");
        Leadership held = a.tryAcquire().orElseThrow();
        assertThat(((LeadershipTerm) held).confirmFenced())
                .as("no other epoch exists")
                .isFalse();
        assertThat(held.isActive()).isTrue();
        member("b").transport().initEpoch(ROLE);
        assertThat(((LeadershipTerm) held).confirmFenced()).isTrue();
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);
    }

    /**
     * A standby whose own registration sits behind an open transaction ranks from the
     * tail and anchors its challenge on the registration it wrote, never on now: an
     * anchor of now would move on every pass, and it would never challenge.
     */
    @Test
    void aRegistrationNotYetReadableAnchorsTheChallengeOnItsOwnTimeNotOnNow() {
        Member x = member("x");
        x.client().observe(ROLE, Duration.ZERO);
        x.transport().register(ROLE, x.id(), clock.millis()); // registered, then silent: rank 0
        InMemoryCoordinationTransport shared = cluster.transport(TOPIC);
        opened.add(shared);
        MemberId me = MemberId.of("b");
        CoordinationClient b = new CoordinationClient(new HidingTransport(shared, me), LeaseConfig.DEFAULTS, clock);
        Duration stagger = LeaseConfig.DEFAULTS.challengeStagger();
        assertThat(b.tryAcquire(ROLE, me)).isEmpty();
        for (Duration passed = Duration.ZERO; passed.compareTo(stagger) < 0; passed = passed.plusSeconds(1)) {
            assertThat(b.tryAcquire(ROLE, me)).as("after %s", passed).isEmpty();
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(b.tryAcquire(ROLE, me))
                .as("one stagger after its registration")
                .isPresent();
    }

    /** A transport whose reads stop before {@code hidden}'s registration, as an open transaction in front of it would. */
    private static final class HidingTransport extends ForwardingTransport {
        private final byte[] hiddenKey;

        HidingTransport(InMemoryCoordinationTransport delegate, MemberId hidden) {
            super(delegate);
            this.hiddenKey = CoordinationCodec.encodeKey(CoordinationKey.registration(ROLE, hidden));
        }

        @Override
        public io.krabka.streams.coordination.transport.RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            // read_committed stops before an open transaction: nothing from there on is read.
            var batch = delegate.read(role, fromOffset, maxWait);
            List<io.krabka.streams.coordination.transport.RawRecord> visible = new ArrayList<>();
            for (var record : batch.records()) {
                if (java.util.Arrays.equals(record.key(), hiddenKey)) {
                    return new io.krabka.streams.coordination.transport.RoleRecords(visible, record.offset());
                }
                visible.add(record);
            }
            return batch;
        }

        @Override
        public boolean watches() {
            return false;
        }

        @Override
        public void close() {}
    }

    @Test
    void describingEverMoreRoleNamesKeepsABoundedNumberOfFolds() {
        InMemoryCluster cluster = new InMemoryCluster();
        try (InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3))) {
            CoordinationClient client =
                    new CoordinationClient(transport, LeaseConfig.DEFAULTS, java.time.InstantSource.system());
            for (int i = 0; i < RoleFolds.MAX_DESCRIBED_FOLDS + 100; i++) {
                client.describe(java.util.List.of(Role.of("asked-" + i)));
            }
            assertThat(client.describedFolds()).isEqualTo(RoleFolds.MAX_DESCRIBED_FOLDS);
        }
    }
}
