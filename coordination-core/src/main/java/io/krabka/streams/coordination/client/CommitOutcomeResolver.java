package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds out what became of a leadership's transaction whose commit got no answer until
 * the lease deadline, from the coordinator and the log; and the bounded, paced describes
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

    private final Leadership leadership;
    private final CoordinationRuntime runtime;
    private final CoordinationTransport transport;
    private final int partition;

    CommitOutcomeResolver(Leadership leadership, CoordinationRuntime runtime, CoordinationTransport transport, int partition) {
        this.leadership = leadership;
        this.runtime = runtime;
        this.transport = transport;
        this.partition = partition;
    }

    /**
     * Resolves the unknown outcome and ends the leadership, whose producer cannot run
     * another transaction. The log decides "committed": the transaction's own lease record
     * (its bytes name this member and the new deadline) is visible to {@code read_committed}.
     * The coordinator decides "aborted": with no such record, the transaction can no longer
     * commit once the coordinator reports this producer id at a later epoch than the
     * transaction's, with nothing open (kafka-facts 2, 5, 6: under version 2 our own commit
     * or abort ends at the epoch after it, a challenger's InitProducerId later still; under
     * version 1 a commit keeps the epoch, so there only the log can decide). Where the log
     * cannot be read, the coordinator alone decides "committed" when this transaction ran
     * under version 2 (it predicted a step of one) and the coordinator reports
     * CompleteCommit at exactly the next epoch: no other transaction ends there. Anything
     * else, a coordinator that does not answer included, leaves it unknown.
     *
     * @param epochs what this member knew of its epoch when the transaction ran
     * @param leaseSearchFrom where the transaction's lease record could first be
     * @return the metadata of the batch, lease first, when it committed; a record whose
     *     metadata the producer never received has no offset ({@link RecordMetadata#hasOffset()}
     *     false) and, if it named none, {@link RecordMetadata#UNKNOWN_PARTITION}
     * @throws FencedException when it was aborted: nothing of it was written
     * @throws CommitOutcomeUnknownException when neither the coordinator nor the log decide
     */
    List<RecordMetadata> resolve(CommitOutcomeUnknownException unknown, List<ProducerRecord<byte[], byte[]>> batch,
            boolean versionTwo, EpochPrediction epochs, long leaseSearchFrom) {
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        // The epoch the transaction ran at, if this member knew it exactly.
        boolean epochKnown = epochs.accurate();
        short ranAt = epochs.epoch();
        long producerId = epochs.producerId();
        Optional<ProducerState> reported = Optional.empty();
        try {
            reported = describeUntil(report -> !report.state().startsWith("Prepare"));
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        // Read after the describe: once that reported the transaction decided, the log shows its outcome.
        OptionalLong found = OptionalLong.empty();
        boolean logRead = false;
        try {
            found = findLease(lease, leaseSearchFrom);
            logRead = true;
        } catch (CoordinationException unanswered) {
            unknown.addSuppressed(unanswered);
        }
        if (!logRead && versionTwo && epochKnown && reported.isPresent() && reported.get().state().equals("CompleteCommit")
                && reported.get().producerId() == producerId && reported.get().producerEpoch() == ranAt + 1) {
            leadership.end(Leadership.State.FAILED);
            log.warn("The commit of a transaction of role {} got no answer until the lease deadline, but the coordinator reports"
                    + " it committed ({}); the producer cannot go on, so the leadership of {} ended", leadership.role(),
                    reported.get(), leadership.member());
            return committedMetadata(unknown, batch, -1);
        }
        if (found.isPresent()) {
            leadership.end(Leadership.State.FAILED);
            log.warn("The commit of a transaction of role {} got no answer until the lease deadline, but its lease is at offset {}"
                    + " of {}: it committed; the producer cannot go on, so the leadership of {} ended", leadership.role(),
                    found.getAsLong(), transport.topic(), leadership.member());
            return committedMetadata(unknown, batch, found.getAsLong());
        }
        boolean decided = epochKnown && reported.isPresent() && reported.get().transactionComplete()
                && reported.get().producerId() == producerId && reported.get().producerEpoch() > ranAt;
        if (decided) {
            boolean superseded = reported.get().producerEpoch() > ranAt + Math.max(epochs.step(), 1);
            leadership.end(superseded ? Leadership.State.FENCED : Leadership.State.FAILED);
            Leadership.State ended = leadership.state();
            throw new FencedException("the commit of a transaction of role " + leadership.role() + " got no answer until the"
                    + " lease deadline, and the coordinator aborted it (" + reported.get() + "): nothing of it was written; the"
                    + " leadership of " + leadership.member() + " ended (" + ended + ")", unknown,
                    ended.endCause().orElse(LeadershipEndCause.FAILED));
        }
        leadership.end(Leadership.State.FAILED);
        List<RecordMetadata> acknowledged = unknown.acknowledged().map(all -> all.subList(1, all.size())).orElse(null);
        throw new CommitOutcomeUnknownException("the commit of a transaction of role " + leadership.role() + " got no answer"
                + " until the lease deadline, and neither the coordinator (" + reported.map(String::valueOf).orElse("no answer")
                + ") nor " + transport.location() + " tell whether it committed; the leadership of " + leadership.member()
                + " ended (" + leadership.state() + ")", unknown, acknowledged);
    }

    /** Where {@code lease} (these exact bytes) is in the committed log from {@code from}, if anywhere. */
    private OptionalLong findLease(ProducerRecord<byte[], byte[]> lease, long from) {
        while (true) {
            RoleRecords read = transport.read(leadership.role(), from, Duration.ZERO);
            for (RawRecord record : read.records()) {
                if (Arrays.equals(record.key(), lease.key()) && Arrays.equals(record.value(), lease.value())) {
                    return OptionalLong.of(record.offset());
                }
            }
            if (read.records().isEmpty() || read.nextOffset() <= from) {
                return OptionalLong.empty();
            }
            from = read.nextOffset();
        }
    }

    /** The batch's metadata once its transaction is known to have committed, the lease's at {@code leaseOffset} (-1: not known). */
    private List<RecordMetadata> committedMetadata(CommitOutcomeUnknownException unknown,
            List<ProducerRecord<byte[], byte[]>> batch, long leaseOffset) {
        Optional<List<RecordMetadata>> acknowledged = unknown.acknowledged();
        if (acknowledged.isPresent() && acknowledged.get().size() == batch.size()) {
            return acknowledged.get();
        }
        List<RecordMetadata> metadata = new ArrayList<>(batch.size());
        ProducerRecord<byte[], byte[]> lease = batch.get(0);
        metadata.add(new RecordMetadata(new TopicPartition(lease.topic(), partition), leaseOffset, 0, lease.timestamp(),
                lease.key().length, lease.value() == null ? -1 : lease.value().length));
        for (ProducerRecord<byte[], byte[]> record : batch.subList(1, batch.size())) {
            // Written, but where only the lost answer said: no offset, as Kafka reports for acks=0.
            metadata.add(new RecordMetadata(new TopicPartition(record.topic(),
                    record.partition() != null ? record.partition() : RecordMetadata.UNKNOWN_PARTITION), -1, 0,
                    record.timestamp() != null ? record.timestamp() : RecordBatch.NO_TIMESTAMP, -1, -1));
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
