package io.krabka.streams.coordination.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.ProducerState;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The epoch each lease carries, transaction by transaction, against a coordinator that
 * moves the epoch as kafka-facts 2 and 3 say: by one per commit or abort under
 * transaction version 2, not at all under version 1, and a transaction that runs at epoch
 * 32 766 or later completes as a new producer id at epoch 0.
 */
class EpochPredictionTest {

    private static final long PRODUCER = 1000;
    private static final long NEXT_PRODUCER = 1001;

    /**
     * Each row: the transaction version, the epoch InitProducerId left, the events
     * (C a commit, A an abort, U a feature upgrade to version 2 before the next
     * transaction), the epochs the committed leases carry in order, and the producer id
     * of the last one.
     */
    static Stream<Arguments> rows() {
        return Stream.of(
                Arguments.of(
                        "version 2 learns the step from its first commit, then predicts",
                        2,
                        0,
                        "CCCC",
                        List.of(0, 2, 3, 4),
                        PRODUCER),
                Arguments.of("version 1 keeps the epoch", 1, 5, "CCC", List.of(5, 5, 5), PRODUCER),
                Arguments.of(
                        "an abort moves the epoch: the next leases carry the last known value until a commit is learned",
                        2,
                        0,
                        "CCACCC",
                        List.of(0, 2, 2, 4, 6),
                        PRODUCER),
                Arguments.of(
                        "an upgrade to version 2 is not predicted until a transaction ran wholly under it",
                        1,
                        0,
                        "CCUCCC",
                        List.of(0, 0, 0, 1, 3),
                        PRODUCER),
                Arguments.of(
                        "near the rollover it stops predicting, and predicts again on the new producer id",
                        2,
                        32757,
                        "CCCCCCCCCCCC",
                        List.of(32757, 32759, 32759, 32760, 32761, 32762, 32763, 32764, 32765, 32766, 1, 2),
                        NEXT_PRODUCER),
                Arguments.of("version 1 never rolls over", 1, 32766, "CCC", List.of(32766, 32766, 32766), PRODUCER));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void leasesCarryTheCoordinatorsEpochOrLessNeverMore(
            String name,
            int version,
            int initialEpoch,
            String events,
            List<Integer> expectedLeases,
            long expectedProducer) {
        Coordinator coordinator = new Coordinator(version, (short) initialEpoch);
        EpochPrediction epochs = new EpochPrediction(coordinator.report(), coordinator.generation);
        List<Integer> leases = new ArrayList<>();
        long lastProducer = -1;
        for (char event : events.toCharArray()) {
            if (event == 'U') {
                coordinator.upgrade();
                continue;
            }
            EpochPrediction.Transaction transaction = epochs.begin(coordinator.generation);
            long leaseProducer = epochs.producerId();
            if (event == 'A') {
                coordinator.abort();
                epochs.lost();
                continue;
            }
            coordinator.end();
            ProducerState after = coordinator.report();
            if (transaction.predicted()) {
                assertThat(after.producerId())
                        .as("a predicted lease's producer id")
                        .isEqualTo(leaseProducer);
                assertThat(transaction.leaseEpoch())
                        .as("a predicted lease's epoch")
                        .isEqualTo(after.producerEpoch());
            } else if (after.producerId() == leaseProducer) {
                assertThat(transaction.leaseEpoch())
                        .as("a lease's epoch is never ahead")
                        .isLessThanOrEqualTo(after.producerEpoch());
            }
            if (!epochs.committed(transaction, coordinator.generation)) {
                epochs.learned(transaction, after, coordinator.generation);
            }
            assertThat(epochs.accurate()).isTrue();
            assertThat(epochs.epoch()).as("what it knows after the commit").isEqualTo(after.producerEpoch());
            leases.add((int) transaction.leaseEpoch());
            lastProducer = leaseProducer;
        }
        assertThat(leases).isEqualTo(expectedLeases);
        assertThat(lastProducer).isEqualTo(expectedProducer);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reports")
    void aReportNoOwnTransactionExplainsIsNewer(
            String name, boolean accurate, int reportedEpoch, long reportedProducer, boolean newer) {
        // Known: producer 1000 at epoch 10 with a learned step of one (version 2).
        EpochPrediction epochs = new EpochPrediction(new ProducerState(PRODUCER, (short) 9, "Empty"), 0);
        EpochPrediction.Transaction first = epochs.begin(0);
        epochs.learned(first, new ProducerState(PRODUCER, (short) 10, "CompleteCommit"), 0);
        if (!accurate) {
            epochs.lost();
        }
        assertThat(epochs.newerThanOwn(new ProducerState(reportedProducer, (short) reportedEpoch, "CompleteCommit")))
                .isEqualTo(newer);
    }

    static Stream<Arguments> reports() {
        return Stream.of(
                Arguments.of("its own epoch", true, 10, PRODUCER, false),
                Arguments.of("one more while accurate: someone else's", true, 11, PRODUCER, true),
                Arguments.of("one more after a failed transaction: its own abort", false, 11, PRODUCER, false),
                Arguments.of("two more after a failed transaction: a challenger", false, 12, PRODUCER, true),
                Arguments.of("another producer id", true, 0, NEXT_PRODUCER, true),
                Arguments.of("another producer id after a failed transaction", false, 0, NEXT_PRODUCER, true));
    }

    /**
     * Each row: the transaction version, the epoch InitProducerId left, the events before
     * (as in {@link #rows()}), and what a challenger does between the next commit, whose
     * epoch is not predicted, and its describe: I an InitProducerId, IC one and its grant's
     * commit, N an InitProducerId that gets another producer id (a moved coordinator may
     * hand one out, kafka-facts 4).
     */
    static Stream<Arguments> challenges() {
        return Stream.of(
                Arguments.of("version 2, the grant's commit: no step known yet", 2, 0, "", "I"),
                Arguments.of("version 2, after an abort", 2, 0, "CCA", "I"),
                Arguments.of("version 2, after an abort, and the challenger's grant committed", 2, 0, "CCA", "IC"),
                Arguments.of("version 2, after an upgrade", 1, 0, "CCU", "I"),
                Arguments.of(
                        "version 1, the grant's commit: InitProducerId moves one step, as a version 2 commit would",
                        1,
                        5,
                        "",
                        "I"),
                Arguments.of("version 1, after an abort", 1, 5, "CCA", "I"),
                Arguments.of("version 2, another producer id away from the rollover", 2, 0, "CCA", "N"),
                Arguments.of("near the rollover, after its own", 2, 32765, "C", "I"),
                Arguments.of(
                        "near the rollover, after its own, and the challenger's grant committed", 2, 32765, "C", "IC"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("challenges")
    void aChallengersEpochSeenAfterACommitIsNeverTakenForItsOwn(
            String name, int version, int initialEpoch, String before, String challenger) {
        Coordinator coordinator = new Coordinator(version, (short) initialEpoch);
        EpochPrediction epochs = new EpochPrediction(coordinator.report(), coordinator.generation);
        for (char event : before.toCharArray()) {
            play(coordinator, epochs, event);
        }
        EpochPrediction.Transaction last = epochs.begin(coordinator.generation);
        long lastProducer = epochs.producerId();
        coordinator.end();
        assertThat(epochs.committed(last, coordinator.generation))
                .as("predicted, so it does not describe")
                .isFalse();
        coordinator.initProducerId(challenger.equals("N"));
        if (challenger.equals("IC")) {
            coordinator.end();
        }
        ProducerState seen = coordinator.report();

        epochs.learned(last, seen, coordinator.generation);

        assertThat(List.of(epochs.producerId(), (long) epochs.epoch()))
                .as("what it knows: the value its last lease carried")
                .containsExactly(lastProducer, (long) last.leaseEpoch());
        assertThat(epochs.accurate()).isFalse();
        assertThat(epochs.newerThanOwn(seen))
                .as("a newer epoch than its own, for confirmFenced")
                .isTrue();
        assertThat(epochs.supersededBy(seen))
                .as("superseded, for a producer that failed")
                .isTrue();
        EpochPrediction.Transaction next = epochs.begin(coordinator.generation);
        assertThat(next.predicted()).isFalse();
        assertThat(List.of(epochs.producerId(), (long) next.leaseEpoch()))
                .as("the next lease carries no epoch of the challenger's")
                .containsExactly(lastProducer, (long) last.leaseEpoch());
    }

    /** A report it did not take, and its producer commits again: no challenger fenced it, so that report was its own. */
    @Test
    void aReportItDidNotTakeIsTakenOnceItsNextCommitShowsNoChallengerFencedIt() {
        Coordinator coordinator = new Coordinator(2, (short) 0);
        EpochPrediction epochs = new EpochPrediction(coordinator.report(), coordinator.generation);
        play(coordinator, epochs, 'C');
        play(coordinator, epochs, 'A');
        EpochPrediction.Transaction moved = epochs.begin(coordinator.generation);
        coordinator.end();
        // An own bump its model does not know (no such bump of Kafka's is known): a
        // challenger's would look the same, so the report is not taken.
        coordinator.epoch++;
        epochs.learned(moved, coordinator.report(), coordinator.generation);
        assertThat(epochs.accurate()).as("not taken").isFalse();

        play(coordinator, epochs, 'C');
        assertThat(epochs.accurate()).isTrue();
        assertThat(epochs.epoch()).isEqualTo(coordinator.epoch);
        EpochPrediction.Transaction next = epochs.begin(coordinator.generation);
        coordinator.end();
        assertThat(next.predicted()).isTrue();
        assertThat(next.leaseEpoch()).isEqualTo(coordinator.epoch);
    }

    /** One event of {@link #rows()}: a commit (learned from a describe when not predicted), an abort, or an upgrade. */
    private static void play(Coordinator coordinator, EpochPrediction epochs, char event) {
        if (event == 'U') {
            coordinator.upgrade();
            return;
        }
        EpochPrediction.Transaction transaction = epochs.begin(coordinator.generation);
        if (event == 'A') {
            coordinator.abort();
            epochs.lost();
            return;
        }
        coordinator.end();
        if (!epochs.committed(transaction, coordinator.generation)) {
            epochs.learned(transaction, coordinator.report(), coordinator.generation);
        }
    }

    /** The transaction coordinator's epoch for one transactional id, as kafka-facts 2 and 3 describe it. */
    private static final class Coordinator {
        private int version;
        private long producerId = PRODUCER;
        private short epoch;
        private String state = "Empty";
        // The producer's feature generation: moves when it learns a new transaction version.
        private long generation;

        Coordinator(int version, short epoch) {
            this.version = version;
            this.epoch = epoch;
        }

        ProducerState report() {
            return new ProducerState(producerId, epoch, state);
        }

        /** A commit ends the open transaction. */
        void end() {
            state = "CompleteCommit";
            if (version < 2) {
                return;
            }
            if (epoch >= Short.MAX_VALUE - 1) {
                producerId = NEXT_PRODUCER;
                epoch = 0;
            } else {
                epoch++;
            }
        }

        /** An abort moves the epoch as a commit does. */
        void abort() {
            end();
            state = "CompleteAbort";
        }

        /** Another producer's InitProducerId: the next epoch (a new producer id past the top), or a new producer id. */
        void initProducerId(boolean newProducerId) {
            state = "Empty";
            if (newProducerId || epoch >= Short.MAX_VALUE - 1) {
                producerId = producerId == PRODUCER ? NEXT_PRODUCER : producerId + 1;
                epoch = 0;
            } else {
                epoch++;
            }
        }

        void upgrade() {
            version = 2;
            generation++;
        }
    }
}
