package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.RecordBatch;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds out what became of a leadership's transaction whose commit left its outcome unknown
 * (no answer until the lease deadline, or a fence on a resent EndTxn), from the coordinator
 * and the log ({@link CommitOutcome} decides); and the bounded, paced describes
 * that wait for the coordinator to settle a transaction (also a release's wait).
 */
final class CommitOutcomeResolver {

    // The leadership's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    /** How long a describe loop waits for the coordinator to settle a transaction. */
    static final Duration COMPLETION_WAIT = Duration.ofMillis(500);
    /** How many describes follow each other at once (each takes a round trip). */
    private static final int COMPLETION_AT_ONCE = 5;
    /** The waits between the later describes: from the first, doubling to the last. */
    private static final Duration COMPLETION_FIRST_WAIT = Duration.ofMillis(1);

    private static final Duration COMPLETION_LAST_WAIT = Duration.ofMillis(64);

    private final LeadershipTerm leadership;
    private final CoordinationRuntime runtime;
    private final CoordinationTransport transport;
    private final int partition;

    CommitOutcomeResolver(
            LeadershipTerm leadership, CoordinationRuntime runtime, CoordinationTransport transport, int partition) {
        this.leadership = leadership;
        this.runtime = runtime;
        this.transport = transport;
        this.partition = partition;
    }

    /**
     * Resolves the unknown outcome and ends the leadership, whose producer cannot run
     * another transaction. Gathers the evidence, a describe that waits for the coordinator
     * to settle, then a {@code read_committed} read from where the lease could be, and lets
     * {@link CommitOutcome} decide: committed and aborted only on evidence, anything else
     * unknown.
     *
     * @param version the transaction version the transaction ran under, as far as known
     * @param epochs what this member knew of its epoch when the transaction ran
     * @param leaseSearchFrom where the transaction's lease record could first be
     * @return the metadata of the batch, lease first, when it committed; a record whose
     *     metadata the producer never received has no offset ({@link RecordMetadata#hasOffset()}
     *     false) and, if it named none, {@link RecordMetadata#UNKNOWN_PARTITION}
     * @throws FencedException when it was aborted: nothing of it was written
     * @throws CommitOutcomeUnknownException when the evidence decides neither
     */
    List<RecordMetadata> resolve(
            CommitOutcomeUnknownException unknown,
            List<ProducerRecord<byte[], byte[]>> batch,
            CommitOutcome.Version version,
            EpochPrediction epochs,
            long leaseSearchFrom) {
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        ProducerState reported = null;
        try {
            reported = describeUntil(report -> !report.state().startsWith("Prepare") && !fenceUnderWay(report, epochs))
                    .orElse(null);
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        // Where the lease was appended, if its partition leader acknowledged it before the answer was lost.
        long leaseOffset = unknown.acknowledged()
                .map(all -> all.get(0))
                .filter(RecordMetadata::hasOffset)
                .map(RecordMetadata::offset)
                .orElse(-1L);
        // Read after the describe: once that reported the transaction decided, the log shows its outcome.
        LeaseSearch search = null;
        try {
            search = findLease(
                    lease, leaseOffset >= 0 ? Math.min(leaseSearchFrom, leaseOffset) : leaseSearchFrom, leaseOffset);
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        // Compaction keeps a record younger than the topic's min.compaction.lag.ms (on the
        // record's own timestamp, this member's clock: half the lag is the margin for skew).
        boolean tooYoungToCompact = runtime.clock().millis() - lease.timestamp()
                < transport.minCompactionLag().dividedBy(2).toMillis();
        CommitOutcome.LogEvidence logEvidence =
                search == null ? CommitOutcome.LogEvidence.UNREAD : search.evidence(leaseOffset, tooYoungToCompact);
        CommitOutcome.Evidence evidence = new CommitOutcome.Evidence(
                version, epochs.accurate(), epochs.producerId(), epochs.epoch(), reported, logEvidence);
        String known = "the coordinator reports " + (reported == null ? "nothing" : reported) + "; "
                + describeRead(search, leaseOffset);
        switch (CommitOutcome.decide(evidence)) {
            case COMMITTED -> {
                leadership.end(Leadership.State.FAILED);
                log.warn(
                        "{}; yet it committed ({}): the producer cannot go on, so the leadership of {} of role {} ended",
                        unknown.getMessage(),
                        known,
                        leadership.member(),
                        leadership.role());
                long found = search != null && search.found() >= 0 ? search.found() : leaseOffset;
                return committedMetadata(unknown, batch, found);
            }
            case ABORTED -> {
                // Fenced as a plain fence would be when the broker answered the commit so (the
                // coordinator's own timeout abort bumps the epoch too), or a newer epoch shows.
                boolean superseded = unknown.getCause() instanceof FencedException
                        || reported != null && epochs.supersededBy(reported);
                leadership.end(superseded ? Leadership.State.FENCED : Leadership.State.FAILED);
                Leadership.State ended = leadership.state();
                throw FencedException.ended(
                        unknown.getMessage() + "; it was aborted (" + known + "): nothing of it was written;"
                                + " the leadership of " + leadership.member() + " of role " + leadership.role()
                                + " ended (" + ended + ")",
                        unknown,
                        ended.endCause().orElse(LeadershipEndCause.FAILED));
            }
            default -> {
                leadership.end(Leadership.State.FAILED);
                List<RecordMetadata> acknowledged = unknown.acknowledged()
                        .map(all -> all.subList(1, all.size()))
                        .orElse(null);
                throw new CommitOutcomeUnknownException(
                        unknown.getMessage() + "; neither the coordinator nor "
                                + transport.location() + " tell whether it committed (" + known
                                + "); the leadership of "
                                + leadership.member() + " of role " + leadership.role() + " ended ("
                                + leadership.state() + ")",
                        unknown,
                        acknowledged);
            }
        }
    }

    /**
     * Whether {@code report} shows a fence of this transaction whose abort is not logged yet:
     * an InitProducerId on an ongoing transaction bumps the epoch in the coordinator's memory
     * first and logs PrepareAbort after, so a describe in between answers {@code Ongoing} at
     * an epoch above the one it ran at. Until the abort is logged and its markers are written,
     * the transaction's own records hold the last stable offset before its lease, and a read
     * cannot show that it is absent (a full build saw that reported as unknown).
     */
    private static boolean fenceUnderWay(ProducerState report, EpochPrediction epochs) {
        return report.state().equals("Ongoing")
                && report.producerId() == epochs.producerId()
                && report.producerEpoch() > epochs.epoch();
    }

    /** The reads a search makes at most: a partition other roles keep writing to must not hold the writer for ever. */
    private static final int MAX_READS = 64;

    /**
     * What a search of the log found: the lease's offset (-1: absent), how far the read got,
     * and whether a later record of the role's lease key followed the lease's place.
     */
    private record LeaseSearch(long found, long readTo, boolean laterLease) {

        CommitOutcome.LogEvidence evidence(long leaseOffset, boolean tooYoungToCompact) {
            if (found >= 0) {
                return CommitOutcome.LogEvidence.FOUND;
            }
            // Absent is evidence only past the lease's known place, and only where compaction
            // cannot have removed it: the lease is younger than the topic's compaction lag, or
            // no later lease of the role is there (the cleaner drops a record only for a later
            // one of its key, below the last stable offset, so within what this read saw).
            return leaseOffset >= 0 && readTo > leaseOffset && (tooYoungToCompact || !laterLease)
                    ? CommitOutcome.LogEvidence.ABSENT
                    : CommitOutcome.LogEvidence.NOT_REACHED;
        }
    }

    private static String describeRead(@Nullable LeaseSearch search, long leaseOffset) {
        String where = leaseOffset >= 0
                ? "its lease was appended at offset " + leaseOffset
                : "where its lease was appended is not known";
        if (search == null) {
            return "the partition could not be read, and " + where;
        }
        if (search.found() >= 0) {
            return "its lease is in the log at offset " + search.found();
        }
        return "a read_committed read reached offset " + search.readTo() + " without it, and " + where
                + (search.laterLease()
                        ? ", before a later lease of the role that compaction may have kept instead"
                        : "");
    }

    /**
     * Where {@code lease} is in the committed log from {@code from} (-1: absent), how far the
     * read got, and whether a later lease of the role followed {@code leaseOffset}. Reads to
     * the end, at most {@link #MAX_READS} times; a search cut short counts as if a later lease
     * followed, since it did not see all that compaction could have used.
     */
    private LeaseSearch findLease(ProducerRecord<byte[], byte[]> lease, long from, long leaseOffset) {
        boolean laterLease = false;
        for (int reads = 0; reads < MAX_READS; reads++) {
            RoleRecords read = transport.read(leadership.role(), from, Duration.ZERO);
            for (RawRecord record : read.records()) {
                if (!Arrays.equals(record.key(), lease.key())) {
                    continue;
                }
                // Its place, where its send was acknowledged, tells; its bytes only where that is not
                // known, since any writer of the topic can append a copy of them. A tombstone is anyone's.
                boolean ours = leaseOffset >= 0
                        ? record.offset() == leaseOffset && Arrays.equals(record.value(), lease.value())
                        : lease.value() != null && Arrays.equals(record.value(), lease.value());
                if (ours) {
                    return new LeaseSearch(record.offset(), read.nextOffset(), laterLease);
                }
                laterLease |= leaseOffset >= 0 && record.offset() > leaseOffset;
            }
            if (read.records().isEmpty() || read.nextOffset() <= from) {
                return new LeaseSearch(-1, Math.max(from, read.nextOffset()), laterLease);
            }
            from = read.nextOffset();
        }
        return new LeaseSearch(-1, from, true);
    }

    /** The batch's metadata once its transaction is known to have committed, the lease's at {@code leaseOffset} (-1: not known). */
    private List<RecordMetadata> committedMetadata(
            CommitOutcomeUnknownException unknown, List<ProducerRecord<byte[], byte[]>> batch, long leaseOffset) {
        Optional<List<RecordMetadata>> acknowledged = unknown.acknowledged();
        if (acknowledged.isPresent() && acknowledged.get().size() == batch.size()) {
            return acknowledged.get();
        }
        List<RecordMetadata> metadata = new ArrayList<>(batch.size());
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        metadata.add(new RecordMetadata(
                new TopicPartition(lease.topic(), partition),
                leaseOffset,
                0,
                lease.timestamp(),
                lease.key().length,
                lease.value() == null ? -1 : lease.value().length));
        for (ProducerRecord<byte[], byte[]> record : batch.subList(1, batch.size())) {
            // Written, but where only the lost answer said: no offset, as Kafka reports for acks=0.
            metadata.add(new RecordMetadata(
                    new TopicPartition(
                            record.topic(),
                            record.partition() != null ? record.partition() : RecordMetadata.UNKNOWN_PARTITION),
                    -1,
                    0,
                    record.timestamp() != null ? record.timestamp() : RecordBatch.NO_TIMESTAMP,
                    -1,
                    -1));
        }
        return metadata;
    }

    /**
     * Describes the role until the coordinator's report is {@code settled} (or it knows
     * no such id), for at most {@link #COMPLETION_WAIT}, and returns the last report.
     * Describes {@link #COMPLETION_AT_ONCE} times one after the other (a healthy
     * coordinator writes the markers within a few round trips, and the handover waits on
     * this), then after waits from {@link #COMPLETION_FIRST_WAIT} doubling to
     * {@link #COMPLETION_LAST_WAIT}: a coordinator that is slow to complete gets about
     * twenty describes per release, not thousands (many roles release at once when a
     * member shuts down). An interrupt ends the wait and stays set.
     */
    Optional<ProducerState> describeUntil(Predicate<ProducerState> settled) {
        long start = runtime.nanoTime();
        long wait = COMPLETION_FIRST_WAIT.toNanos();
        for (int describes = 1; ; describes++) {
            Optional<ProducerState> reported = transport.describeEpoch(leadership.role());
            if (reported.isEmpty() || settled.test(reported.get())) {
                return reported;
            }
            long left = COMPLETION_WAIT.toNanos() - (runtime.nanoTime() - start);
            if (left <= 0) {
                return reported;
            }
            if (describes < COMPLETION_AT_ONCE) {
                continue;
            }
            try {
                runtime.sleep(Duration.ofNanos(Math.min(wait, left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reported;
            }
            wait = Math.min(wait * 2, COMPLETION_LAST_WAIT.toNanos());
        }
    }
}
