package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordination topic as this member pinned it on first use: it ensures the topic
 * then, and checks on later operations that it is still that topic, on the same cluster.
 */
final class PinnedTopic {

    // The transport's logger: operators and tests filter on its name.
    private static final Logger log = LoggerFactory.getLogger(KafkaCoordinationTransport.class);

    /** How often a member checks that the topic it pinned is still the same topic. */
    static final Duration IDENTITY_CHECK_INTERVAL = Duration.ofSeconds(5);

    /**
     * How often a member checks that the topic still keeps the guarantees it was accepted
     * for (cleanup policy, unclean election, replicas, min.insync.replicas): an operator can
     * alter them while members run.
     */
    static final Duration SAFETY_CHECK_INTERVAL = Duration.ofSeconds(15);

    private static final String TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms";

    private final Admin admin;
    private final TopicSpec topic;
    private final Duration timeout;
    // The role producers' transaction.timeout.ms, when the transport built them itself.
    private final @Nullable Duration transactionTimeout;
    private volatile int partitionCount;
    // The topic this member pinned on first use, when it last checked it is still that
    // topic, and why it no longer is (then every operation refuses: sticky on purpose).
    private volatile @Nullable TopicIdentity pinned;
    private volatile long identityCheckedAt;
    private volatile @Nullable CoordinationConfigurationException changed;
    private volatile boolean missingOnce;
    private volatile long safetyCheckedAt;
    // The topic's min.compaction.lag.ms as read when it was pinned; zero until then.
    private volatile Duration minCompactionLag = Duration.ZERO;
    // What the topic's settings break now, found while running; null while it is safe.
    private volatile @Nullable TopicConfigurationException unsafe;

    PinnedTopic(Admin admin, TopicSpec topic, Duration timeout, @Nullable Duration transactionTimeout) {
        this.admin = admin;
        this.topic = topic;
        this.timeout = timeout;
        this.transactionTimeout = transactionTimeout;
    }

    /** The partition count, ensuring and pinning the topic on first use. */
    int partitionCount() {
        requireUnchanged();
        int count = partitionCount;
        if (count == 0) {
            synchronized (this) {
                if (partitionCount == 0) {
                    checkTransactionTimeout();
                    pinned = CoordinationTopic.ensure(admin, topic, timeout);
                    identityCheckedAt = System.nanoTime();
                    safetyCheckedAt = identityCheckedAt;
                    partitionCount = pinned.partitions();
                    minCompactionLag = CoordinationTopic.minCompactionLag(admin, topic, timeout);
                    if (minCompactionLag.compareTo(TopicSpec.MIN_COMPACTION_LAG) < 0) {
                        log.info(
                                "The coordination topic {} has min.compaction.lag.ms={}: a deposed holder's write whose"
                                        + " commit was in flight may be reported as of unknown outcome rather than fenced. Set it"
                                        + " to {} or more (a topic this library creates has it)",
                                topic.name(),
                                minCompactionLag.toMillis(),
                                TopicSpec.MIN_COMPACTION_LAG.toMillis());
                    }
                }
                count = partitionCount;
            }
        }
        return count;
    }

    /** The topic's min.compaction.lag.ms as read when it was pinned; zero before. */
    Duration minCompactionLag() {
        return minCompactionLag;
    }

    /** The count pinned, or 0 before the first use and once the topic changed; never a lookup of its own. */
    int pinnedCount() {
        return changed == null ? partitionCount : 0;
    }

    TopicPartition partitionOf(Role role) {
        return new TopicPartition(topic.name(), RolePartitioner.partitionFor(role, partitionCount()));
    }

    /**
     * Refuses, on first use, a lease longer than the brokers let a transaction last:
     * every InitProducerId would fail, but a standby would only learn it when it
     * challenges. A member that may not describe the brokers' configuration (an ACL)
     * skips the check and learns it from its first InitProducerId instead.
     */
    private void checkTransactionTimeout() {
        Duration wanted = transactionTimeout;
        if (wanted == null) {
            return;
        }
        try {
            Collection<Node> nodes = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<ConfigResource> brokers = nodes.stream()
                    .map(node -> new ConfigResource(ConfigResource.Type.BROKER, node.idString()))
                    .toList();
            // One request for every broker's configuration.
            Map<ConfigResource, Config> configs =
                    admin.describeConfigs(brokers).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            for (Map.Entry<ConfigResource, Config> broker : configs.entrySet()) {
                ConfigEntry maximum = broker.getValue().get(TRANSACTION_MAX_TIMEOUT);
                if (maximum != null && maximum.value() != null && Long.parseLong(maximum.value()) < wanted.toMillis()) {
                    throw new CoordinationConfigurationException("the lease duration " + wanted
                            + " is longer than broker "
                            + broker.getKey().name() + "'s " + TRANSACTION_MAX_TIMEOUT + " (" + maximum.value()
                            + " ms): every"
                            + " InitProducerId of a role would be refused. Lower krabka.coordination.lease.duration"
                            + " (LeaseConfig.duration) or raise " + TRANSACTION_MAX_TIMEOUT + " on every broker");
                }
            }
        } catch (CoordinationConfigurationException tooLong) {
            throw tooLong;
        } catch (Exception e) {
            CoordinationException translated = KafkaErrors.translate("describing the brokers' configuration", e);
            if (!(translated instanceof CoordinationAuthorizationException)) {
                throw translated;
            }
            log.debug(
                    "Not allowed to describe the brokers' {}; the first InitProducerId will tell",
                    TRANSACTION_MAX_TIMEOUT);
        }
    }

    /**
     * Checks, at most every {@link #IDENTITY_CHECK_INTERVAL}, that the topic is still the
     * one pinned on first use, on the cluster it was pinned on. Offsets are terms and a
     * role's partition follows from the count: a topic deleted and re-created (by an
     * operator, or by auto-creation after a broker lost its data) restarts terms at 0, and
     * altered partitions move roles. Another cluster behind the same address (a
     * disaster-recovery switch, a DNS name or proxy pointed elsewhere) has terms and
     * producer epochs of its own, which Kafka's clients do not tell apart: they connect to
     * it and go on. From then on every operation refuses, so this member challenges no one.
     */
    void checkIdentity() {
        checkIdentity(IDENTITY_CHECK_INTERVAL);
    }

    /**
     * As {@link #checkIdentity()}, when the last check is older than {@code maxAge}: before a
     * challenge, whose grant a topic altered under it would make a term no device can trust.
     */
    void checkIdentity(Duration maxAge) {
        requireUnchanged();
        TopicIdentity expected = pinned;
        if (expected == null || System.nanoTime() - identityCheckedAt < maxAge.toNanos()) {
            return;
        }
        identityCheckedAt = System.nanoTime();
        TopicIdentity now = CoordinationTopic.current(admin, topic, timeout);
        if (now.otherClusterThan(expected)) {
            // No lagging broker of the same cluster answers with another id: at once.
            changed = otherCluster(expected, now);
            throw changed;
        }
        if (now.sameTopicAs(expected)) {
            missingOnce = false;
            checkSafety();
            return;
        }
        if (!now.exists() && !missingOnce) {
            // One broker's metadata may lag; a topic is gone when two checks say so.
            missingOnce = true;
            return;
        }
        String what = !now.exists()
                ? "was deleted"
                : !Objects.equals(now.topicId(), expected.topicId())
                        ? "was deleted and created again (topic id " + expected.topicId() + " is now " + now.topicId()
                                + ")"
                        : "changed its partition count from " + expected.partitions() + " to " + now.partitions();
        changed = new TopicConfigurationException(
                "the coordination topic " + topic.name() + " " + what + " while this member"
                        + " used it; its offsets are the terms devices compare, so this member stops contending. Stop every member,"
                        + " restore or recreate the topic as it was (or start all members afresh and tell the devices that terms"
                        + " restart), then restart the members");
        throw changed;
    }

    private CoordinationConfigurationException otherCluster(TopicIdentity expected, TopicIdentity now) {
        return new CoordinationConfigurationException("this member now reaches another Kafka cluster: cluster "
                + expected.clusterId() + " answered when it pinned the coordination topic " + topic.name()
                + ", cluster "
                + now.clusterId()
                + " answers now (a disaster-recovery switch, or a DNS name, load balancer or proxy that"
                + " points elsewhere). Its terms are offsets of " + topic.name() + " on cluster " + expected.clusterId()
                + " and its fencing tokens that cluster's producer ids and epochs: on cluster " + now.clusterId()
                + " they mean"
                + " nothing, so this member stops contending, writes nothing more there and ends any leadership it holds. Stop"
                + " every member, then start them all afresh against the cluster they should use and tell the devices that"
                + " terms restart (a device that kept the old cluster's highest term refuses the new, smaller ones). If the"
                + " brokers of cluster " + now.clusterId()
                + " create topics on first use (auto.create.topics.enable=true),"
                + " a member's producer may already have created " + topic.name() + " there with the broker's defaults:"
                + " delete that topic before the members start");
    }

    /** Throws why this member stopped, once the topic or the cluster changed under it; never a request of its own. */
    void requireUnchanged() {
        CoordinationConfigurationException gone = changed;
        if (gone != null) {
            throw gone;
        }
    }

    /**
     * Whether the topic or the cluster changed, looked at again unless a check is fresher
     * than {@link KafkaCoordinationTransport#IDENTITY_CHECK_BEFORE_CHALLENGE}: after an
     * operation failed, whose failure (a timeout, say) may be the cluster's change rather
     * than what it says. Many roles failing at once (a cluster that is down) share one
     * check a second. A check that fails itself leaves the operation's own failure standing.
     */
    Optional<CoordinationConfigurationException> changedNow() {
        return changedUnlessCheckedWithin(KafkaCoordinationTransport.IDENTITY_CHECK_BEFORE_CHALLENGE);
    }

    /**
     * As {@link #changedNow}, but looked at again unless a check began after
     * {@code startedNanos} (a {@link System#nanoTime()}), when the operation that failed
     * began: for a failure that is what another cluster answers (a producer id its
     * coordinator never gave out), a check from just before the switch must not stand for
     * one after it. Only the first such failure after a check asks the cluster.
     */
    Optional<CoordinationConfigurationException> changedSince(long startedNanos) {
        return changedUnlessCheckedWithin(Duration.ofNanos(Math.max(0, System.nanoTime() - startedNanos)));
    }

    private Optional<CoordinationConfigurationException> changedUnlessCheckedWithin(Duration maxAge) {
        try {
            checkIdentity(maxAge);
        } catch (CoordinationConfigurationException gone) {
            return Optional.of(gone);
        } catch (RuntimeException e) {
            log.debug("Could not check the coordination topic {}: {}", topic.name(), e.toString());
        }
        return Optional.ofNullable(changed);
    }

    /**
     * {@code failed}, or, when the topic or the cluster changed meanwhile ({@link #changedNow}),
     * an exception of the change's type that says so, caused by {@code failed}.
     */
    CoordinationException explain(CoordinationException failed) {
        return explain(failed, changedNow());
    }

    /** As {@link #explain(CoordinationException)}, looked at as {@link #changedSince} says. */
    CoordinationException explain(CoordinationException failed, long startedNanos) {
        return explain(failed, changedSince(startedNanos));
    }

    private static CoordinationException explain(
            CoordinationException failed, Optional<CoordinationConfigurationException> change) {
        return change.<CoordinationException>map(gone -> {
                    // Every change this member records is built with a message (see checkIdentity).
                    String message = Objects.requireNonNullElse(gone.getMessage(), gone.toString());
                    return gone instanceof TopicConfigurationException
                            ? new TopicConfigurationException(message, failed)
                            : new CoordinationConfigurationException(message, failed);
                })
                .orElse(failed);
    }

    /**
     * What the topic's settings break of the guarantees, when an operator altered them
     * since this member accepted the topic; empty while it is safe (or allowed unsafe).
     * Unlike a changed identity this does not stop the member: the brokers still fence every
     * deposed writer, and a member that stopped would leave its roles without a holder. What
     * is at stake is what the settings protect (registrations under a delete policy, terms
     * after an unclean election), so it is an ERROR and the health says misconfigured.
     */
    Optional<TopicConfigurationException> unsafe() {
        return Optional.ofNullable(unsafe);
    }

    private void checkSafety() {
        if (topic.allowUnsafe() || System.nanoTime() - safetyCheckedAt < SAFETY_CHECK_INTERVAL.toNanos()) {
            return;
        }
        safetyCheckedAt = System.nanoTime();
        List<String> problems;
        try {
            problems = CoordinationTopic.safetyProblems(admin, topic, timeout);
        } catch (RuntimeException e) {
            // The next operation, or the next check, says whether the cluster answers.
            log.debug("Could not check the settings of the coordination topic {}: {}", topic.name(), e.toString());
            return;
        }
        TopicConfigurationException before = unsafe;
        if (problems.isEmpty()) {
            if (before != null) {
                log.info("The coordination topic {} keeps the fencing guarantees again", topic.name());
            }
            unsafe = null;
            return;
        }
        String message =
                "the coordination topic " + topic.name() + " was altered while this member used it and no longer"
                        + " keeps the fencing guarantees: " + String.join("; ", problems)
                        + ". This member goes on contending (the"
                        + " brokers still fence every deposed writer), but restore the setting"
                        + (problems.size() > 1 ? "s" : "")
                        + " on the topic now";
        if (before == null || !message.equals(before.getMessage())) {
            log.error("{}", message);
        }
        unsafe = new TopicConfigurationException(message);
    }
}
