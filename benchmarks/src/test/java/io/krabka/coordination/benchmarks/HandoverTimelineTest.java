package io.krabka.coordination.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.coordination.benchmarks.HandoverTimeline.Call;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HandoverTimelineTest {

    private static final long MS = 1_000_000;

    @Test
    void eachStandbyCallIsTheFirstOfItsKindAfterTheOneBeforeIt() {
        long released = 1_000 * MS;
        List<Call> calls = List.of(
                call("b", "read", -50, -48), // before release(): not this handover's
                call("a", "deregister", 0, 3),
                call("a", "transact", 3, 11),
                call("b", "news", 4, 4),
                call("b", "read", 6, 10),
                call("b", "describeEpoch", 7, 8), // during the read: not the grant's describe
                call("b", "initEpoch", 12, 28),
                call("b", "describeEpoch", 28, 30),
                call("b", "transact", 31, 38),
                call("b", "news", 39, 39));

        Map<String, Long> steps = HandoverTimeline.steps(at(calls, released), "a", "b", released, released + 40 * MS);

        assertThat(steps.keySet()).containsExactlyElementsOf(HandoverTimeline.STEPS);
        assertThat(steps.values())
                .containsExactly(
                        0L, 3 * MS, 3 * MS, 8 * MS, 4 * MS, 6 * MS, 4 * MS, 12 * MS, 16 * MS, 28 * MS, 2 * MS, 31 * MS,
                        7 * MS, 40 * MS);
    }

    @Test
    void aStepWithoutItsCallIsLeftOut() {
        long released = 0;
        List<Call> calls =
                List.of(call("a", "deregister", 0, 2), call("b", "news", 3, 3), call("b", "initEpoch", 4, 9));

        Map<String, Long> steps = HandoverTimeline.steps(calls, "a", "b", released, 20 * MS);

        assertThat(steps)
                .containsOnlyKeys(
                        "holder: deregistration begins",
                        "holder: deregistration takes",
                        "standby: first news after release() at",
                        "standby: InitProducerId (initTransactions) begins",
                        "standby: InitProducerId takes",
                        "standby: Listener.granted at");
    }

    private static Call call(String side, String kind, long startMs, long endMs) {
        return new Call(side, kind, startMs * MS, endMs * MS);
    }

    private static List<Call> at(List<Call> calls, long released) {
        return calls.stream()
                .map(c -> new Call(c.side(), c.kind(), c.start() + released, c.end() + released))
                .toList();
    }
}
