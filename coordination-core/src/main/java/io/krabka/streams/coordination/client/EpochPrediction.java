package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.ProducerState;

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
 * <p>Not thread-safe: the leadership calls it under its lock.
 */
final class EpochPrediction {

    /** Past this epoch the next commit may roll over to a new producer id: stop predicting. */
    static final short ROLLOVER_GUARD = Short.MAX_VALUE - 8;

    /** A transaction about to run: the epoch its lease carries, and whether that is a prediction. */
    record Transaction(short leaseEpoch, boolean predicted, long startGeneration, long previousStartGeneration) {
    }

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
        Transaction transaction = new Transaction((short) (predict ? epoch + step : epoch), predict, start, previousStart);
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
     * its value and the step of one commit. More than one step is another InitProducerId
     * (then the next write fails) or a version upgrade's extra bump: either way, no step.
     *
     * @param reported the report, or null when the coordinator knows no such id
     */
    void learned(Transaction transaction, ProducerState reported, long generation) {
        if (reported == null) {
            lost();
            return;
        }
        accurate = true;
        boolean stable = transaction.previousStartGeneration() == generation;
        featureGeneration = generation;
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
        // A new producer id is a rollover of our own epoch, or a challenger's id; in the
        // second case our next transaction fails, so adopting it is harmless.
        producerId = reported.producerId();
        epoch = reported.producerEpoch();
        exact = step >= 0 && stable;
    }

    /** A transaction failed or its outcome is unknown (an abort moves the epoch under version 2), or a describe failed: learn again. */
    void lost() {
        exact = false;
        accurate = false;
    }

    /** Whether the coordinator's report shows an epoch newer than this member's own commits explain. */
    boolean supersededBy(ProducerState reported) {
        return reported.producerId() != producerId || reported.producerEpoch() > epoch + Math.max(step, 1);
    }

    /** Whether the coordinator reports an epoch that no transaction of this member explains. */
    boolean newerThanOwn(ProducerState reported) {
        return accurate
                ? reported.producerId() != producerId || reported.producerEpoch() != epoch
                : supersededBy(reported);
    }
}
