package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;

/**
 * A role's epoch bound to the topic and the cluster its member pinned: no transaction once
 * either changed, and a transaction that fails is looked at again in that light. Behind
 * the same address another cluster answers a renewal with what its own coordinator knows
 * (a producer id it never gave out, or no transaction state at all: a fence or a timeout),
 * and Kafka's producer does not notice the switch; the member must say that the cluster
 * changed, not that a newer leader fenced it or that the cluster is slow.
 */
final class PinnedEpoch implements RoleEpoch {

    private final RoleEpoch epoch;
    private final PinnedTopic topic;

    PinnedEpoch(RoleEpoch epoch, PinnedTopic topic) {
        this.epoch = epoch;
        this.topic = topic;
    }

    @Override
    public Role role() {
        return epoch.role();
    }

    @Override
    public List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
        return bound(() -> epoch.transact(records, consumed));
    }

    @Override
    public List<RecordMetadata> transact(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, Duration commitRetry) {
        return bound(() -> epoch.transact(records, consumed, commitRetry));
    }

    private List<RecordMetadata> bound(Supplier<List<RecordMetadata>> transaction) {
        topic.requireUnchanged();
        long started = System.nanoTime();
        try {
            return transaction.get();
        } catch (CommitOutcomeUnknownException unknown) {
            Optional<CoordinationConfigurationException> changed = topic.changedNow();
            if (changed.isEmpty()) {
                throw unknown;
            }
            // Still of unknown outcome (the commit may have landed on the old cluster): only the reason is new.
            throw new CommitOutcomeUnknownException(
                    "a commit of role " + role() + " got no answer: "
                            + changed.get().getMessage(),
                    unknown,
                    unknown.acknowledged().orElse(null));
        } catch (FencedException fenced) {
            if (byANewerEpoch(fenced)) {
                // The broker knows this producer id and holds a newer epoch: a challenger's
                // InitProducerId. The leadership ends now, not after a look at the cluster; a
                // switch made meanwhile is found by the next periodic check.
                throw fenced;
            }
            // A producer id the coordinator does not know is what another cluster answers:
            // looked at again even right after a check, which may predate the switch.
            throw topic.explain(fenced, started);
        } catch (CoordinationException failed) {
            throw topic.explain(failed);
        }
    }

    /**
     * Whether {@code fenced} says that a newer epoch of the same producer id exists. Another
     * cluster behind the address does not know the producer id, so it answers
     * INVALID_PRODUCER_ID_MAPPING (or times out), which is looked at again, as is an invalid
     * transaction state. Should another cluster's producer id happen to match and answer with
     * a newer epoch, only the end's cause is wrong: the leadership ends either way, and the
     * periodic identity check stops the member with the switch as the reason.
     */
    private static boolean byANewerEpoch(FencedException fenced) {
        return fenced.getCause() instanceof ProducerFencedException
                || fenced.getCause() instanceof InvalidProducerEpochException;
    }

    @Override
    public long featureGeneration() {
        return epoch.featureGeneration();
    }

    @Override
    public boolean usable() {
        return epoch.usable();
    }

    @Override
    public void close() {
        epoch.close();
    }
}
