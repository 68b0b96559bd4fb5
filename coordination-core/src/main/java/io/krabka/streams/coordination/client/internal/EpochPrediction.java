package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.ProducerState;
import org.jspecify.annotations.Nullable;

/**
 * Which (producer id, epoch) the coordinator will report for a role's producer once its
 * next transaction commits, as far as this member's own transactions go. Pure: the
 * holder feeds it the coordinator's describes and its producer's feature generation.
 *
 * <p>Under transaction version 2 every commit or abort moves the epoch by one; under
 * version 1 a commit keeps it (kafka-facts 2). The step is learned from a describe after
 * a commit, and trusted only while the producer's features did not change since the
 * previous transaction began (that is when a transaction's version is fixed). Near the
 * rollover (the transaction at epoch 32 766 or later completes as a new producer id at
 * epoch 0, kafka-facts 3), after an abort or a failed describe it stops predicting and
 * the lease carries the last known value: too small only makes {@code current()} briefly
 * false, too large is never written knowingly.
 *
 * <p>A describe after a commit can also see a challenger: its InitProducerId may land
 * between the commit and the describe. A report that this member's own transactions do not
 * explain is therefore never taken for its own (the holder would no longer see that a newer
 * epoch exists, and its token would carry the challenger's epoch); its next commit, if its
 * producer has one, shows that no challenger fenced it.
 *
 * <p>Not thread-safe: the leadership calls it under its lock.
 */
final class EpochPrediction {

    /** Past this epoch the next commit may roll over to a new producer id: stop predicting. */
    static final short ROLLOVER_GUARD = Short.MAX_VALUE - 8;

    /** A transaction about to run: the epoch its lease carries, and whether that is a prediction. */
    record Transaction(short leaseEpoch, boolean predicted, long startGeneration, long previousStartGeneration) {}

    // What the coordinator reports after this member's last commit, and how a commit moves it.
    private long producerId;
    private short epoch;
    private int step = -1;
    private boolean exact;
    private long featureGeneration;
    // The producer's feature generation at the start of its previous transaction.
    private long previousStart;
    // Whether the newest lease carried a prediction, so equals what the coordinator reports.
    private boolean lastLeasePredicted;
    // Whether epoch is what the coordinator reports now, as far as this member's own
    // transactions go: false after a failed transaction (its abort may have moved the
    // epoch) or a describe that failed.
    private boolean accurate = true;
    // How many of its own transactions may have moved the epoch unseen since it was last
    // known: each failed one (its abort) and each commit whose describe failed, one step each.
    private int unseen;
    // A report after a commit that its own transactions do not explain, most likely a
    // challenger's InitProducerId; null when none was seen since the last commit it learned from.
    private @Nullable ProducerState unexplained;

    /** @param initial the coordinator's report right after InitProducerId */
    EpochPrediction(ProducerState initial, long featureGeneration) {
        this.producerId = initial.producerId();
        this.epoch = initial.producerEpoch();
        this.featureGeneration = featureGeneration;
        this.previousStart = featureGeneration;
    }

    long producerId() {
        return producerId;
    }

    /** The last epoch known for {@link #producerId()}. */
    short epoch() {
        return epoch;
    }

    /** The step of one commit (0 under version 1, 1 under version 2), or -1 before one was learned. */
    int step() {
        return step;
    }

    /** Whether {@link #epoch()} is what the coordinator reports now, as far as this member's own transactions go. */
    boolean accurate() {
        return accurate;
    }

    /** Whether the newest committed lease carried a prediction, so {@code current()} is true for it. */
    boolean lastLeasePredicted() {
        return lastLeasePredicted;
    }

    /** A transaction begins while the producer is at feature generation {@code start}. */
    Transaction begin(long start) {
        boolean predict = exact && start == featureGeneration && epoch < ROLLOVER_GUARD;
        Transaction transaction =
                new Transaction((short) (predict ? epoch + step : epoch), predict, start, previousStart);
        previousStart = start;
        return transaction;
    }

    /**
     * The transaction committed with the producer at feature generation {@code end}.
     *
     * @return whether the prediction holds; false when the caller must describe and tell
     *     {@link #learned} (or {@link #lost} when the describe fails)
     */
    boolean committed(Transaction transaction, long end) {
        lastLeasePredicted = transaction.predicted() && end == transaction.startGeneration();
        if (lastLeasePredicted) {
            epoch = transaction.leaseEpoch();
            accurate = true;
        }
        return lastLeasePredicted;
    }

    /**
     * What the coordinator reported after a commit whose epoch was not predicted: learns
     * its value and the step of one commit. More than one step is an abort this member did
     * not see, or a version upgrade's extra bump: either way, no step. A report its own
     * transactions do not explain is not taken ({@link #supersededBy} then holds).
     *
     * @param reported the report, or null when the coordinator knows no such id
     */
    void learned(Transaction transaction, @Nullable ProducerState reported, long generation) {
        if (reported == null) {
            lost();
            return;
        }
        boolean stable = transaction.previousStartGeneration() == generation;
        featureGeneration = generation;
        if (unexplained != null) {
            // This commit shows its producer was not fenced when it began: that report was its own.
            producerId = unexplained.producerId();
            epoch = unexplained.producerEpoch();
            unexplained = null;
        }
        // This commit moved the epoch by its step (by one when the step is not known, or the
        // features changed: a version upgrade's extra bump), each unseen transaction by one.
        int ownSteps = unseen + (step >= 0 && stable ? step : 1);
        unseen = 0;
        if (!explains(reported, ownSteps)) {
            // Not taken: the next lease carries the last value known as its own.
            unexplained = reported;
            exact = false;
            accurate = false;
            return;
        }
        accurate = true;
        if (reported.producerId() == producerId) {
            int moved = reported.producerEpoch() - epoch;
            epoch = reported.producerEpoch();
            boolean oneCommit = moved == 0 || moved == 1;
            if (oneCommit) {
                step = moved;
            }
            exact = oneCommit && stable;
            return;
        }
        // A new producer id that it explains: the rollover of its own epoch.
        producerId = reported.producerId();
        epoch = reported.producerEpoch();
        exact = step >= 0 && stable;
    }

    /**
     * Whether {@code reported}, after a commit, is what this member's own transactions leave:
     * the coordinator's last act its commit (a challenger's InitProducerId leaves Empty, and
     * the challenger's grant another state or a larger epoch), and the epoch moved by at most
     * {@code ownSteps}, or rolled over from near the top to a new producer id (kafka-facts 3).
     */
    private boolean explains(ProducerState reported, int ownSteps) {
        if (!reported.state().equals("CompleteCommit") && !reported.state().equals("PrepareCommit")) {
            return false;
        }
        if (reported.producerId() == producerId) {
            int moved = reported.producerEpoch() - epoch;
            return moved >= 0 && moved <= ownSteps;
        }
        return epoch + ownSteps >= ROLLOVER_GUARD && reported.producerEpoch() < ownSteps;
    }

    /** A transaction failed or its outcome is unknown (an abort moves the epoch under version 2), or a describe failed: learn again. */
    void lost() {
        exact = false;
        accurate = false;
        unseen++;
    }

    /**
     * Whether the coordinator's report shows an epoch newer than this member's own commits
     * explain, or a report after its last commit did.
     */
    boolean supersededBy(ProducerState reported) {
        return unexplained != null
                || reported.producerId() != producerId
                || reported.producerEpoch() > epoch + Math.max(step, 1);
    }

    /** Whether the coordinator reports an epoch that no transaction of this member explains. */
    boolean newerThanOwn(ProducerState reported) {
        return accurate
                ? reported.producerId() != producerId || reported.producerEpoch() != epoch
                : supersededBy(reported);
    }
}
