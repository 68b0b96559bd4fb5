package io.krabka.coordination.cli;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.members.MemberAddressBook;
import io.krabka.streams.coordination.members.MemberAddressCodec;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;

/**
 * The two commands. The topic and every role are read through the core: the role names
 * come from the codec ({@link TopicReader}), each role's view from
 * {@link CoordinationClient#describe}, which reads the role's partition and asks the
 * transaction coordinator, and which joins no group and takes no epoch.
 */
final class Inspection {

    private final ReadOnlyCluster cluster;
    private final SharedOptions options;
    private final String bootstrap;
    private final TopicReader reader;

    Inspection(ReadOnlyCluster cluster, SharedOptions options, String bootstrap) {
        this.cluster = cluster;
        this.options = options;
        this.bootstrap = bootstrap;
        this.reader = new TopicReader(cluster, bootstrap);
    }

    /** Connects with read-only clients and runs one command: {@link #list} or {@link #describe}. */
    static Report read(SharedOptions options, Function<Inspection, Report> command) {
        Map<String, Object> connection = options.connection();
        try (ReadOnlyCluster cluster = new ReadOnlyCluster(connection, options.timeout())) {
            return command.apply(new Inspection(cluster, options, options.bootstrap()));
        }
    }

    /** Every role that has a record in the topic. */
    Report list() {
        TopicReader.TopicFacts topic = checkedTopic();
        List<String> warnings = unsafe(topic);
        List<Integer> all = IntStream.range(0, topic.partitions()).boxed().toList();
        TopicReader.Scan scan = reader.scan(topic.name(), topic.partitions(), all, warnings);
        Instant readAt = Instant.now();
        List<Report.RoleView> roles = new ArrayList<>();
        try (CoordinationClient client = new CoordinationClient(cluster.transport(spec(topic)))) {
            for (Role role : scan.roles().keySet()) {
                roles.add(view(client, role, topic, true, warnings));
            }
        }
        return new Report(
                bootstrap,
                topic.name(),
                topic.partitions(),
                topic.replicationFactor(),
                readAt,
                roles,
                all,
                scan.malformedCount(),
                scan.malformed(),
                warnings);
    }

    /** One role, whether or not the topic holds a record of it. */
    Report describe(Role role) {
        TopicReader.TopicFacts topic = checkedTopic();
        List<String> warnings = unsafe(topic);
        int partition = RolePartitioner.partitionFor(role, topic.partitions());
        TopicReader.Scan scan = reader.scan(topic.name(), topic.partitions(), List.of(partition), warnings);
        Instant readAt = Instant.now();
        Report.RoleView view;
        try (CoordinationClient client = new CoordinationClient(cluster.transport(spec(topic)))) {
            view = view(client, role, topic, scan.roles().containsKey(role), warnings);
        }
        view = withHolderUrl(view, topic, warnings);
        return new Report(
                bootstrap,
                topic.name(),
                topic.partitions(),
                topic.replicationFactor(),
                readAt,
                List.of(view),
                List.of(partition),
                scan.malformedCount(),
                scan.malformed(),
                warnings);
    }

    /**
     * The view with the URL its holder advertises on {@code <topic>-members}, when it
     * advertises one. That topic is optional (only members that route write it): a failure
     * to read it is a warning, never fatal.
     */
    private Report.RoleView withHolderUrl(Report.RoleView view, TopicReader.TopicFacts topic, List<String> warnings) {
        if (view.status() == null || view.status().holder().isEmpty()) {
            return view;
        }
        String members = MemberAddressCodec.topicFor(topic.name());
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.newReader("members")) {
            MemberAddress address = MemberAddressBook.readOnce(consumer, members, cluster.timeout())
                    .get(view.status().holder().get());
            return address == null ? view : view.withHolderUrl(address.url());
        } catch (CoordinationException | KafkaException e) {
            warnings.add("could not read the member addresses on " + members + ": " + e.getMessage());
            return view;
        }
    }

    /**
     * The topic, when its partition count is the one the members are configured with. A
     * role's partition is murmur2(role) % count: with another count, the tool would look
     * for a role in a partition its members never write.
     */
    private TopicReader.TopicFacts checkedTopic() {
        TopicReader.TopicFacts topic = reader.describe(options.topic());
        if (topic.partitions() != options.partitions()) {
            throw new CliException(
                    CoordinationCli.EXIT_FAILED,
                    "the coordination topic " + topic.name() + " has "
                            + topic.partitions() + " partitions, but --partitions is " + options.partitions()
                            + ". A role's partition"
                            + " is murmur2(role) % partitions, and members refuse a topic whose count differs from theirs"
                            + " (krabka.coordination.topic.partitions, TopicSpec.partitions): pass --partitions "
                            + topic.partitions()
                            + " if that is what the members are configured with");
        }
        return topic;
    }

    private static List<String> unsafe(TopicReader.TopicFacts topic) {
        List<String> warnings = new ArrayList<>();
        List<String> problems = topic.unsafe();
        if (!problems.isEmpty()) {
            warnings.add("the coordination topic " + topic.name() + " breaks the fencing guarantees: "
                    + String.join("; ", problems)
                    + ". Members accept it only with allow-unsafe (TopicSpec.allowUnsafe): development clusters only");
        }
        return warnings;
    }

    /**
     * The spec the core's transport checks the topic against: never created; the topic's
     * own replication factor and safety settings accepted, since a viewer must show an
     * unsafe development topic too (members are the ones that refuse it).
     */
    private static TopicSpec spec(TopicReader.TopicFacts topic) {
        return new TopicSpec(
                topic.name(), topic.partitions(), (short) Math.max(1, topic.replicationFactor()), false, true);
    }

    private Report.RoleView view(
            CoordinationClient client, Role role, TopicReader.TopicFacts topic, boolean found, List<String> warnings) {
        int partition = RolePartitioner.partitionFor(role, topic.partitions());
        String operation = "describing role " + role.name();
        try {
            try {
                LeadershipStatus described = client.describe(role);
                return new Report.RoleView(described, partition, true, found, Instant.now());
            } catch (CoordinationAuthorizationException refused) {
                // Reading the topic may still be allowed: show the lease without the coordinator's word.
                warnings.add("not allowed to describe the transactional id " + role.name()
                        + " (DescribeTransactions): current is"
                        + " unknown for that role; grant Describe on TransactionalId " + role.name() + " to know it");
                LeadershipStatus observed = client.observe(role, Duration.ZERO);
                return new Report.RoleView(observed, partition, false, found, Instant.now());
            }
        } catch (CoordinationException | KafkaException e) {
            throw Failures.of(operation, e, bootstrap, cluster.timeout());
        } catch (RuntimeException e) {
            if (Failures.find(e, InterruptedException.class, InterruptException.class) != null) {
                throw Failures.of(operation, e, bootstrap, cluster.timeout());
            }
            // Not the cluster failing but this role's records (or a bug): the other roles are still shown.
            return Report.RoleView.unreadable(role, partition, found, Instant.now(), operation + " failed: " + e);
        }
    }
}
