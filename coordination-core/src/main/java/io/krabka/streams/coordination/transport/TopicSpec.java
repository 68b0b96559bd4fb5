package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.record.CoordinationCodec;
import java.time.Duration;
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

    /**
     * The {@code min.compaction.lag.ms} a topic this library creates gets: far above any lease,
     * so a lease record whose commit went unanswered is still there when the member looks for it.
     */
    public static final Duration MIN_COMPACTION_LAG = Duration.ofHours(1);

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

    /**
     * How to create the topic by hand, for the error and the probe finding that a missing
     * topic gets while {@code create} is off: the settings that both the members and the
     * fencing probe accept without {@code allowUnsafe}. Compacted, {@code partitions}
     * partitions, replication factor 3 (the configured one when higher),
     * {@code min.insync.replicas} 2, unclean leader election off, and the compaction lag
     * and timestamp type the members create it with. With a configured
     * factor below 3 and {@code allowUnsafe}, it adds that the configured factor is
     * accepted as unsafe on a development cluster.
     */
    public String settingsToCreate() {
        int replicas = Math.max(3, replicationFactor);
        String safe = "cleanup.policy=compact, " + partitions + (partitions == 1 ? " partition" : " partitions")
                + ", replication factor " + replicas + ", min.insync.replicas 2,"
                + " unclean.leader.election.enable=false, min.compaction.lag.ms=" + MIN_COMPACTION_LAG.toMillis()
                + " and"
                + " message.timestamp.type=CreateTime";
        return replicationFactor < 3 && allowUnsafe
                ? safe + " (a development cluster with fewer brokers may use replication factor " + replicationFactor
                        + " and min.insync.replicas 1: accepted as unsafe)"
                : safe;
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
