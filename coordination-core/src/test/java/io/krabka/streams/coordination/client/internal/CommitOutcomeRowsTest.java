package io.krabka.streams.coordination.client.internal;

import static io.krabka.streams.coordination.client.internal.CommitOutcome.LogEvidence.ABSENT;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.LogEvidence.FOUND;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.LogEvidence.NOT_REACHED;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.LogEvidence.UNREAD;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.Verdict.ABORTED;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.Verdict.COMMITTED;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.Verdict.UNKNOWN;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.Version.ONE;
import static io.krabka.streams.coordination.client.internal.CommitOutcome.Version.TWO;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.client.internal.CommitOutcome.Evidence;
import io.krabka.streams.coordination.client.internal.CommitOutcome.LogEvidence;
import io.krabka.streams.coordination.client.internal.CommitOutcome.Verdict;
import io.krabka.streams.coordination.client.internal.CommitOutcome.Version;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every row of {@link CommitOutcome}: the transaction ran at producer 7, epoch 40. The
 * comment of each row says which history leaves that evidence, and why the verdict is
 * the only one that history allows.
 */
class CommitOutcomeRowsTest {

    private static final long PID = 7;
    private static final short RAN_AT = 40;

    static Stream<Arguments> rows() {
        return Stream.of(
                // The log: a read_committed read shows only committed records.
                row("lease in the log", TWO, true, state(41, "CompleteCommit"), FOUND, COMMITTED),
                row(
                        "lease in the log, the coordinator moved on (a challenger)",
                        ONE,
                        true,
                        state(42, "Empty"),
                        FOUND,
                        COMMITTED),
                row("lease in the log, nothing known of the epoch", Version.UNKNOWN, false, null, FOUND, COMMITTED),
                row(
                        "its lease's bytes in the log, yet the coordinator shows its abort: a copy another writer"
                                + " appended, they disagree",
                        TWO,
                        true,
                        state(41, "CompleteAbort"),
                        FOUND,
                        UNKNOWN),
                row("read passed the lease's place, absent", ONE, true, state(42, "Empty"), ABSENT, ABORTED),
                row(
                        "read passed the lease's place, absent, coordinator silent",
                        Version.UNKNOWN,
                        false,
                        null,
                        ABSENT,
                        ABORTED),
                row(
                        "absent, yet the coordinator shows the commit: they disagree",
                        TWO,
                        true,
                        state(41, "CompleteCommit"),
                        ABSENT,
                        UNKNOWN),

                // Version 2, the coordinator at ranAt + 1: only this transaction ends there.
                row(
                        "v2 CompleteCommit at ranAt+1, the read held back",
                        TWO,
                        true,
                        state(41, "CompleteCommit"),
                        NOT_REACHED,
                        COMMITTED),
                row(
                        "v2 PrepareCommit at ranAt+1, unreadable",
                        TWO,
                        true,
                        state(41, "PrepareCommit"),
                        UNREAD,
                        COMMITTED),
                row(
                        "v2 CompleteAbort at ranAt+1 (timeout or fence)",
                        TWO,
                        true,
                        state(41, "CompleteAbort"),
                        NOT_REACHED,
                        ABORTED),
                row("v2 PrepareAbort at ranAt+1", TWO, true, state(41, "PrepareAbort"), UNREAD, ABORTED),

                // Finding 1: a complete state past ranAt is no evidence of an abort.
                row(
                        "v2 Empty at ranAt+2: a challenger after a commit or an abort",
                        TWO,
                        true,
                        state(42, "Empty"),
                        NOT_REACHED,
                        UNKNOWN),
                row(
                        "v2 CompleteCommit at ranAt+3: the challenger's own commit",
                        TWO,
                        true,
                        state(43, "CompleteCommit"),
                        NOT_REACHED,
                        UNKNOWN),
                row("v2 CompleteAbort at ranAt+2", TWO, true, state(42, "CompleteAbort"), NOT_REACHED, UNKNOWN),
                row(
                        "v1 Empty at ranAt+1: a challenger after this commit",
                        ONE,
                        true,
                        state(41, "Empty"),
                        NOT_REACHED,
                        UNKNOWN),
                row(
                        "v1 CompleteAbort at ranAt+1: may be the challenger's own abort",
                        ONE,
                        true,
                        state(41, "CompleteAbort"),
                        NOT_REACHED,
                        UNKNOWN),
                row(
                        "v1 CompleteCommit at ranAt: may be the previous transaction's",
                        ONE,
                        true,
                        state(40, "CompleteCommit"),
                        NOT_REACHED,
                        UNKNOWN),
                row(
                        "version unknown, CompleteCommit at ranAt+1",
                        Version.UNKNOWN,
                        true,
                        state(41, "CompleteCommit"),
                        NOT_REACHED,
                        UNKNOWN),
                row("v2 but ranAt not known exactly", TWO, false, state(41, "CompleteCommit"), NOT_REACHED, UNKNOWN),
                row(
                        "v2, another producer id (a rollover or an expiry)",
                        TWO,
                        true,
                        new ProducerState(8, (short) 0, "CompleteCommit"),
                        NOT_REACHED,
                        UNKNOWN),
                row("v2 Ongoing at ranAt: not decided", TWO, true, state(40, "Ongoing"), NOT_REACHED, UNKNOWN),
                row("v2 PrepareEpochFence at ranAt+1", TWO, true, state(41, "PrepareEpochFence"), NOT_REACHED, UNKNOWN),
                row("nothing answered", TWO, true, null, UNREAD, UNKNOWN));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decides(
            String history,
            Version version,
            boolean ranAtKnown,
            ProducerState reported,
            LogEvidence log,
            Verdict expected) {
        assertThat(CommitOutcome.decide(new Evidence(version, ranAtKnown, PID, RAN_AT, reported, log)))
                .isEqualTo(expected);
    }

    private static ProducerState state(int epoch, String state) {
        return new ProducerState(PID, (short) epoch, state);
    }

    private static Arguments row(
            String history,
            Version version,
            boolean ranAtKnown,
            ProducerState reported,
            LogEvidence log,
            Verdict expected) {
        return Arguments.of(history, version, ranAtKnown, reported, log, expected);
    }
}
