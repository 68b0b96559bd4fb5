package io.krabka.coordination.cli;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.MalformedRecordException;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Reads the coordination topic the way an operator's tool should: it describes the topic
 * (never creates it) and reads partitions from the beginning to their last stable offset,
 * {@code read_committed}, decoding each record with the core's {@link CoordinationCodec}.
 * That finds every role name (the core has no call that lists roles) and every malformed
 * record, which it counts and never fails on.
 */
final class TopicReader {

    /** How many malformed records a report lists one by one; it counts them all. */
    static final int MALFORMED_EXAMPLES = 20;

    private static final Duration POLL = Duration.ofMillis(200);

    private final ReadOnlyCluster cluster;
    private final String bootstrap;

    TopicReader(ReadOnlyCluster cluster, String bootstrap) {
        this.cluster = cluster;
        this.bootstrap = bootstrap;
    }

    /**
     * What the cluster says about the topic.
     *
     * @param name the topic
     * @param partitions its partition count
     * @param replicationFactor the smallest replica count of its partitions
     * @param settings the topic settings the fencing guarantees rest on, as the cluster reports them
     */
    record TopicFacts(String name, int partitions, int replicationFactor, Map<String, String> settings) {

        /** What breaks the guarantees, as the core's members check it (they refuse such a topic unless allowed). */
        List<String> unsafe() {
            List<String> problems = new ArrayList<>();
            String cleanup = settings.get(TopicConfig.CLEANUP_POLICY_CONFIG);
            if (!TopicConfig.CLEANUP_POLICY_COMPACT.equals(cleanup)) {
                problems.add(TopicConfig.CLEANUP_POLICY_CONFIG + "=" + cleanup + " (must be compact)");
            }
            String unclean = settings.get(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG);
            if (!"false".equals(unclean)) {
                problems.add(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG + "=" + unclean + " (must be false)");
            }
            if (replicationFactor < TopicSpec.DEFAULT_REPLICATION_FACTOR) {
                problems.add("replication factor " + replicationFactor + " (production needs "
                        + TopicSpec.DEFAULT_REPLICATION_FACTOR + ")");
            }
            String minInsync = settings.get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
            if (replicationFactor >= 3 && minInsync != null && Integer.parseInt(minInsync) < 2) {
                problems.add(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG + "=" + minInsync + " (must be at least 2)");
            }
            return problems;
        }
    }

    private static final List<String> SETTINGS = List.of(
            TopicConfig.CLEANUP_POLICY_CONFIG,
            TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
            TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);

    /** One record the codec refused. */
    record MalformedRecord(int partition, long offset, String problem, String detail) {}

    /**
     * What a read of some partitions found.
     *
     * @param roles every role with a well-formed key, by name, with the partitions its records are in
     * @param records how many records were read
     * @param malformedCount how many of them the codec refused
     * @param malformed the first {@value #MALFORMED_EXAMPLES} of those
     * @param readUpTo per partition, the offset read up to (its last stable offset when the read began)
     */
    record Scan(
            SortedMap<Role, SortedSet<Integer>> roles,
            long records,
            long malformedCount,
            List<MalformedRecord> malformed,
            SortedMap<Integer, Long> readUpTo) {}

    /**
     * Describes the topic.
     *
     * @throws CliException when it does not exist, or the cluster does not answer
     */
    TopicFacts describe(String topic) {
        String operation = "describing topic " + topic;
        try {
            TopicDescription description = cluster.admin()
                    .describeTopics(Set.of(topic))
                    .topicNameValues()
                    .get(topic)
                    .get(cluster.timeout().toMillis(), TimeUnit.MILLISECONDS);
            int replicas = description.partitions().stream()
                    .mapToInt(p -> p.replicas().size())
                    .min()
                    .orElse(0);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = cluster.admin()
                    .describeConfigs(List.of(resource))
                    .values()
                    .get(resource)
                    .get(cluster.timeout().toMillis(), TimeUnit.MILLISECONDS);
            Map<String, String> settings = new TreeMap<>();
            for (String name : SETTINGS) {
                ConfigEntry entry = config.get(name);
                if (entry != null && entry.value() != null) {
                    settings.put(name, entry.value());
                }
            }
            return new TopicFacts(
                    topic, description.partitions().size(), replicas, Collections.unmodifiableMap(settings));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                throw new CliException(
                        CoordinationCli.EXIT_FAILED,
                        "the coordination topic " + topic + " does not exist on the"
                                + " Kafka cluster at " + bootstrap
                                + ". This tool never creates it: the members create it when they"
                                + " first start (or an operator does, compacted). Check --topic and --bootstrap-server");
            }
            throw Failures.of(operation, e, bootstrap, cluster.timeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.of(operation, e, bootstrap, cluster.timeout());
        } catch (Exception e) {
            throw Failures.of(operation, e, bootstrap, cluster.timeout());
        }
    }

    /**
     * Reads {@code partitions} of {@code topic} from the beginning to the last stable
     * offset each had when the read began. Gives up when no partition moved for the
     * operation timeout (a partition without a leader, say).
     *
     * @param partitionCount the topic's partition count, to check that each role's records
     *     are in the partition its name hashes to
     * @param warnings where a record of a role in another partition is reported
     */
    Scan scan(String topic, int partitionCount, List<Integer> partitions, List<String> warnings) {
        String operation =
                "reading partition" + (partitions.size() == 1 ? " " : "s ") + partitions + " of topic " + topic;
        Duration timeout = cluster.timeout();
        SortedMap<Role, SortedSet<Integer>> roles = new TreeMap<>(Comparator.comparing(Role::name));
        List<MalformedRecord> malformed = new ArrayList<>();
        long malformedCount = 0;
        long records = 0;
        List<TopicPartition> assigned =
                partitions.stream().map(p -> new TopicPartition(topic, p)).toList();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.newReader("scanner")) {
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            // read_committed: the end offsets are the last stable offsets.
            Map<TopicPartition, Long> ends = consumer.endOffsets(assigned, timeout);
            Map<TopicPartition, Long> positions = new HashMap<>();
            Set<TopicPartition> pending = new HashSet<>();
            for (TopicPartition partition : assigned) {
                long position = consumer.position(partition, timeout);
                positions.put(partition, position);
                if (position < ends.get(partition)) {
                    pending.add(partition);
                } else {
                    consumer.pause(Set.of(partition));
                }
            }
            long lastProgress = System.nanoTime();
            while (!pending.isEmpty()) {
                boolean progress = false;
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    TopicPartition partition = new TopicPartition(record.topic(), record.partition());
                    if (record.offset() >= ends.get(partition)) {
                        continue;
                    }
                    progress = true;
                    records++;
                    Optional<MalformedRecord> refused = decode(record, partitionCount, roles, warnings);
                    if (refused.isPresent()) {
                        if (malformedCount++ < MALFORMED_EXAMPLES) {
                            malformed.add(refused.get());
                        }
                    }
                }
                for (TopicPartition partition : List.copyOf(pending)) {
                    long position = consumer.position(partition, timeout);
                    if (position > positions.get(partition)) {
                        progress = true;
                        positions.put(partition, position);
                    }
                    if (position >= ends.get(partition)) {
                        pending.remove(partition);
                        consumer.pause(Set.of(partition));
                    }
                }
                if (progress) {
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > timeout.toNanos()) {
                    throw new CliException(
                            CoordinationCli.EXIT_FAILED,
                            operation + " made no progress within "
                                    + Failures.text(timeout) + ": stuck at " + stuck(pending, positions, ends)
                                    + ". Does each partition have a leader? --timeout sets the wait");
                }
            }
            SortedMap<Integer, Long> readUpTo = new TreeMap<>();
            ends.forEach((partition, end) -> readUpTo.put(partition.partition(), end));
            return new Scan(roles, records, malformedCount, List.copyOf(malformed), readUpTo);
        } catch (RuntimeException e) {
            throw Failures.of(operation, e, bootstrap, timeout);
        }
    }

    private static String stuck(
            Set<TopicPartition> pending, Map<TopicPartition, Long> positions, Map<TopicPartition, Long> ends) {
        List<String> each = new ArrayList<>();
        for (TopicPartition partition : pending) {
            each.add("partition " + partition.partition() + " at offset " + positions.get(partition) + " of "
                    + ends.get(partition));
        }
        each.sort(Comparator.naturalOrder());
        return String.join(", ", each);
    }

    /** Notes the record's role, or returns why the codec refused it. */
    private static Optional<MalformedRecord> decode(
            ConsumerRecord<byte[], byte[]> record,
            int partitionCount,
            SortedMap<Role, SortedSet<Integer>> roles,
            List<String> warnings) {
        CoordinationKey key;
        try {
            key = CoordinationCodec.decodeKey(record.key());
        } catch (MalformedRecordException e) {
            return Optional.of(refused(record, e));
        }
        Role role = key.role();
        if (roles.computeIfAbsent(role, r -> new TreeSet<>()).add(record.partition())) {
            int expected = RolePartitioner.partitionFor(role, partitionCount);
            if (expected != record.partition()) {
                warnings.add(
                        "records of role " + role.name() + " are in partition " + record.partition() + ", but with "
                                + partitionCount + " partitions the role's partition is " + expected
                                + ": members read only that"
                                + " one, so these records are ignored (written by a member configured with another partition count?)");
            }
        }
        try {
            Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), record.value());
            Optional<MemberId> registrant = key.registrant();
            if (value.isPresent()
                    && registrant.isPresent()
                    && !value.get().member().equals(registrant.get())) {
                // The fold's own check (RoleStateBuilder): members skip such a registration too.
                return Optional.of(new MalformedRecord(
                        record.partition(),
                        record.offset(),
                        MalformedRecordException.Problem.MEMBER_MISMATCH.code(),
                        "the registration key names " + registrant.get().value() + " but its value names "
                                + value.get().member().value()));
            }
            return Optional.empty();
        } catch (MalformedRecordException e) {
            return Optional.of(refused(record, e));
        }
    }

    private static MalformedRecord refused(ConsumerRecord<byte[], byte[]> record, MalformedRecordException e) {
        return new MalformedRecord(
                record.partition(), record.offset(), e.problem().code(), e.getMessage());
    }
}
