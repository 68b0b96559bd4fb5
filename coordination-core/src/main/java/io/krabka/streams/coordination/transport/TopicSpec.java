package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.record.CoordinationCodec;
import java.util.Objects;

/**
 * What the coordination topic must look like.
 *
 * @param name the topic name, {@code __coordination_state} by default
 * @param partitions the partition count used when creating it
 * @param replicationFactor the replication factor used when creating it, and the
 *     minimum accepted for an existing topic
 * @param create whether to create the topic when it is missing
 * @param allowUnsafe whether to accept an existing topic that breaks the guarantees
 *     (not compacted, unclean leader election on, too few replicas) with a warning,
 *     for development clusters only
 */
public record TopicSpec(String name, int partitions, short replicationFactor, boolean create, boolean allowUnsafe) {

    /** Default partition count: 50, like Kafka's own internal topics. */
    public static final int DEFAULT_PARTITIONS = 50;
    /** Default replication factor: 3. */
    public static final short DEFAULT_REPLICATION_FACTOR = 3;

    /** The defaults: {@code __coordination_state}, 50 partitions, replication 3, created when missing. */
    public static final TopicSpec DEFAULTS = new TopicSpec(
            CoordinationCodec.COORDINATION_STATE_TOPIC, DEFAULT_PARTITIONS, DEFAULT_REPLICATION_FACTOR, true, false);

    public TopicSpec {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("topic name must not be blank");
        }
        if (partitions <= 0) {
            throw new IllegalArgumentException("partitions must be positive, but is " + partitions);
        }
        if (replicationFactor <= 0) {
            throw new IllegalArgumentException("replicationFactor must be positive, but is " + replicationFactor);
        }
    }

    /** The {@code min.insync.replicas} a topic of this replication factor needs: 2 from 3 replicas on. */
    public int requiredMinInsyncReplicas() {
        return replicationFactor >= 3 ? 2 : 1;
    }

    public TopicSpec withName(String newName) {
        return new TopicSpec(newName, partitions, replicationFactor, create, allowUnsafe);
    }

    public TopicSpec withPartitions(int newPartitions) {
        return new TopicSpec(name, newPartitions, replicationFactor, create, allowUnsafe);
    }

    public TopicSpec withReplicationFactor(int newReplicationFactor) {
        return new TopicSpec(name, partitions, (short) newReplicationFactor, create, allowUnsafe);
    }

    public TopicSpec withCreate(boolean newCreate) {
        return new TopicSpec(name, partitions, replicationFactor, newCreate, allowUnsafe);
    }

    public TopicSpec withAllowUnsafe(boolean newAllowUnsafe) {
        return new TopicSpec(name, partitions, replicationFactor, create, newAllowUnsafe);
    }
}
