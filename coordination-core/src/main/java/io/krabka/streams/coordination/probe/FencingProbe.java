package io.krabka.streams.coordination.probe;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.jspecify.annotations.Nullable;

/**
 * Checks that a Kafka backend does what every fencing guarantee of this library rests
 * on, before a member contends there. Spring-free; built from the same settings as
 * {@link KafkaCoordinationTransport#create(Map, TopicSpec, Duration, Duration)}:
 * <pre>{@code
 * FencingReport report = FencingProbe.builder(connection).topic(topicSpec).build().run();
 * report.requireNoFailure(); // throws FencingProbeException naming each FAIL and its fix
 * }</pre>
 *
 * <p>The checks, cheapest first, each PASS, WARN or FAIL with one sentence on what it
 * means (docs/USER-GUIDE.md, "Know your backend"): {@code transaction-version} and
 * {@code metadata-version} (finalized features); {@code transaction-apis}
 * (DescribeTransactions and ListTransactions answer); the coordination topic's
 * {@code topic.*} settings and the brokers' {@code broker.*} transaction settings (read
 * only; a read the cluster denies is a WARN); then the live checks {@code live-fence},
 * {@code commit-after-fence}, {@code epoch-behaviour} and {@code aborted-read}; and
 * {@code connections}, an estimate.
 *
 * <p>What it writes, and where: only the live checks write, and never to the coordination
 * topic. They use the probe topic {@code <topic>-probe} (created on first use: one
 * partition, {@code cleanup.policy=delete}, {@code retention.ms} one hour) and a scratch
 * {@code transactional.id} {@code <topic>-probe-<random>}, new for every run: two
 * committed-or-aborted transactions and three small records a run. The coordinator keeps
 * the id until {@code transactional.id.expiration.ms} (7 days by default). A
 * {@linkplain Builder#readOnly read-only} run writes nothing and reports the live checks
 * as SKIPPED. It leaves nothing open: its transactions end (one a check leaves open is
 * aborted by one more InitProducerId of the scratch id), and its clients are closed when
 * {@link #run()} returns.
 *
 * <p>Principals need, beyond a member's ACLs, Create and Write on the probe topic and
 * Write and Describe on transactional ids prefixed {@code <topic>-probe-}; without them
 * the live checks WARN that they could not run.
 *
 * <p>Size: the public face (the builder and {@link #run()}) and the two cheapest checks,
 * which share its admin and its read of the finalized features.
 */
public final class FencingProbe {

    /** The suffix of the probe topic's name, after the coordination topic's. */
    public static final String PROBE_TOPIC_SUFFIX = "-probe";
    /** How long each of the probe's clients gets to close. */
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);

    private final Map<String, Object> adminConnection;
    private final Map<String, Object> producerConnection;
    private final Map<String, Object> consumerConnection;
    private final TopicSpec topic;
    private final String probeTopic;
    private final Duration timeout;
    private final @Nullable Duration leaseDuration;
    private final int roles;
    private final boolean readOnly;
    private final Duration reuseLiveChecksFor;
    private final Duration noAnswerAfter;
    private final @Nullable Consumer<String> noAnswer;

    private FencingProbe(Builder builder) {
        this.adminConnection = Map.copyOf(builder.adminConnection);
        this.producerConnection = Map.copyOf(builder.producerConnection);
        this.consumerConnection = Map.copyOf(builder.consumerConnection);
        this.topic = builder.topic;
        this.probeTopic = builder.probeTopic == null ? builder.topic.name() + PROBE_TOPIC_SUFFIX : builder.probeTopic;
        this.timeout = builder.timeout;
        this.leaseDuration = builder.leaseDuration;
        this.roles = builder.roles;
        this.readOnly = builder.readOnly;
        this.reuseLiveChecksFor = builder.reuseLiveChecksFor;
        this.noAnswerAfter = builder.noAnswerAfter;
        this.noAnswer = builder.noAnswer;
    }

    /** A probe on these connection settings (bootstrap servers, security), as a transport is built from. */
    public static Builder builder(Map<String, Object> connection) {
        return new Builder(connection, connection, connection);
    }

    /**
     * A probe on the settings of an application's own Kafka clients, as
     * {@link KafkaCoordinationTransport#create(Map, Map, Map, TopicSpec, Duration, Duration)} takes them.
     */
    public static Builder builder(
            Map<String, Object> adminConnection,
            Map<String, Object> producerConnection,
            Map<String, Object> consumerConnection) {
        return new Builder(adminConnection, producerConnection, consumerConnection);
    }

    /**
     * A probe of the cluster and topic {@code transport} uses, on the settings it was
     * {@linkplain KafkaCoordinationTransport#create(Map, Map, Map, TopicSpec, Duration, Duration) created}
     * from: its connection settings, topic, operation timeout, and its role producers'
     * transaction timeout as the lease duration. {@code CoordinationClient.probe()} runs it.
     *
     * @throws IllegalArgumentException when {@code transport} was given its clients rather
     *     than created from settings: the probe builds clients of its own
     */
    public static Builder builder(KafkaCoordinationTransport transport) {
        KafkaCoordinationTransport.Settings settings = transport
                .settings()
                .orElseThrow(
                        () -> new IllegalArgumentException(
                                "the fencing probe builds clients of its own from the settings a transport was created from"
                                        + " (KafkaCoordinationTransport.create); this one was given its clients: use FencingProbe.builder(connection)"));
        return builder(settings.adminConnection(), settings.producerConnection(), settings.consumerConnection())
                .topic(settings.topic())
                .timeout(settings.timeout())
                .leaseDuration(settings.transactionTimeout());
    }

    /** The probe of a transport built with {@code KafkaCoordinationTransport.create(connection, topic, timeout, transactionTimeout)}. */
    public static FencingProbe forTransport(
            Map<String, Object> connection, TopicSpec topic, Duration timeout, Duration transactionTimeout) {
        return builder(connection)
                .topic(topic)
                .timeout(timeout)
                .leaseDuration(transactionTimeout)
                .build();
    }

    /**
     * Runs every check once.
     *
     * @return what each check found; see {@link FencingReport#requireNoFailure()}
     * @throws CoordinationException when the cluster cannot be reached at all (no answer to
     *     DescribeCluster within the timeout, or authentication failed): nothing was checked
     */
    public FencingReport run() {
        Instant startedAt = Instant.now();
        long started = System.nanoTime();
        List<ProbeCheck> checks = new ArrayList<>();
        String clusterId;
        Admin admin = Admin.create(named(KafkaCoordinationTransport.adminSettings(adminConnection, timeout), "admin"));
        try {
            Collection<Node> brokers;
            try {
                var cluster = admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) timeout.toMillis()));
                clusterId = firstAnswer(cluster.clusterId());
                brokers = ProbeCalls.await(cluster.nodes(), timeout);
            } catch (RuntimeException e) {
                throw unreachable(e);
            }
            Short transactionVersion = features(admin, checks);
            transactionApis(admin, checks);
            checks.addAll(new TopicChecks(admin, topic, timeout, leaseDuration).run(brokers));
            String transactionalId = null;
            String wroteTo = null;
            var reused = LiveResults.reusable(
                    bootstrapServers(), clusterId, transactionVersion, reuseLiveChecksFor, startedAt);
            if (readOnly) {
                checks.addAll(LiveChecks.skipped());
            } else if (reused.isPresent()) {
                checks.addAll(reused.get().checks());
                wroteTo = reused.get().probeTopic();
                transactionalId = reused.get().transactionalId();
            } else {
                wroteTo = probeTopic;
                transactionalId = LiveChecks.scratchId(topic.name());
                List<ProbeCheck> live = new LiveChecks(
                                admin,
                                producerConnection,
                                consumerConnection,
                                probeTopic,
                                transactionalId,
                                (short) Math.min(topic.replicationFactor(), Math.max(1, brokers.size())),
                                timeout,
                                this::named)
                        .run(transactionVersion);
                live = EpochBehaviour.recheck(
                        "epoch-behaviour", live, transactionVersion, () -> transactionVersion(admin));
                LiveResults.passed(
                        bootstrapServers(),
                        clusterId,
                        transactionVersion,
                        new LiveResults.Run(live, probeTopic, transactionalId, startedAt));
                checks.addAll(live);
            }
            checks.add(ConnectionEstimate.check(roles));
            return new FencingReport(
                    clusterId,
                    bootstrapServers(),
                    topic.name(),
                    wroteTo,
                    transactionalId,
                    readOnly,
                    startedAt,
                    Duration.ofNanos(System.nanoTime() - started).toMillis(),
                    checks);
        } finally {
            // Bounded: with the cluster gone, Kafka's admin waits without end for what is pending.
            admin.close(CLOSE_TIMEOUT);
        }
    }

    /**
     * The cluster's answer to the first call, within the timeout; tells the
     * {@link Builder#onNoAnswer} notice once it has not come within its delay.
     */
    private String firstAnswer(Future<String> clusterId) {
        Consumer<String> notice = noAnswer;
        if (notice == null || noAnswerAfter.compareTo(timeout) >= 0) {
            return ProbeCalls.await(clusterId, timeout);
        }
        try {
            return clusterId.get(noAnswerAfter.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException notYet) {
            notice.accept("the fencing probe has had no answer from the cluster at bootstrap servers "
                    + bootstrapServers() + " for " + noAnswerAfter.toMillis() + " ms, and waits for one until its"
                    + " timeout of " + timeout.toMillis() + " ms");
            return ProbeCalls.await(clusterId, timeout.minus(noAnswerAfter));
        } catch (ExecutionException answered) {
            return ProbeCalls.await(clusterId, timeout); // done: throws what the cluster answered
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ProbeCalls.await(clusterId, timeout); // throws Kafka's InterruptException
        }
    }

    private CoordinationException unreachable(RuntimeException e) {
        String where = "the fencing probe could not reach the cluster at " + bootstrapServers();
        if (ProbeCalls.is(e, AuthenticationException.class)) {
            return new CoordinationAuthenticationException(
                    where + ": authentication failed (" + ProbeCalls.describe(e) + ")", e);
        }
        if (ProbeCalls.is(e, TimeoutException.class)) {
            return new CoordinationTimeoutException(where + ": no answer within " + timeout.toMillis() + " ms", e);
        }
        return new CoordinationException(where + ": " + ProbeCalls.describe(e), e);
    }

    /** The finalized {@code transaction.version} and {@code metadata.version}; returns the former, null when unknown. */
    private @Nullable Short features(Admin admin, List<ProbeCheck> checks) {
        FeatureMetadata features;
        try {
            features = ProbeCalls.await(admin.describeFeatures().featureMetadata(), timeout);
        } catch (RuntimeException e) {
            checks.add(ProbeCheck.warn(
                    "transaction-version",
                    "the cluster's finalized features could not be read (" + ProbeCalls.describe(e) + ")",
                    "Which epoch behaviour to expect is unknown; the live fence finds it out,"
                            + " and a read-only run cannot",
                    ProbeCalls.unsupported(e) ? null : "grant Describe on the cluster"));
            return null;
        }
        short version = transactionVersion(features);
        checks.add(ProbeCheck.pass(
                "transaction-version",
                "transaction.version=" + version,
                version >= 2
                        ? "KIP-890 transactions: every commit and abort moves the producer epoch by one, and a member predicts"
                                + " the epoch the coordinator will report after each of its commits"
                        : "Classic transactions: the epoch moves only at InitProducerId, so a deposed holder is refused at its next"
                                + " write, and a member predicts an unchanged epoch after each of its commits"));
        FinalizedVersionRange metadata = features.finalizedFeatures().get("metadata.version");
        checks.add(
                metadata == null
                        ? ProbeCheck.warn(
                                "metadata-version",
                                "no finalized metadata.version (a ZooKeeper-mode cluster, or not Apache" + " Kafka)",
                                "The cluster is not a KRaft Kafka 3.3 or later; the library was verified on KRaft only",
                                null)
                        : ProbeCheck.pass(
                                "metadata-version",
                                "metadata.version level " + metadata.maxVersionLevel(),
                                "A KRaft cluster: producer ids and feature levels come from the controller quorum"));
        return version;
    }

    /** The finalized {@code transaction.version}: a feature finalized at level 0 is not listed at all. */
    private static short transactionVersion(FeatureMetadata features) {
        FinalizedVersionRange finalized = features.finalizedFeatures().get("transaction.version");
        return finalized == null ? 0 : finalized.maxVersionLevel();
    }

    /** The finalized {@code transaction.version} read again; null when it cannot be read. */
    private @Nullable Short transactionVersion(Admin admin) {
        try {
            return transactionVersion(ProbeCalls.await(admin.describeFeatures().featureMetadata(), timeout));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** DescribeTransactions, for a scratch id nobody uses, and ListTransactions must answer. */
    private void transactionApis(Admin admin, List<ProbeCheck> checks) {
        String nobody =
                topic.name() + "-probe-nobody-" + UUID.randomUUID().toString().substring(0, 8);
        String describe;
        try {
            ProbeCalls.await(admin.describeTransactions(List.of(nobody)).description(nobody), timeout);
            describe = "DescribeTransactions answered";
        } catch (RuntimeException e) {
            if (ProbeCalls.is(e, TransactionalIdNotFoundException.class)) {
                describe = "DescribeTransactions answered (an unknown id: not found)";
            } else if (ProbeCalls.unsupported(e)) {
                checks.add(
                        ProbeCheck.fail(
                                "transaction-apis",
                                "DescribeTransactions is not supported (" + ProbeCalls.describe(e) + ")",
                                "No member can check the epoch of a holder: challenges and the current() check rest on it",
                                "run on a backend that implements Kafka's transaction admin APIs (KIP-664, Kafka 3.0 and later)"));
                return;
            } else if (ProbeCalls.denied(e)) {
                checks.add(ProbeCheck.warn(
                        "transaction-apis",
                        "DescribeTransactions was refused by the ACLs (" + ProbeCalls.describe(e) + ")",
                        "Not checked whether the backend answers it; members describe their"
                                + " own roles' ids, which their ACLs allow",
                        "grant Describe on transactional ids prefixed " + topic.name() + "-probe-"));
                return;
            } else {
                checks.add(ProbeCheck.warn(
                        "transaction-apis",
                        "DescribeTransactions failed (" + ProbeCalls.describe(e) + ")",
                        "Not known whether a member can check a holder's epoch here",
                        null));
                return;
            }
        }
        try {
            // Filtered on a producer id no one has: the API answers without listing a big cluster's every id.
            ProbeCalls.await(
                    admin.listTransactions(new ListTransactionsOptions().filterProducerIds(Set.of(Long.MAX_VALUE)))
                            .all(),
                    timeout);
            checks.add(
                    ProbeCheck.pass(
                            "transaction-apis",
                            describe + "; ListTransactions answered",
                            "A member can check a"
                                    + " holder's epoch with the coordinator, and operators can list transactions (kafka-transactions.sh)"));
        } catch (RuntimeException e) {
            checks.add(ProbeCheck.warn(
                    "transaction-apis",
                    describe + "; ListTransactions failed (" + ProbeCalls.describe(e) + ")",
                    "Members do not need it, but operators cannot list hanging transactions here",
                    null));
        }
    }

    /** Gives each client its own client.id (the application's, if any, as a prefix), as the transport does. */
    Map<String, Object> named(Map<String, Object> settings, String suffix) {
        Object base = settings.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        String prefix = base == null || base.toString().isBlank() ? "krabka" : base.toString();
        settings.put(CommonClientConfigs.CLIENT_ID_CONFIG, prefix + "-coordination-probe-" + suffix);
        return settings;
    }

    private String bootstrapServers() {
        Object servers = adminConnection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        return servers instanceof List<?> list
                ? String.join(",", list.stream().map(String::valueOf).toList())
                : String.valueOf(servers);
    }

    /** The probe's settings. */
    public static final class Builder {
        private final Map<String, Object> adminConnection;
        private final Map<String, Object> producerConnection;
        private final Map<String, Object> consumerConnection;
        private TopicSpec topic = TopicSpec.DEFAULTS;
        private @Nullable String probeTopic;
        private Duration timeout = KafkaCoordinationTransport.DEFAULT_OPERATION_TIMEOUT;
        private @Nullable Duration leaseDuration;
        private int roles;
        private boolean readOnly;
        private Duration reuseLiveChecksFor = Duration.ZERO;
        private Duration noAnswerAfter = Duration.ZERO;
        private @Nullable Consumer<String> noAnswer;

        private Builder(
                Map<String, Object> adminConnection,
                Map<String, Object> producerConnection,
                Map<String, Object> consumerConnection) {
            this.adminConnection = Objects.requireNonNull(adminConnection, "adminConnection");
            this.producerConnection = Objects.requireNonNull(producerConnection, "producerConnection");
            this.consumerConnection = Objects.requireNonNull(consumerConnection, "consumerConnection");
            if (adminConnection.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) == null) {
                throw new IllegalArgumentException(
                        "the connection settings have no " + CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
            }
        }

        /** The coordination topic the members use (checked, never written); {@link TopicSpec#DEFAULTS} by default. */
        public Builder topic(TopicSpec topic) {
            this.topic = Objects.requireNonNull(topic, "topic");
            return this;
        }

        /** The topic the live checks write to; {@code <topic>-probe} by default. */
        public Builder probeTopic(String probeTopic) {
            if (probeTopic == null || probeTopic.isBlank()) {
                throw new IllegalArgumentException("probeTopic must not be blank");
            }
            this.probeTopic = probeTopic;
            return this;
        }

        /** How long one cluster operation may take; 30 s by default. */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero() || timeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "timeout must be positive and at most " + Integer.MAX_VALUE + " ms: " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** The members' lease duration (their transaction.timeout.ms), checked against the brokers' maximum; unchecked when not given. */
        public Builder leaseDuration(@Nullable Duration leaseDuration) {
            if (leaseDuration != null && (leaseDuration.isNegative() || leaseDuration.isZero())) {
                throw new IllegalArgumentException("leaseDuration must be positive: " + leaseDuration);
            }
            this.leaseDuration = leaseDuration;
            return this;
        }

        /** How many roles a member contends for, for the connection estimate; 0 (unknown) by default. */
        public Builder roles(int roles) {
            if (roles < 0) {
                throw new IllegalArgumentException("roles must not be negative: " + roles);
            }
            this.roles = roles;
            return this;
        }

        /** Whether to skip the live checks, which write to the probe topic; false by default. */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * Reuses live checks that all passed in this JVM on the same cluster id and
         * {@code transaction.version} within {@code maxAge}, instead of fencing a new scratch
         * id (their findings say so); the read-only checks always run. Zero, the default,
         * runs the live checks every time.
         */
        public Builder reuseLiveChecksFor(Duration maxAge) {
            if (maxAge == null || maxAge.isNegative()) {
                throw new IllegalArgumentException("maxAge must not be negative: " + maxAge);
            }
            this.reuseLiveChecksFor = maxAge;
            return this;
        }

        /**
         * Tells {@code notice} once, on the thread that runs the probe, when the cluster has
         * not answered the probe's first call (DescribeCluster) within {@code after}: a
         * wrong address or a cluster that is down shows then, not only at the timeout. The
         * notice names the bootstrap servers and the timeout; the probe goes on waiting for
         * an answer until its timeout, as without one. None by default; none either when
         * {@code after} is not below the timeout.
         */
        public Builder onNoAnswer(Duration after, Consumer<String> notice) {
            if (after == null || after.isNegative() || after.isZero()) {
                throw new IllegalArgumentException("after must be positive: " + after);
            }
            this.noAnswerAfter = after;
            this.noAnswer = Objects.requireNonNull(notice, "notice");
            return this;
        }

        public FencingProbe build() {
            return new FencingProbe(this);
        }
    }
}
