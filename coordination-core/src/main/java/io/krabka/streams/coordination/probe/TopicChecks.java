package io.krabka.streams.coordination.probe;

import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * The read-only checks of the coordination topic's settings and of the brokers'
 * transaction settings. "Durable in a quorum" rests on them. On a topic allowed to be
 * unsafe ({@link TopicSpec#allowUnsafe()}, development clusters) what a one-broker cluster
 * cannot avoid (replication 1, {@code min.insync.replicas} 1, a transaction state log of
 * one replica) is a WARN instead of a FAIL; a delete policy and unclean leader election,
 * which no development cluster needs, FAIL all the same.
 */
final class TopicChecks {

    private static final String REMOTE_STORAGE = "remote.storage.enable";
    private static final String QUORUM =
            "Durable in a quorum: a grant or guarded write acknowledged by the brokers survives"
                    + " the loss of any one of them";

    private final Admin admin;
    private final TopicSpec spec;
    private final Duration timeout;
    private final @Nullable Duration leaseDuration;

    TopicChecks(Admin admin, TopicSpec spec, Duration timeout, @Nullable Duration leaseDuration) {
        this.admin = admin;
        this.spec = spec;
        this.timeout = timeout;
        this.leaseDuration = leaseDuration;
    }

    List<ProbeCheck> run(Collection<Node> brokers) {
        List<ProbeCheck> checks = new ArrayList<>(topic());
        checks.addAll(brokerSettings(brokers));
        return checks;
    }

    private List<ProbeCheck> topic() {
        TopicDescription description;
        Config config;
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        try {
            description = ProbeCalls.await(
                    Objects.requireNonNull(admin.describeTopics(Set.of(spec.name()))
                            .topicNameValues()
                            .get(spec.name())),
                    timeout);
            config = ProbeCalls.await(
                    Objects.requireNonNull(
                            admin.describeConfigs(List.of(resource)).values().get(resource)),
                    timeout);
        } catch (RuntimeException e) {
            if (ProbeCalls.is(e, UnknownTopicOrPartitionException.class)) {
                return List.of(missing());
            }
            return List.of(ProbeCheck.warn(
                    "topic",
                    "the coordination topic " + spec.name() + " could not be described (" + ProbeCalls.describe(e)
                            + ")",
                    "Its settings are not checked: the members check them again when they"
                            + " start and refuse an unsafe topic",
                    ProbeCalls.denied(e) ? "grant Describe and DescribeConfigs on topic " + spec.name() : null));
        }
        List<ProbeCheck> checks = new ArrayList<>();
        String name = spec.name();
        String cleanup = value(config, TopicConfig.CLEANUP_POLICY_CONFIG);
        checks.add(
                TopicConfig.CLEANUP_POLICY_COMPACT.equals(cleanup)
                        ? ProbeCheck.pass(
                                "topic.cleanup-policy",
                                name + ": cleanup.policy=compact",
                                "Every role's newest registrations and lease stay in the log")
                        : ProbeCheck.fail(
                                "topic.cleanup-policy",
                                name + ": cleanup.policy=" + cleanup,
                                "Retention can delete a live registration or the lease that granted a term",
                                // The library creates the topic compacted: a delete policy is most often a
                                // broker's default, from a member that wrote before the topic existed.
                                "if a broker created it on first use (auto.create.topics.enable=true, for example"
                                        + " a cluster replaced under running members) and it holds no terms devices"
                                        + " keep: kafka-topics.sh --delete --topic " + name
                                        + ", set auto.create.topics.enable=false on the brokers and start the"
                                        + " members, which create it as it must be; otherwise: kafka-configs.sh"
                                        + " --alter --entity-type topics --entity-name " + name
                                        + " --add-config cleanup.policy=compact"));
        int replicas = description.partitions().stream()
                .mapToInt(p -> p.replicas().size())
                .min()
                .orElse(0);
        checks.add(
                replicas >= 3
                        ? ProbeCheck.pass("topic.replication-factor", name + ": replication factor " + replicas, QUORUM)
                        : ProbeCheck.unsafe(
                                spec.allowUnsafe(),
                                "topic.replication-factor",
                                name + ": replication factor " + replicas,
                                "A grant or guarded write acknowledged by one broker can be lost with it",
                                "re-create the topic with replication factor 3 or more (kafka-reassign-partitions.sh adds replicas)"));
        String minInsync = value(config, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
        int effectiveMinInsync = minInsync == null ? 1 : Integer.parseInt(minInsync);
        String source = source(config, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
        if (effectiveMinInsync > replicas) {
            checks.add(ProbeCheck.fail(
                    "topic.min-insync-replicas",
                    name + ": effective min.insync.replicas=" + minInsync + source + " is above its " + replicas
                            + " replicas",
                    "No write to the topic can be acknowledged: no member can" + " register or lead",
                    "set min.insync.replicas of topic " + name + " to at most " + replicas));
        } else {
            checks.add(
                    effectiveMinInsync >= 2
                            ? ProbeCheck.pass(
                                    "topic.min-insync-replicas",
                                    name + ": effective min.insync.replicas=" + minInsync + source,
                                    "An acknowledged write is on at least two brokers")
                            : ProbeCheck.unsafe(
                                    spec.allowUnsafe(),
                                    "topic.min-insync-replicas",
                                    name + ": effective" + " min.insync.replicas="
                                            + (minInsync == null ? "1 (not set)" : minInsync + source),
                                    "An acks=all write is acknowledged by a single broker, so a grant or guarded write can be lost with it",
                                    "kafka-configs.sh --alter --entity-type topics --entity-name " + name
                                            + " --add-config min.insync.replicas=2"));
        }
        String unclean = value(config, TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG);
        checks.add(
                "false".equals(unclean)
                        ? ProbeCheck.pass(
                                "topic.unclean-leader-election",
                                name + ": unclean.leader.election.enable=false",
                                "Offsets, which are the terms of grants, are never reused")
                        : ProbeCheck.fail(
                                "topic.unclean-leader-election",
                                name + ": unclean.leader.election.enable=" + unclean,
                                "An out-of-sync replica can become leader and"
                                        + " reuse offsets: two grants could carry the same term, and acknowledged records vanish",
                                "kafka-configs.sh --alter --entity-type topics --entity-name " + name
                                        + " --add-config unclean.leader.election.enable=false"));
        checks.add(
                "true".equals(value(config, REMOTE_STORAGE))
                        ? ProbeCheck.warn(
                                "topic.remote-storage",
                                name + ": remote.storage.enable=true",
                                "Older segments live in tiered"
                                        + " storage, which this library was not verified on; reads of old registrations may be slow",
                                "set remote.storage.enable=false on topic " + name)
                        : ProbeCheck.pass(
                                "topic.remote-storage",
                                name + ": no tiered storage",
                                "Every segment is on the brokers"));
        int partitions = description.partitions().size();
        checks.add(
                partitions == spec.partitions()
                        ? ProbeCheck.pass(
                                "topic.partitions",
                                name + ": " + partitions + " partitions, as configured",
                                "Every member reads a role in the same partition")
                        : ProbeCheck.fail(
                                "topic.partitions",
                                name + ": " + partitions + " partitions, but " + spec.partitions() + " configured",
                                "Members that disagree on the count read a role in different partitions and grant"
                                        + " it twice",
                                TopicConfig.CLEANUP_POLICY_COMPACT.equals(cleanup)
                                        ? "set krabka.coordination.topic.partitions (TopicSpec.partitions) to "
                                                + partitions
                                        : "see topic.cleanup-policy first: a topic a broker created on first use"
                                                + " has the broker's partition count; otherwise set"
                                                + " krabka.coordination.topic.partitions (TopicSpec.partitions) to "
                                                + partitions));
        return checks;
    }

    private ProbeCheck missing() {
        if (!spec.create()) {
            // Not a broken guarantee: the members refuse to contend (health DOWN) until an operator creates it.
            return ProbeCheck.warn(
                    "topic",
                    "the coordination topic " + spec.name() + " does not exist and creating it is" + " disabled",
                    "No member can contend until it exists; its settings are not checked",
                    "create it with " + spec.settingsToCreate()
                            + ", or enable creation (krabka.coordination.topic.create=true, TopicSpec.create)");
        }
        ProbeCheck created = ProbeCheck.pass(
                "topic",
                "the coordination topic " + spec.name() + " does not exist yet",
                "The first member creates it compacted, with replication factor " + spec.replicationFactor()
                        + ", min.insync.replicas " + spec.requiredMinInsyncReplicas()
                        + " and unclean leader election off");
        return spec.replicationFactor() >= 3
                ? created
                : ProbeCheck.unsafe(
                        spec.allowUnsafe(),
                        "topic",
                        created.finding() + ", to be created with replication factor " + spec.replicationFactor(),
                        "A grant acknowledged by one broker can" + " be lost with it",
                        "set krabka.coordination.topic.replication-factor (TopicSpec.replicationFactor) to 3");
    }

    /** The transaction coordinator's settings, from one broker's configuration; a denied read is a WARN. */
    private List<ProbeCheck> brokerSettings(Collection<Node> brokers) {
        if (brokers.isEmpty()) {
            return List.of(ProbeCheck.warn(
                    "broker.transaction-settings",
                    "the cluster named no broker",
                    "The transaction coordinator's settings are not checked",
                    null));
        }
        Node broker = brokers.iterator().next();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, broker.idString());
        Config config;
        try {
            config = ProbeCalls.await(
                    Objects.requireNonNull(
                            admin.describeConfigs(List.of(resource)).values().get(resource)),
                    timeout);
        } catch (RuntimeException e) {
            return List.of(ProbeCheck.warn(
                    "broker.transaction-settings",
                    "the configuration of broker " + broker.id() + " could not be read (" + ProbeCalls.describe(e)
                            + ")",
                    "The transaction state log's replication and the"
                            + " transaction timeouts are not checked (managed services often hide them)",
                    ProbeCalls.denied(e)
                            ? "grant DescribeConfigs on the cluster, or check them with the provider"
                            : null));
        }
        List<ProbeCheck> checks = new ArrayList<>();
        String replication = value(config, "transaction.state.log.replication.factor");
        String minIsr = value(config, "transaction.state.log.min.isr");
        String finding = "broker " + broker.id() + ": transaction.state.log.replication.factor=" + replication
                + ", transaction.state.log.min.isr=" + minIsr;
        boolean safe = replication != null
                && minIsr != null
                && Integer.parseInt(replication) >= 3
                && Integer.parseInt(minIsr) >= 2;
        checks.add(
                safe
                        ? ProbeCheck.pass(
                                "broker.transaction-state-log",
                                finding,
                                "Producer ids, epochs and transaction" + " outcomes are durable in a quorum")
                        : ProbeCheck.unsafe(
                                spec.allowUnsafe(),
                                "broker.transaction-state-log",
                                finding,
                                "Losing one broker can lose"
                                        + " the coordinator's record of an epoch: a fenced holder's epoch could be handed out again",
                                "set transaction.state.log.replication.factor=3 and transaction.state.log.min.isr=2 before the"
                                        + " cluster's first transaction"));
        String maxTimeout = value(config, "transaction.max.timeout.ms");
        String expiration = value(config, "transactional.id.expiration.ms");
        String timeouts = "broker " + broker.id() + ": transaction.max.timeout.ms=" + maxTimeout
                + ", transactional.id.expiration.ms=" + expiration;
        if (leaseDuration != null && maxTimeout != null && leaseDuration.toMillis() > Long.parseLong(maxTimeout)) {
            checks.add(ProbeCheck.fail(
                    "broker.transaction-timeouts",
                    timeouts + "; the lease is " + leaseDuration.toMillis() + " ms",
                    "The brokers refuse a role producer whose transaction timeout (the lease) is longer: no member"
                            + " can lead",
                    "lower krabka.coordination.lease.duration (LeaseConfig.duration) or raise"
                            + " transaction.max.timeout.ms on every broker"));
        } else {
            checks.add(ProbeCheck.pass(
                    "broker.transaction-timeouts",
                    timeouts,
                    "A lease up to transaction.max.timeout.ms is"
                            + " accepted; a role idle longer than transactional.id.expiration.ms gets a new producer id, which the"
                            + " terms (offsets) do not depend on"));
        }
        return checks;
    }

    private static @Nullable String value(Config config, String name) {
        ConfigEntry entry = config.get(name);
        return entry == null ? null : entry.value();
    }

    /** Where an effective value comes from, when not the topic itself: " (broker default)". */
    private static String source(Config config, String name) {
        ConfigEntry entry = config.get(name);
        if (entry == null || entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
            return "";
        }
        return switch (entry.source()) {
            case DEFAULT_CONFIG -> " (Kafka's default)";
            case STATIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, DYNAMIC_BROKER_CONFIG ->
                " (the brokers' setting)";
            default -> "";
        };
    }
}
