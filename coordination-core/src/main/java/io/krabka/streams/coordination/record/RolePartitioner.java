package io.krabka.streams.coordination.record;

import io.krabka.streams.coordination.Role;
import org.apache.kafka.common.utils.Utils;

/**
 * Pins every record of a role to one partition of {@code __coordination_state}.
 *
 * <p>The pin is a correctness requirement: ranks are registration offsets, and terms
 * are lease offsets, so all records of a role need one total order. The registration
 * key of a role names a member and its lease key does not, so Kafka's default
 * key-hashing partitioner would split them across partitions. Both writers of a role
 * therefore choose the partition with this method, which is Kafka's own key
 * partitioning applied to the role name alone: murmur2 of the UTF-8 bytes, made
 * positive, modulo the partition count.
 */
public final class RolePartitioner {

    private RolePartitioner() {}

    /**
     * Returns the partition that holds every record of {@code role}.
     *
     * @throws IllegalArgumentException when {@code partitionCount} is not positive
     */
    public static int partitionFor(Role role, int partitionCount) {
        if (partitionCount <= 0) {
            throw new IllegalArgumentException("partitionCount must be positive, but is " + partitionCount);
        }
        return Utils.toPositive(Utils.murmur2(role.utf8())) % partitionCount;
    }
}
