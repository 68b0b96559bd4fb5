package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of krabka coordination. Connection and security settings are not here:
 * they come from {@code spring.kafka.*}.
 */
// Defaults are literals so the configuration processor can record them; a test keeps them equal to the core's.
@ConfigurationProperties("krabka.coordination")
public class CoordinationProperties {

    /**
     * Whether to contend for roles and expose coordination beans.
     */
    private boolean enabled = true;

    /**
     * Identity of this member. Ranks follow registration order, so keep it stable across
     * restarts of one process. Defaults to the host name, followed by "-" and the server
     * port when server.port is set, or by "-" and the process id when server.port is 0.
     */
    private String memberId;

    /**
     * Roles this member contends for. Each role name is used verbatim as the
     * transactional.id of the role's producer.
     */
    private List<String> roles = new ArrayList<>();

    /**
     * How long one cluster operation may wait for an answer before it fails with a timeout.
     */
    private Duration operationTimeout = Duration.ofSeconds(30);

    /**
     * How long the loop waits for a role's work (@OnLeadership methods and Lifecycle beans,
     * @LeaderListener pipelines) to finish after interrupting all of it together when a
     * leadership ends. A run still going then is abandoned and reported at ERROR by name.
     * Before a planned move (shutdown, release, handover) the work is stopped first, and the
     * role let go once it stopped or this passed. A Lifecycle start() still running this
     * long after the grant is reported at WARN.
     */
    private Duration workStopTimeout = Duration.ofSeconds(10);

    /**
     * Whether a role in roles that no @OnLeadership or @LeaderListener method, and no
     * @LeaderOnly handler, works for fails startup; otherwise it is named in one WARN at
     * startup.
     */
    private boolean requireWork = false;

    /**
     * How members that contend for the same roles share them: "none" (the member that
     * registered first takes every role and keeps it) or "spread" (each member converges
     * to within one of roles / live members, moving roles only by graceful handover).
     */
    private Balance balance = Balance.NONE;

    /**
     * The fencing probe, run once at startup before the first grant: "fail" (a FAIL stops
     * startup, naming the check and the fix), "warn" (a FAIL is logged and the member
     * contends anyway) or "off". On a topic allowed to be unsafe (topic.allow-unsafe),
     * settings that void the quorum claim WARN instead of FAIL.
     */
    private StartupFencingProbe.Mode probe = StartupFencingProbe.Mode.FAIL;

    /**
     * Where this member answers HTTP, published for routing requests to a role's holder
     * (@LeaderOnly). Placeholders are resolved once the web server runs, so
     * ${local.server.port} works. Defaults to the scheme, server.address (else the local
     * host's address), the port the web server listens on, and the context path.
     */
    private String advertisedUrl;

    private final Lease lease = new Lease();

    private final Topic topic = new Topic();

    private final Endpoint endpoint = new Endpoint();

    private final Send send = new Send();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public StartupFencingProbe.Mode getProbe() {
        return probe;
    }

    public void setProbe(StartupFencingProbe.Mode probe) {
        this.probe = probe;
    }

    public String getMemberId() {
        return memberId;
    }

    public void setMemberId(String memberId) {
        this.memberId = memberId;
    }

    public String getAdvertisedUrl() {
        return advertisedUrl;
    }

    public void setAdvertisedUrl(String advertisedUrl) {
        this.advertisedUrl = advertisedUrl;
    }

    public List<String> getRoles() {
        return roles;
    }

    public void setRoles(List<String> roles) {
        this.roles = roles;
    }

    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    public Duration getWorkStopTimeout() {
        return workStopTimeout;
    }

    public void setWorkStopTimeout(Duration workStopTimeout) {
        this.workStopTimeout = workStopTimeout;
    }

    public Balance getBalance() {
        return balance;
    }

    public void setBalance(Balance balance) {
        this.balance = balance;
    }

    public boolean isRequireWork() {
        return requireWork;
    }

    public void setRequireWork(boolean requireWork) {
        this.requireWork = requireWork;
    }

    public Lease getLease() {
        return lease;
    }

    public Topic getTopic() {
        return topic;
    }

    public Endpoint getEndpoint() {
        return endpoint;
    }

    public Send getSend() {
        return send;
    }

    /**
     * Group commit of asynchronous guarded sends ({@code Leadership.send},
     * {@code GuardedSender.sendAsync}), and the bound on how many may wait.
     */
    public static class Send {

        /**
         * At most this many records per transaction.
         */
        private int maxBatchRecords = 1000;

        /**
         * How long the oldest waiting send may wait for company before its transaction
         * starts; sends that arrive while a transaction commits wait for the next anyway.
         */
        private Duration linger = Duration.ofMillis(2);

        /**
         * At most this many records per role accepted and not yet written (waiting, or in
         * the transaction under way), as Kafka's buffer.memory bounds a producer: past it
         * a send blocks for up to max-block, then fails with SendQueueFullException, having
         * written nothing.
         */
        private int maxQueuedRecords = 10_000;

        /**
         * How long a send may block while max-queued-records are waiting, as Kafka's
         * max.block.ms; zero fails at once. A send from a send's completion callback never
         * blocks.
         */
        private Duration maxBlock = Duration.ofSeconds(60);

        public int getMaxBatchRecords() {
            return maxBatchRecords;
        }

        public void setMaxBatchRecords(int maxBatchRecords) {
            this.maxBatchRecords = maxBatchRecords;
        }

        public Duration getLinger() {
            return linger;
        }

        public void setLinger(Duration linger) {
            this.linger = linger;
        }

        public int getMaxQueuedRecords() {
            return maxQueuedRecords;
        }

        public void setMaxQueuedRecords(int maxQueuedRecords) {
            this.maxQueuedRecords = maxQueuedRecords;
        }

        public Duration getMaxBlock() {
            return maxBlock;
        }

        public void setMaxBlock(Duration maxBlock) {
            this.maxBlock = maxBlock;
        }
    }

    /** Lease timings. The lease only decides when a standby challenges, never who may write. */
    public static class Lease {

        /**
         * How long a lease lasts after the holder writes it.
         */
        private Duration duration = Duration.ofSeconds(30);

        /**
         * How long after writing a lease the holder writes the next one. At most a third of
         * the duration.
         */
        private Duration renewInterval = Duration.ofSeconds(10);

        /**
         * How much later than the standby ahead of it a standby challenges after the
         * deadline. A standby's whole wait (its rank times this) is at most one lease; the
         * stagger itself must be at most the lease duration (the default is cut to a lease
         * shorter than it).
         */
        private Duration challengeStagger = Duration.ofSeconds(5);

        public Duration getDuration() {
            return duration;
        }

        public void setDuration(Duration duration) {
            this.duration = duration;
        }

        public Duration getRenewInterval() {
            return renewInterval;
        }

        public void setRenewInterval(Duration renewInterval) {
            this.renewInterval = renewInterval;
        }

        public Duration getChallengeStagger() {
            return challengeStagger;
        }

        public void setChallengeStagger(Duration challengeStagger) {
            this.challengeStagger = challengeStagger;
        }
    }

    /** The coordination topic. */
    public static class Topic {

        /**
         * Name of the compacted topic that holds registrations and leases.
         */
        private String name = "__coordination_state";

        /**
         * Partition count used when creating the topic.
         */
        private int partitions = 50;

        /**
         * Replication factor used when creating the topic, and the minimum accepted for an
         * existing one. min.insync.replicas is 2 from 3 replicas on.
         */
        private short replicationFactor = 3;

        /**
         * Whether to create the topic when it is missing.
         */
        private boolean create = true;

        /**
         * Whether to accept, with a warning, an existing topic that breaks the guarantees
         * (not compacted, unclean leader election on, too few replicas). For development
         * clusters only.
         */
        private boolean allowUnsafe = false;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public int getPartitions() {
            return partitions;
        }

        public void setPartitions(int partitions) {
            this.partitions = partitions;
        }

        public short getReplicationFactor() {
            return replicationFactor;
        }

        public void setReplicationFactor(short replicationFactor) {
            this.replicationFactor = replicationFactor;
        }

        public boolean isCreate() {
            return create;
        }

        public void setCreate(boolean create) {
            this.create = create;
        }

        public boolean isAllowUnsafe() {
            return allowUnsafe;
        }

        public void setAllowUnsafe(boolean allowUnsafe) {
            this.allowUnsafe = allowUnsafe;
        }
    }

    /** The coordination actuator endpoint. */
    public static class Endpoint {

        /**
         * Whether the endpoint's write operation may release a role this member holds, or
         * hand it over to a chosen standby.
         */
        private boolean releaseEnabled = false;

        /**
         * When to show the roster, registration times, producer ids and epochs and the
         * transaction state. The holder, whether it is current, the term and the lease
         * times are always shown.
         */
        private ShowDetails showDetails = ShowDetails.NEVER;

        /**
         * Roles used to determine whether a user is authorized to be shown details. When
         * empty, all authenticated users are authorized.
         */
        private Set<String> roles = new HashSet<>();

        /**
         * How old the cluster-wide view of this member's roles that GET
         * /actuator/coordination shows may get before a request starts reading it again,
         * in the background: requests never wait for it, and one read runs at a time.
         */
        private Duration clusterViewMaxAge = Duration.ofSeconds(1);

        public Duration getClusterViewMaxAge() {
            return clusterViewMaxAge;
        }

        public void setClusterViewMaxAge(Duration clusterViewMaxAge) {
            this.clusterViewMaxAge = clusterViewMaxAge;
        }

        public ShowDetails getShowDetails() {
            return showDetails;
        }

        public void setShowDetails(ShowDetails showDetails) {
            this.showDetails = showDetails;
        }

        public Set<String> getRoles() {
            return roles;
        }

        public void setRoles(Set<String> roles) {
            this.roles = roles;
        }

        public boolean isReleaseEnabled() {
            return releaseEnabled;
        }

        public void setReleaseEnabled(boolean releaseEnabled) {
            this.releaseEnabled = releaseEnabled;
        }
    }

    /**
     * When the endpoint shows details, as {@code management.endpoint.health.show-details}
     * does. A type of its own, so the properties bind without actuator on the classpath.
     */
    public enum ShowDetails {

        /** Never show details. */
        NEVER,

        /** Show details only to authorized users. */
        WHEN_AUTHORIZED,

        /** Always show details. */
        ALWAYS
    }
}
