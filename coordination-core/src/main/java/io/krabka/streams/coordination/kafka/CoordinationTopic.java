package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the coordination topic when it is missing and refuses one that breaks the
 * guarantees. "Durable in a quorum before the dispatch" rests on these settings, not on
 * the client: compaction keeps every role's newest records (a delete policy would drop
 * registrations), and unclean leader election could reuse offsets, which are terms.
 *
 * <p>Size: one class, since creating the topic and refusing a bad one read the same
 * settings and must give the same errors for them.
 */
final class CoordinationTopic {

    private static final Logger log = LoggerFactory.getLogger(CoordinationTopic.class);

    private CoordinationTopic() {}

    /** Ensures the topic and returns its identity. */
    static TopicIdentity ensure(Admin admin, TopicSpec spec, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        TopicDescription description = describe(admin, spec, timeout);
        boolean justCreated = description == null;
        if (justCreated) {
            if (!spec.create()) {
                throw new TopicConfigurationException("the coordination topic " + spec.name()
                        + " does not exist and creating it is disabled: create it with " + spec.settingsToCreate()
                        + ", or enable creation (krabka.coordination.topic.create=true, TopicSpec.create)");
            }
            create(admin, spec, timeout);
        }
        // Each broker applies the metadata log on its own: a topic just created, here or by
        // another member, can be described by one broker while the next request, sent to
        // another, still gets UNKNOWN_TOPIC_OR_PARTITION. Wait until both answers name it.
        Config config;
        while (description == null || (config = describeConfig(admin, spec, timeout)) == null) {
            if (System.nanoTime() > deadline) {
                throw new TopicConfigurationException("the coordination topic " + spec.name()
                        + " did not appear in the metadata of every broker asked within " + timeout);
            }
            backOff(spec);
            if (description == null) {
                description = describe(admin, spec, timeout);
            }
        }
        check(spec, description, config);
        if (justCreated) {
            awaitLeaders(admin, spec, description, deadline);
        }
        return TopicIdentity.of(TopicIdentity.askClusterId(admin, timeout), description, timeout);
    }

    /**
     * Waits until the leader of every partition of a topic just created (here, or by another
     * member a moment before) has the partition's log, at most until {@code deadline}. Each
     * broker applies the metadata log on its own: a producer that learned a partition's
     * leader from another broker was answered NOT_LEADER_OR_FOLLOWER by a leader not leading
     * yet, and Kafka's producer logs each such retry at WARN ("retrying (2147483646 attempts
     * left)"), which a first start read as failures. Asked of each leader itself
     * (DescribeLogDirs), which answers quietly either way; the leader-routed requests
     * (ListOffsets) log an ERROR while the broker they ask for metadata lags. A member
     * without the ACL for it (Describe on the cluster) does not wait, and leaders that do
     * not all have their logs in time are one INFO line: the clients retry, as before.
     *
     * <p>Only a topic just created: at any other start a partition without a leader (a
     * broker down) must hold up the roles on it alone, not the member.
     */
    private static void awaitLeaders(Admin admin, TopicSpec spec, TopicDescription description, long deadline) {
        if (!mayDescribeLogDirs(admin, spec, deadline)) {
            return;
        }
        Set<TopicPartitionReplica> waiting = new HashSet<>();
        description.partitions().stream()
                .filter(partition -> partition.leader() != null)
                .forEach(partition -> waiting.add(new TopicPartitionReplica(
                        spec.name(), partition.partition(), partition.leader().id())));
        String why = "no time left";
        while (!waiting.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                admin.describeReplicaLogDirs(waiting, new DescribeReplicaLogDirsOptions().timeoutMs((int)
                                        Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))))
                        .all()
                        .get(left, TimeUnit.NANOSECONDS)
                        .forEach((replica, dir) -> {
                            if (dir.getCurrentReplicaLogDir() != null) {
                                waiting.remove(replica);
                            }
                        });
            } catch (ExecutionException e) {
                why = String.valueOf(e.getCause());
                break;
            } catch (java.util.concurrent.TimeoutException e) {
                break;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TopicConfigurationException(
                        "interrupted while waiting for the leaders of the coordination topic " + spec.name());
            }
            if (!waiting.isEmpty()) {
                backOff(spec);
            }
        }
        if (!waiting.isEmpty()) {
            log.info(
                    "{} of the leaders of the new coordination topic {} do not lead yet ({}): until they do, Kafka's clients"
                            + " retry their first writes there and log each retry at WARN",
                    waiting.size(),
                    spec.name(),
                    why);
        }
    }

    /**
     * Whether this member may describe the brokers' log directories (Describe on the
     * cluster). Kafka's admin client reports a refused DescribeLogDirs of some replicas as
     * replicas without a log, which would look like leaders that never lead.
     */
    private static boolean mayDescribeLogDirs(Admin admin, TopicSpec spec, long deadline) {
        long left = Math.max(1, deadline - System.nanoTime());
        try {
            Set<AclOperation> allowed = admin.describeCluster(new DescribeClusterOptions()
                            .includeAuthorizedOperations(true)
                            .timeoutMs((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))))
                    .authorizedOperations()
                    .get(left, TimeUnit.NANOSECONDS);
            if (allowed != null && (allowed.contains(AclOperation.DESCRIBE) || allowed.contains(AclOperation.ALL))) {
                return true;
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            log.debug(
                    "Could not learn whether this member may describe the brokers' log directories: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TopicConfigurationException(
                    "interrupted while waiting for the leaders of the coordination topic " + spec.name());
        }
        log.debug(
                "Not waiting for the leaders of the new coordination topic {}: this member may not describe the"
                        + " brokers' log directories (Describe on the cluster)",
                spec.name());
        return false;
    }

    private static void backOff(TopicSpec spec) {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TopicConfigurationException(
                    "interrupted while waiting for the coordination topic " + spec.name());
        }
    }

    /** The topic's {@code min.compaction.lag.ms}; zero when it cannot be read. */
    static Duration minCompactionLag(Admin admin, TopicSpec spec, Duration timeout) {
        try {
            Config config = describeConfig(admin, spec, timeout);
            String lag = config == null ? null : value(config, TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG);
            return lag == null ? Duration.ZERO : Duration.ofMillis(Long.parseLong(lag));
        } catch (RuntimeException e) {
            log.debug("Could not read min.compaction.lag.ms of topic {}: {}", spec.name(), e.toString());
            return Duration.ZERO;
        }
    }

    /**
     * The topic's identity as the cluster that answers reports it now; one that does not
     * {@linkplain TopicIdentity#exists() exist} when the topic is gone. The cluster id is
     * asked for in parallel with the describe: a check costs two small requests, no more time.
     */
    static TopicIdentity current(Admin admin, TopicSpec spec, Duration timeout) {
        KafkaFuture<String> clusterId = TopicIdentity.askClusterId(admin, timeout);
        return TopicIdentity.of(clusterId, describe(admin, spec, timeout), timeout);
    }

    private static @Nullable TopicDescription describe(Admin admin, TopicSpec spec, Duration timeout) {
        return nullWhileUnknown(
                Objects.requireNonNull(admin.describeTopics(Set.of(spec.name()))
                        .topicNameValues()
                        .get(spec.name())),
                "describing topic " + spec.name(),
                timeout);
    }

    private static @Nullable Config describeConfig(Admin admin, TopicSpec spec, Duration timeout) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        return nullWhileUnknown(
                Objects.requireNonNull(
                        admin.describeConfigs(List.of(resource)).values().get(resource)),
                "describing the configuration of topic " + spec.name(),
                timeout);
    }

    /** The answer, or null when the broker asked does not know the topic (yet). */
    private static <T> @Nullable T nullWhileUnknown(KafkaFuture<T> answer, String action, Duration timeout) {
        try {
            return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return null;
            }
            throw KafkaErrors.translate(action, e);
        } catch (Exception e) {
            throw KafkaErrors.translate(action, e);
        }
    }

    /**
     * The topic configuration {@link #create} gives a topic of {@code spec}; what
     * {@link TopicSpec#settingsToCreate()} tells an operator to set by hand must include it.
     */
    static Map<String, String> configs(TopicSpec spec) {
        return Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG,
                TopicConfig.CLEANUP_POLICY_COMPACT,
                // A lease record stays until compaction cannot be why a read misses it (CommitOutcome).
                TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG,
                Long.toString(TopicSpec.MIN_COMPACTION_LAG.toMillis()),
                TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
                "false",
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG,
                Integer.toString(spec.requiredMinInsyncReplicas()),
                // Lease records carry the lease clock's time; a release is anchored on it.
                TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG,
                "CreateTime");
    }

    /** Creates the topic with the settings the guarantees rest on; one that exists already is left alone. */
    static void create(Admin admin, TopicSpec spec, Duration timeout) {
        Map<String, String> configs = configs(spec);
        NewTopic topic = new NewTopic(spec.name(), spec.partitions(), spec.replicationFactor()).configs(configs);
        try {
            admin.createTopics(List.of(topic)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            log.info(
                    "Created coordination topic {} with {} partitions, replication {}, {}",
                    spec.name(),
                    spec.partitions(),
                    spec.replicationFactor(),
                    configs);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw refusal(spec, e.getCause())
                        .<CoordinationException>map(refused -> refused)
                        .orElseGet(() -> KafkaErrors.translate("creating topic " + spec.name(), e));
            }
        } catch (Exception e) {
            throw KafkaErrors.translate("creating topic " + spec.name(), e);
        }
    }

    /**
     * The cluster's refusal to create the topic as asked, named as the setting to fix: a
     * replication factor above the broker count (one broker, replication 3) is a mistake
     * in the configuration, not a cluster that does not answer, and retrying cannot heal it.
     */
    private static Optional<TopicConfigurationException> refusal(TopicSpec spec, @Nullable Throwable cause) {
        if (cause instanceof InvalidReplicationFactorException tooFewBrokers) {
            return Optional.of(new TopicConfigurationException("the cluster cannot create the coordination topic "
                    + spec.name() + " with replication factor " + spec.replicationFactor() + " ("
                    + tooFewBrokers.getMessage()
                    + "). Lower krabka.coordination.topic.replication-factor (TopicSpec.replicationFactor) to at most the"
                    + " number of brokers (1 only on a development cluster, with krabka.coordination.topic.allow-unsafe),"
                    + " or create the topic yourself"));
        }
        if (cause instanceof InvalidPartitionsException
                || cause instanceof InvalidConfigurationException
                || cause instanceof PolicyViolationException) {
            return Optional.of(new TopicConfigurationException("the cluster refused to create the coordination topic "
                    + spec.name() + " with " + spec.partitions() + " partitions and replication factor "
                    + spec.replicationFactor() + " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage()
                    + "). Check krabka.coordination.topic.* (TopicSpec) against the cluster's policy, or create the topic"
                    + " yourself"));
        }
        return Optional.empty();
    }

    private static void check(TopicSpec spec, TopicDescription description, Config config) {
        List<String> problems = safetyProblems(spec, description, config);
        if (!problems.isEmpty()) {
            String message = "the coordination topic " + spec.name() + " breaks the fencing guarantees: "
                    + String.join("; ", problems);
            if (!spec.allowUnsafe()) {
                throw new TopicConfigurationException(message + ". Fix the topic, or allow an unsafe topic on a"
                        + " development cluster" + (compacted(config) ? "" : autoCreated(spec)));
            }
            log.warn(
                    "{}. Accepted only because an unsafe topic is allowed: do not run production like this{}",
                    message,
                    compacted(config) ? "" : autoCreated(spec));
        }
        int partitions = description.partitions().size();
        if (partitions != spec.partitions()) {
            // Not a matter of durability but of identity: a role's partition is
            // murmur2(role) % count, so members that disagree on the count read different
            // partitions, challenge a live holder, and hand out smaller terms.
            String found = "the coordination topic " + spec.name() + " has " + partitions
                    + " partitions, but this member is configured for " + spec.partitions()
                    + " (krabka.coordination.topic.partitions)";
            // A topic a broker created is to be deleted, not adopted: no advice to use its count then.
            throw new TopicConfigurationException(
                    compacted(config)
                            ? found + ". Every member must use the topic's count: set it to " + partitions
                                    + " on every member (never alter the partition count of a coordination topic in"
                                    + " use)"
                            : found + ", and its cleanup.policy is not compact" + autoCreated(spec));
        }
    }

    private static boolean compacted(Config config) {
        return TopicConfig.CLEANUP_POLICY_COMPACT.equals(value(config, TopicConfig.CLEANUP_POLICY_CONFIG));
    }

    /**
     * This library creates the topic compacted: one that is not was most often created by a
     * broker with its defaults, when a member wrote to a cluster that lacked it (producers
     * always let the broker auto-create what they write to).
     */
    private static String autoCreated(TopicSpec spec) {
        return ". A topic this library creates is compacted: this one was most likely created by a broker with"
                + " auto.create.topics.enable=true when a member wrote to a cluster that lacked it (a cluster replaced"
                + " under running members). If it holds no terms that devices keep, delete it (kafka-topics.sh --delete"
                + " --topic " + spec.name() + "), set auto.create.topics.enable=false on the brokers, and start the"
                + " members again: they create it as it must be";
    }

    /**
     * What the topic's settings break of the guarantees now, as {@code setting=value (must
     * be ...)}; empty when it is safe, or when the topic is gone (the identity check says so).
     */
    static List<String> safetyProblems(Admin admin, TopicSpec spec, Duration timeout) {
        TopicDescription description = describe(admin, spec, timeout);
        Config config = description == null ? null : describeConfig(admin, spec, timeout);
        return description == null || config == null ? List.of() : safetyProblems(spec, description, config);
    }

    private static List<String> safetyProblems(TopicSpec spec, TopicDescription description, Config config) {
        List<String> problems = new ArrayList<>();
        String cleanup = value(config, TopicConfig.CLEANUP_POLICY_CONFIG);
        if (!TopicConfig.CLEANUP_POLICY_COMPACT.equals(cleanup)) {
            problems.add(TopicConfig.CLEANUP_POLICY_CONFIG + "=" + cleanup + " (must be compact)");
        }
        String unclean = value(config, TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG);
        if (!"false".equals(unclean)) {
            problems.add(TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG + "=" + unclean + " (must be false)");
        }
        int replicas = description.partitions().stream()
                .mapToInt(p -> p.replicas().size())
                .min()
                .orElse(0);
        if (replicas < spec.replicationFactor()) {
            problems.add("replication factor " + replicas + " (must be at least " + spec.replicationFactor() + ")");
        }
        String minInsync = value(config, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
        if (minInsync != null && Integer.parseInt(minInsync) < spec.requiredMinInsyncReplicas()) {
            problems.add(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG + "=" + minInsync + " (must be at least "
                    + spec.requiredMinInsyncReplicas() + ")");
        }
        return problems;
    }

    private static @Nullable String value(Config config, String name) {
        return config.get(name) == null ? null : config.get(name).value();
    }
}
