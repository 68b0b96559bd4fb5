package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.ProducerState;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What became of a transaction whose commit got no answer, decided from evidence only.
 * Pure: {@link CommitOutcomeResolver} gathers the evidence (a describe, then a
 * {@code read_committed} read) and acts on the verdict.
 *
 * <p>The rows, first match wins:
 * <ol>
 *   <li>The log shows the transaction's lease record (its exact bytes, at the offset its
 *       send was acknowledged at when that is known): {@code COMMITTED}. A
 *       {@code read_committed} read never shows an aborted record. Unless the coordinator
 *       shows the abort (row 3): the record is then a copy that another writer of the topic
 *       appended, and the two disagree ({@code UNKNOWN}).</li>
 *   <li>The read passed the place where the lease record was appended, found it absent, and
 *       compaction cannot explain that: {@code ABORTED}, unless the coordinator shows the
 *       commit (then the two disagree: {@code UNKNOWN}). Compaction cannot explain it when
 *       the lease is younger than the topic's {@code min.compaction.lag.ms} (with a margin),
 *       or when the read saw no later record of the role's lease key: the cleaner removes a
 *       record only for a later one of its key below the last stable offset.</li>
 *   <li>Under transaction version 2, with the epoch the transaction ran at ({@code ranAt})
 *       known and the coordinator reporting the same producer id at {@code ranAt + 1}:
 *       {@code PrepareCommit} or {@code CompleteCommit} there is this transaction's commit
 *       ({@code COMMITTED}); {@code PrepareAbort} or {@code CompleteAbort} there is its abort,
 *       by its producer, a fence or the transaction timeout ({@code ABORTED}). No other
 *       transaction ends at that epoch (kafka-facts 2, 5, 6).</li>
 *   <li>Anything else: {@code UNKNOWN}.</li>
 * </ol>
 *
 * <p>What is deliberately not evidence: a read that stopped short of the lease's place (the
 * last stable offset is held back by any transaction left open on the partition, another
 * role's included), a lease whose place is not known (its send was never acknowledged),
 * and under version 1 or an unknown version any coordinator state: there a commit keeps
 * the epoch, so {@code CompleteAbort} at {@code ranAt + 1} may be a challenger's own abort
 * after this transaction committed, and a complete state at a later epoch says only that
 * something happened since.
 */
final class CommitOutcome {

    private CommitOutcome() {}

    /** The verdict. */
    enum Verdict {
        /** The transaction committed: its records are in the log. */
        COMMITTED,
        /** The transaction was aborted: nothing of it is in the log, nor ever will be. */
        ABORTED,
        /** The evidence decides neither. */
        UNKNOWN
    }

    /** The transaction version the transaction ran under, as far as its member knows. */
    enum Version {
        ONE,
        TWO,
        UNKNOWN
    }

    /** What the read of the role's partition showed of the transaction's lease record. */
    enum LogEvidence {
        /** The lease record is in the committed log. */
        FOUND,
        /** The read passed the lease record's offset, it is absent, and compaction cannot have removed it. */
        ABSENT,
        /** The read did not provably pass the lease record's place (or its place is unknown). */
        NOT_REACHED,
        /** The partition could not be read. */
        UNREAD
    }

    /**
     * The evidence about one transaction.
     *
     * @param version the transaction version it ran under
     * @param ranAtKnown whether {@code ranAt} is the exact epoch it ran at
     * @param producerId the producer id it ran under
     * @param ranAt the epoch it ran at
     * @param reported what the coordinator reported after the commit went unanswered; null when it did not answer or knew no such id
     * @param log what the read showed
     */
    record Evidence(
            Version version,
            boolean ranAtKnown,
            long producerId,
            short ranAt,
            @Nullable ProducerState reported,
            LogEvidence log) {

        Evidence {
            Objects.requireNonNull(version, "version");
            Objects.requireNonNull(log, "log");
        }
    }

    /** The verdict on {@code evidence}: the rows of the class comment. */
    static Verdict decide(Evidence evidence) {
        Verdict coordinator = coordinatorVerdict(evidence);
        if (evidence.log() == LogEvidence.FOUND) {
            return coordinator == Verdict.ABORTED ? Verdict.UNKNOWN : Verdict.COMMITTED;
        }
        if (evidence.log() == LogEvidence.ABSENT) {
            return coordinator == Verdict.COMMITTED ? Verdict.UNKNOWN : Verdict.ABORTED;
        }
        return coordinator;
    }

    /** Row 3: what the coordinator alone shows. */
    private static Verdict coordinatorVerdict(Evidence evidence) {
        ProducerState reported = evidence.reported();
        if (evidence.version() != Version.TWO
                || !evidence.ranAtKnown()
                || reported == null
                || reported.producerId() != evidence.producerId()
                || reported.producerEpoch() != evidence.ranAt() + 1) {
            return Verdict.UNKNOWN;
        }
        return switch (reported.state()) {
            case "PrepareCommit", "CompleteCommit" -> Verdict.COMMITTED;
            case "PrepareAbort", "CompleteAbort" -> Verdict.ABORTED;
            default -> Verdict.UNKNOWN;
        };
    }
}
