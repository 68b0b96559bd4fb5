package io.krabka.streams.coordination.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.fencing.TermGate.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class TermGateTest {

    private static final Role CONTROLLER = Role.of("controller");
    private static final Role SWEEPER = Role.of("sweeper");
    private static final Role ROLLOUT = Role.of("rollout");

    @Test
    void aPerKeyGateAdmitsThePreviousHoldersCommandsForOtherDevicesThatArriveAfterANewerTerm() {
        // Three partitions keyed by device: the device meets term 68 on dev-1's partition
        // before term 1's last committed commands on dev-2's.
        TermGate gate = TermGate.perKey(TermStore.inMemory());

        assertThat(gate.check(command(0, "dev-1", ROLLOUT, 68)).admitted()).isTrue();
        TermGate.Verdict otherDevice = gate.check(command(2, "dev-2", ROLLOUT, 1));
        TermGate.Verdict lateForDev1 = gate.check(command(0, "dev-1", ROLLOUT, 1));

        assertThat(otherDevice.outcome())
                .as("term 1 still led when it wrote dev-2's command")
                .isEqualTo(Outcome.ADMITTED);
        assertThat(otherDevice.scope()).isEqualTo("dev-2");
        assertThat(lateForDev1.outcome()).isEqualTo(Outcome.STALE);
        assertThat(lateForDev1.scope()).isEqualTo("dev-1");
        assertThat(lateForDev1.highest()).hasValue(68);
        assertThat(lateForDev1.reason())
                .isEqualTo("refused term 1 of role rollout: it arrived after term 68 for key dev-1");
        assertThat(gate.highest(ROLLOUT, "dev-1")).hasValue(68);
        assertThat(gate.highest(ROLLOUT, "dev-2")).hasValue(1);
    }

    @Test
    void aPerRoleGateRefusesThoseCommandsWhichIsWhyItSuitsOnlyATopicOfOnePartition() {
        TermGate gate = TermGate.perRole(TermStore.inMemory());

        assertThat(gate.check(command(0, "dev-1", ROLLOUT, 68)).admitted()).isTrue();
        TermGate.Verdict otherDevice = gate.check(command(2, "dev-2", ROLLOUT, 1));

        assertThat(otherDevice.outcome()).isEqualTo(Outcome.STALE);
        assertThat(otherDevice.scope()).isEqualTo(TermStore.WHOLE_ROLE);
        assertThat(otherDevice.reason()).isEqualTo("refused term 1 of role rollout: it arrived after term 68");
    }

    @Test
    void aPerPartitionGateKeepsATermPerTopicPartition() {
        TermGate gate = TermGate.perPartition(TermStore.inMemory());

        assertThat(gate.check(command(0, "dev-1", ROLLOUT, 68)).admitted()).isTrue();
        assertThat(gate.check(command(2, "dev-2", ROLLOUT, 1)).admitted())
                .as("another partition")
                .isTrue();
        TermGate.Verdict late = gate.check(command(0, "dev-4", ROLLOUT, 1));

        assertThat(late.outcome()).isEqualTo(Outcome.STALE);
        assertThat(late.scope()).isEqualTo("commands-0");
        assertThat(late.reason())
                .isEqualTo("refused term 1 of role rollout: it arrived after term 68 for partition commands-0");
        assertThat(gate.highest(ROLLOUT, "commands-2")).hasValue(1);
    }

    @Test
    void aRecordOfALowerTermThanOneAdmittedInItsScopeIsStaleAndEqualTermsPass() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());
        assertThat(gate.check(command(0, "dev-1", CONTROLLER, 7)).outcome()).isEqualTo(Outcome.ADMITTED);
        assertThat(gate.check(command(0, "dev-1", CONTROLLER, 7)).outcome())
                .as("one leadership writes many records")
                .isEqualTo(Outcome.ADMITTED);

        TermGate.Verdict late = gate.check(command(0, "dev-1", CONTROLLER, 3));

        assertThat(late.admitted()).isFalse();
        assertThat(late.term()).isEqualTo(3);
        assertThat(late.reason()).doesNotContain("deposed");
        assertThat(gate.check(command(0, "dev-1", CONTROLLER, 12)).outcome()).isEqualTo(Outcome.ADMITTED);
        assertThat(gate.highest(CONTROLLER, "dev-1")).hasValue(12);
    }

    @Test
    void eachRoleHasItsOwnTermsInTheSameScope() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());
        assertThat(gate.check(command(0, "dev-1", CONTROLLER, 100)).admitted()).isTrue();
        assertThat(gate.check(command(0, "dev-1", SWEEPER, 4)).admitted())
                .as("another role's terms are its own")
                .isTrue();
        assertThat(gate.check(command(0, "dev-1", SWEEPER, 3)).outcome()).isEqualTo(Outcome.STALE);
        assertThat(gate.highest(CONTROLLER, "dev-1")).hasValue(100);
    }

    @Test
    void theScopeCanBeGivenInsteadOfTakenFromTheRecord() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());
        Headers stamp = stamp(ROLLOUT, 9);

        assertThat(gate.check(stamp, "dev-7").admitted()).isTrue();
        assertThat(gate.check(ROLLOUT, "dev-7", 8).reason())
                .isEqualTo("refused term 8 of role rollout: it arrived after term 9" + " for key dev-7");
        assertThat(gate.check(command(1, "dev-7", ROLLOUT, 8)).outcome())
                .as("the record's key is the same scope")
                .isEqualTo(Outcome.STALE);
        assertThat(gate.check(ROLLOUT, "dev-8", 8).admitted()).isTrue();
    }

    @Test
    void aByteArrayKeyIsTheSameScopeAsItsUtf8TextAndOneThatIsNoTextIsHex() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());
        gate.check(command(0, "dev-1", ROLLOUT, 5));

        TermGate.Verdict bytes =
                gate.check(record("commands", 0, "dev-1".getBytes(StandardCharsets.UTF_8), stamp(ROLLOUT, 4)));
        TermGate.Verdict binary = gate.check(record("commands", 0, new byte[] {(byte) 0xff, 0x01}, stamp(ROLLOUT, 4)));

        assertThat(bytes.outcome()).isEqualTo(Outcome.STALE);
        assertThat(binary.scope()).isEqualTo("0xff01");
        assertThat(binary.admitted()).isTrue();
    }

    @Test
    void aPerKeyGateRefusesARecordWithoutAKeyAndRemembersNothing() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());

        TermGate.Verdict keyless = gate.check(record("commands", 0, null, stamp(ROLLOUT, 3)));

        assertThat(keyless.outcome()).isEqualTo(Outcome.UNSCOPED);
        assertThat(keyless.reason()).contains("no key");
        assertThat(TermGate.perPartition(TermStore.inMemory())
                        .check(record("commands", 0, null, stamp(ROLLOUT, 3)))
                        .admitted())
                .as("a per-partition gate needs no key")
                .isTrue();
    }

    @Test
    void unstampedAndMalformedRecordsAreRefusedAndChangeNothing() {
        TermGate gate = TermGate.perKey(TermStore.inMemory());
        gate.check(command(0, "dev-1", CONTROLLER, 5));

        TermGate.Verdict unstamped = gate.check(record("commands", 0, "dev-1", new RecordHeaders()));
        Headers malformed = TokenHeadersTest.stampedHeaders();
        malformed.remove(TokenHeaders.TERM);
        malformed.add(TokenHeaders.TERM, "ten".getBytes(StandardCharsets.UTF_8));
        TermGate.Verdict bad = gate.check(record("commands", 0, "dev-1", malformed));

        assertThat(unstamped.outcome()).isEqualTo(Outcome.UNSTAMPED);
        assertThat(unstamped.reason()).contains(TokenHeaders.TERM);
        assertThat(bad.outcome()).isEqualTo(Outcome.MALFORMED);
        assertThat(bad.reason()).contains(TokenHeaders.TERM, "ten");
        assertThat(gate.check(malformed, "dev-1").outcome()).isEqualTo(Outcome.MALFORMED);
        assertThat(gate.check(CONTROLLER, "dev-1", -1).outcome()).isEqualTo(Outcome.MALFORMED);
        assertThat(gate.highest(CONTROLLER, "dev-1")).hasValue(5);
    }

    @Test
    void aGateForOneRoleRefusesEveryOtherRolesRecordsAndKeepsItsScope() {
        TermGate only = TermGate.perKey(TermStore.inMemory()).onlyRole(CONTROLLER);

        TermGate.Verdict other = only.check(command(0, "dev-1", SWEEPER, 9));

        assertThat(other.outcome()).isEqualTo(Outcome.OTHER_ROLE);
        assertThat(other.reason()).contains("sweeper", "guards role controller alone");
        assertThat(only.highest(SWEEPER, "dev-1")).isEmpty();
        assertThat(only.check(command(0, "dev-1", CONTROLLER, 9)).admitted()).isTrue();
        assertThat(only.check(command(1, "dev-2", CONTROLLER, 1)).admitted())
                .as("per key, not per role")
                .isTrue();
    }

    @Test
    @SuppressWarnings("deprecation")
    void theEarlierPerRoleApiKeepsItsBehaviourAndAScopedGateRefusesItsUnscopedCalls() {
        TermGate gate = new TermGate(TermStore.inMemory());
        assertThat(gate.check(stamp(CONTROLLER, 7)).admitted()).isTrue();
        assertThat(gate.check(CONTROLLER, 3).outcome()).isEqualTo(Outcome.STALE);
        assertThat(gate.highest(CONTROLLER)).hasValue(7);
        TermGate only = TermGate.only(CONTROLLER, TermStore.inMemory());
        assertThat(only.check(command(0, "dev-1", CONTROLLER, 7)).admitted()).isTrue();
        assertThat(only.check(command(2, "dev-2", CONTROLLER, 3)).outcome())
                .as("one term per role")
                .isEqualTo(Outcome.STALE);
        assertThat(only.check(SWEEPER, 9).outcome()).isEqualTo(Outcome.OTHER_ROLE);
        TermStore store = TermStore.inMemory();
        assertThat(store.admit(CONTROLLER, 4)).isTrue();
        assertThat(store.highest(CONTROLLER, TermStore.WHOLE_ROLE)).hasValue(4);
        assertThat(new TermGate.Verdict(Outcome.ADMITTED, CONTROLLER, 4, java.util.OptionalLong.of(4), "").scope())
                .isEqualTo(TermStore.WHOLE_ROLE);

        TermGate perKey = TermGate.perKey(TermStore.inMemory());
        assertThatThrownBy(() -> perKey.check(stamp(CONTROLLER, 7)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("per key")
                .hasMessageContaining("check(record) or check(headers, scope)");
        assertThatThrownBy(() -> perKey.check(CONTROLLER, 7)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> perKey.highest(CONTROLLER)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aGateOnAStoreThatIsNotJdbcCannotCheckWithinATransaction() {
        assertThatThrownBy(() -> TermGate.perKey(TermStore.inMemory()).within(null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("JdbcTermStore");
    }

    @Test
    void concurrentChecksKeepTheHighestTermAdmittedAndAdmitTheHighestOfAll() throws Exception {
        TermStore store = TermStore.inMemory();
        TermGate shared = TermGate.perKey(store);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        List<Future<Boolean>> highestAdmitted = new ArrayList<>();
        try {
            for (int t = 0; t < 4; t++) {
                long seed = t;
                highestAdmitted.add(threads.submit(() -> {
                    java.util.Random random = new java.util.Random(seed);
                    for (int i = 0; i < 5_000; i++) {
                        shared.check(CONTROLLER, "dev-1", random.nextInt(10_000));
                    }
                    // Nobody checks a term above this one: it must pass, whoever ran first.
                    return shared.check(CONTROLLER, "dev-1", 10_000).admitted();
                }));
            }
            for (Future<Boolean> admitted : highestAdmitted) {
                assertThat(admitted.get(30, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(10_000);
        assertThat(shared.check(CONTROLLER, "dev-1", 9_999).outcome()).isEqualTo(Outcome.STALE);
    }

    private static Headers stamp(Role role, long term) {
        return TokenHeaders.stamp(
                        new ProducerRecord<>("commands", new byte[0]), role, FencingToken.of(term, 1000, (short) 0))
                .headers();
    }

    /** A command for {@code device} on partition {@code partition} of topic commands, stamped with {@code role} and {@code term}. */
    private static ConsumerRecord<Object, byte[]> command(int partition, String device, Role role, long term) {
        return record("commands", partition, device, stamp(role, term));
    }

    private static ConsumerRecord<Object, byte[]> record(String topic, int partition, Object key, Headers headers) {
        return new ConsumerRecord<>(
                topic,
                partition,
                0,
                0L,
                org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                0,
                0,
                key,
                new byte[0],
                headers,
                java.util.Optional.empty());
    }
}
