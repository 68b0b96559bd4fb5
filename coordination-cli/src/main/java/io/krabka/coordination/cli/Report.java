package io.krabka.coordination.cli;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.time.Instant;
import java.util.List;

/**
 * What one run found, for either output format.
 *
 * @param bootstrapServers the cluster asked
 * @param topic the coordination topic
 * @param partitions its partition count
 * @param replicationFactor its smallest replica count over all partitions
 * @param readAt when the tool began describing the roles, on this machine's clock
 * @param roles the roles, by name
 * @param partitionsRead the partitions read for malformed records (all of them for list)
 * @param malformedCount how many records in those partitions the codec refused
 * @param malformed the first of them
 * @param warnings what an operator should look at
 */
record Report(
        String bootstrapServers,
        String topic,
        int partitions,
        int replicationFactor,
        Instant readAt,
        List<RoleView> roles,
        List<Integer> partitionsRead,
        long malformedCount,
        List<TopicReader.MalformedRecord> malformed,
        List<String> warnings) {

    Report {
        roles = List.copyOf(roles);
        partitionsRead = List.copyOf(partitionsRead);
        malformed = List.copyOf(malformed);
        warnings = List.copyOf(warnings);
    }

    /**
     * One role as the core's {@code CoordinationClient} describes it.
     *
     * @param role the role
     * @param status the core's view: the topic's fold plus the transaction coordinator's
     *     answer; null when the role could not be described ({@code problem} says why)
     * @param partition the role's partition, murmur2(role) % partitions
     * @param coordinatorAsked false when the cluster refused DescribeTransactions for the role:
     *     then {@code current} is unknown, not false
     * @param found whether the topic holds any record of the role
     * @param observedAt when the core's describe returned, on this machine's clock: the time
     *     left until the lease's deadline is counted from it
     * @param problem why the role could not be described, or null
     * @param holderUrl where the holder answers HTTP, as it advertises itself on
     *     {@code <topic>-members} (for routing requests to the leader); null when it advertises none
     */
    record RoleView(
            Role role,
            LeadershipStatus status,
            int partition,
            boolean coordinatorAsked,
            boolean found,
            Instant observedAt,
            String problem,
            String holderUrl) {

        RoleView(LeadershipStatus status, int partition, boolean coordinatorAsked, boolean found, Instant observedAt) {
            this(status.role(), status, partition, coordinatorAsked, found, observedAt, null, null);
        }

        RoleView(
                Role role,
                LeadershipStatus status,
                int partition,
                boolean coordinatorAsked,
                boolean found,
                Instant observedAt,
                String problem) {
            this(role, status, partition, coordinatorAsked, found, observedAt, problem, null);
        }

        /** This view, with where its holder answers. */
        RoleView withHolderUrl(String url) {
            return new RoleView(role, status, partition, coordinatorAsked, found, observedAt, problem, url);
        }

        /** A role the tool could not describe, for a reason of its own (not the cluster's): shown with the reason. */
        static RoleView unreadable(Role role, int partition, boolean found, Instant observedAt, String problem) {
            return new RoleView(role, null, partition, false, found, observedAt, problem);
        }
    }
}
