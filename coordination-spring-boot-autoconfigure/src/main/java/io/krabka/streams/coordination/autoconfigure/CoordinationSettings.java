package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;

/**
 * Turns {@link CoordinationProperties} into the core's value types. Every invalid value
 * fails startup with an exception that names the property, which Spring Boot's failure
 * analysis prints as such.
 */
final class CoordinationSettings {

    private static final Logger log = LoggerFactory.getLogger(CoordinationSettings.class);

    private static final String PREFIX = "krabka.coordination.";

    private CoordinationSettings() {}

    static SendBatching sendBatching(CoordinationProperties properties) {
        CoordinationProperties.Send send = properties.getSend();
        if (send.getMaxBatchRecords() < 1) {
            throw invalid("send.max-batch-records", send.getMaxBatchRecords(), "must be at least 1");
        }
        Duration linger = send.getLinger();
        if (linger == null || linger.isNegative()) {
            throw invalid("send.linger", linger, "must not be negative");
        }
        if (send.getMaxQueuedRecords() < 1) {
            throw invalid("send.max-queued-records", send.getMaxQueuedRecords(), "must be at least 1");
        }
        Duration maxBlock = send.getMaxBlock();
        if (maxBlock == null || maxBlock.isNegative()) {
            throw invalid("send.max-block", maxBlock, "must not be negative");
        }
        return new SendBatching(send.getMaxBatchRecords(), linger, send.getMaxQueuedRecords(), maxBlock);
    }

    static LeaseConfig leaseConfig(CoordinationProperties properties) {
        CoordinationProperties.Lease lease = properties.getLease();
        // The lease becomes the role producers' transaction.timeout.ms, an int of milliseconds.
        Duration duration = fitsKafkaMillis(
                "lease.duration",
                positive("lease.duration", lease.getDuration()),
                "transaction.timeout.ms of the role producers");
        Duration renewInterval = positive("lease.renew-interval", lease.getRenewInterval());
        Duration stagger = lease.getChallengeStagger();
        if (stagger == null || stagger.isNegative()) {
            throw invalid("lease.challenge-stagger", stagger, "must not be negative");
        }
        if (stagger.compareTo(duration) > 0 && stagger.equals(LeaseConfig.DEFAULT_CHALLENGE_STAGGER)) {
            // The default with a lease shorter than it (a test's 3 s lease): one lease.
            stagger = duration;
        } else if (stagger.compareTo(duration) > 0) {
            // A turn is capped at one lease, but a spread start waits one whole stagger first.
            throw invalid(
                    "lease.challenge-stagger",
                    stagger,
                    "must be at most " + PREFIX + "lease.duration (" + duration
                            + "): a standby waits at most one lease behind the one ahead of it");
        }
        LeaseConfig config = new LeaseConfig(duration, renewInterval, stagger);
        if (!config.renewsWithMargin()) {
            throw invalid(
                    "lease.renew-interval",
                    renewInterval,
                    "must be at most a third of " + PREFIX + "lease.duration (" + duration
                            + "), so the holder has two more attempts before its deadline");
        }
        return config;
    }

    static List<Role> roles(CoordinationProperties properties) {
        List<Role> roles = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        List<String> names = properties.getRoles();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            String key = "roles[" + i + "]";
            try {
                roles.add(Role.of(name));
            } catch (IllegalArgumentException e) {
                throw invalid(key, name, e.getMessage());
            }
            if (!seen.add(name)) {
                throw invalid(key, name, "names a role twice");
            }
        }
        return roles;
    }

    static TopicSpec topic(CoordinationProperties properties) {
        CoordinationProperties.Topic topic = properties.getTopic();
        if (topic.getName() == null || topic.getName().isBlank()) {
            throw invalid("topic.name", topic.getName(), "must not be blank");
        }
        if (topic.getPartitions() <= 0) {
            throw invalid("topic.partitions", topic.getPartitions(), "must be positive");
        }
        if (topic.getReplicationFactor() <= 0) {
            throw invalid("topic.replication-factor", topic.getReplicationFactor(), "must be positive");
        }
        if (topic.getReplicationFactor() < TopicSpec.DEFAULT_REPLICATION_FACTOR) {
            if (!topic.isAllowUnsafe()) {
                throw invalid(
                        "topic.replication-factor",
                        topic.getReplicationFactor(),
                        "is below "
                                + TopicSpec.DEFAULT_REPLICATION_FACTOR
                                + ", so a command acknowledged by one broker can be lost with it "
                                + "(min.insync.replicas drops to 1); for a development cluster set " + PREFIX
                                + "topic.allow-unsafe=true as well");
            }
            log.warn(
                    "The coordination topic {} is used with replication factor {} ({}topic.allow-unsafe=true): a guarded write "
                            + "acknowledged by one broker can be lost with that broker. Development clusters only.",
                    topic.getName(),
                    topic.getReplicationFactor(),
                    PREFIX);
        }
        return new TopicSpec(
                topic.getName(),
                topic.getPartitions(),
                topic.getReplicationFactor(),
                topic.isCreate(),
                topic.isAllowUnsafe());
    }

    /**
     * Accepted whatever its relation to the lease: it bounds one cluster call, and a
     * renewal that blocks past the lease deadline ends the leadership at the deadline
     * anyway (the contender's watchdog), so a long timeout never keeps a role held.
     */
    static Duration operationTimeout(CoordinationProperties properties) {
        return fitsKafkaMillis(
                "operation-timeout",
                positive("operation-timeout", properties.getOperationTimeout()),
                "max.block.ms and default.api.timeout.ms of the coordination clients");
    }

    static Duration workStopTimeout(CoordinationProperties properties) {
        return positive("work-stop-timeout", properties.getWorkStopTimeout());
    }

    /**
     * The configured member id, or the host name followed by "-" and {@code server.port}
     * when that is set to a fixed port: stable across restarts of one process, distinct
     * for several processes on one host. With {@code server.port=0} (a random port, so no
     * stable id anyway, and the usual way to run several processes on one host) the host
     * name is followed by the process id: two such processes shared one id, and routing
     * through either answered "no holder".
     */
    static MemberId memberId(CoordinationProperties properties, Environment environment) {
        String configured = properties.getMemberId();
        String value = configured != null ? configured : defaultMemberId(environment);
        try {
            return MemberId.of(value);
        } catch (IllegalArgumentException e) {
            throw invalid("member-id", value, e.getMessage());
        }
    }

    private static String defaultMemberId(Environment environment) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = System.getenv().getOrDefault("HOSTNAME", "localhost");
        }
        String port = environment.getProperty("server.port");
        if (port != null && port.trim().equals("0")) {
            return host + "-" + ProcessHandle.current().pid();
        }
        return port == null || port.isBlank() ? host : host + "-" + port.trim();
    }

    static Duration clusterViewMaxAge(CoordinationProperties properties) {
        Duration maxAge = properties.getEndpoint().getClusterViewMaxAge();
        if (maxAge == null || maxAge.isNegative()) {
            throw invalid("endpoint.cluster-view-max-age", maxAge, "must not be negative");
        }
        return maxAge;
    }

    /** Kafka takes these durations as an int of milliseconds: about 24.8 days at most. */
    private static Duration fitsKafkaMillis(String key, Duration value, String kafkaSettings) {
        if (value.toMillis() > Integer.MAX_VALUE) {
            throw invalid(
                    key,
                    value,
                    "must be at most " + Duration.ofMillis(Integer.MAX_VALUE) + " (it becomes " + kafkaSettings
                            + ", an int of milliseconds)");
        }
        return value;
    }

    private static Duration positive(String key, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw invalid(key, value, "must be positive");
        }
        return value;
    }

    private static InvalidConfigurationPropertyValueException invalid(String key, Object value, String reason) {
        return new InvalidConfigurationPropertyValueException(PREFIX + key, value, reason);
    }
}
