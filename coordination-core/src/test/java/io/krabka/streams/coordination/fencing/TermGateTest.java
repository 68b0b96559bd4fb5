package io.krabka.streams.coordination.fencing;

import static org.assertj.core.api.Assertions.assertThat;

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

    private final TermGate gate = new TermGate(TermStore.inMemory());

    @Test
    void aRecordOfALowerTermThanOneAdmittedIsRefusedAsStaleAndEqualTermsPass() {
        assertThat(gate.check(stamped(CONTROLLER, 7)).outcome()).isEqualTo(Outcome.ADMITTED);
        assertThat(gate.check(stamped(CONTROLLER, 7)).outcome()).as("one leadership writes many records").isEqualTo(Outcome.ADMITTED);

        TermGate.Verdict late = gate.check(stamped(CONTROLLER, 3));

        assertThat(late.outcome()).isEqualTo(Outcome.STALE);
        assertThat(late.admitted()).isFalse();
        assertThat(late.term()).isEqualTo(3);
        assertThat(late.highest()).hasValue(7);
        assertThat(late.reason()).contains("term 3", "role controller", "already admitted term 7");
        assertThat(gate.check(stamped(CONTROLLER, 12)).outcome()).isEqualTo(Outcome.ADMITTED);
        assertThat(gate.highest(CONTROLLER)).hasValue(12);
    }

    @Test
    void eachRoleHasItsOwnHighestTerm() {
        assertThat(gate.check(stamped(CONTROLLER, 100)).admitted()).isTrue();
        assertThat(gate.check(stamped(SWEEPER, 4)).admitted()).as("another role's terms are its own").isTrue();
        assertThat(gate.check(stamped(SWEEPER, 3)).outcome()).isEqualTo(Outcome.STALE);
        assertThat(gate.highest(CONTROLLER)).hasValue(100);
    }

    @Test
    void unstampedAndMalformedRecordsAreRefusedAndChangeNothing() {
        gate.check(stamped(CONTROLLER, 5));

        TermGate.Verdict unstamped = gate.check(record(new RecordHeaders()));
        Headers malformed = TokenHeadersTest.stampedHeaders();
        malformed.remove(TokenHeaders.TERM);
        malformed.add(TokenHeaders.TERM, "ten".getBytes(StandardCharsets.UTF_8));
        TermGate.Verdict bad = gate.check(record(malformed));

        assertThat(unstamped.outcome()).isEqualTo(Outcome.UNSTAMPED);
        assertThat(unstamped.reason()).contains(TokenHeaders.TERM);
        assertThat(bad.outcome()).isEqualTo(Outcome.MALFORMED);
        assertThat(bad.reason()).contains(TokenHeaders.TERM, "ten");
        assertThat(gate.check(CONTROLLER, -1).outcome()).isEqualTo(Outcome.MALFORMED);
        assertThat(gate.highest(CONTROLLER)).hasValue(5);
    }

    @Test
    void aGateForOneRoleRefusesEveryOtherRolesRecords() {
        TermGate only = TermGate.only(CONTROLLER, TermStore.inMemory());

        TermGate.Verdict other = only.check(stamped(SWEEPER, 9));

        assertThat(other.outcome()).isEqualTo(Outcome.OTHER_ROLE);
        assertThat(other.reason()).contains("sweeper", "guards role controller alone");
        assertThat(only.highest(SWEEPER)).isEmpty();
        assertThat(only.check(stamped(CONTROLLER, 1)).admitted()).isTrue();
    }

    @Test
    void concurrentChecksKeepTheHighestTermAdmittedAndAdmitTheHighestOfAll() throws Exception {
        TermStore store = TermStore.inMemory();
        TermGate shared = new TermGate(store);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        List<Future<Boolean>> highestAdmitted = new ArrayList<>();
        try {
            for (int t = 0; t < 4; t++) {
                long seed = t;
                highestAdmitted.add(threads.submit(() -> {
                    java.util.Random random = new java.util.Random(seed);
                    for (int i = 0; i < 5_000; i++) {
                        shared.check(CONTROLLER, random.nextInt(10_000));
                    }
                    // Nobody checks a term above this one: it must pass, whoever ran first.
                    return shared.check(CONTROLLER, 10_000).admitted();
                }));
            }
            for (Future<Boolean> admitted : highestAdmitted) {
                assertThat(admitted.get(30, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(store.highest(CONTROLLER)).hasValue(10_000);
        assertThat(shared.check(CONTROLLER, 9_999).outcome()).isEqualTo(Outcome.STALE);
    }

    private static ConsumerRecord<byte[], byte[]> stamped(Role role, long term) {
        return record(TokenHeaders.stamp(new ProducerRecord<>("commands", new byte[0]), role,
                FencingToken.of(term, 1000, (short) 0)).headers());
    }

    private static ConsumerRecord<byte[], byte[]> record(Headers headers) {
        return new ConsumerRecord<>("commands", 0, 0, 0L, org.apache.kafka.common.record.TimestampType.CREATE_TIME, 0, 0,
                null, new byte[0], headers, java.util.Optional.empty());
    }
}
