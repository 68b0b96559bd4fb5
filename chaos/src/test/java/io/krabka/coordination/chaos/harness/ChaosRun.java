package io.krabka.coordination.chaos.harness;

import static org.awaitility.Awaitility.await;

import io.krabka.coordination.chaos.check.Checker;
import io.krabka.coordination.chaos.check.History;
import io.krabka.coordination.chaos.member.Command;
import io.krabka.coordination.chaos.member.MemberEvent;
import io.krabka.coordination.chaos.springmember.SpringMember;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.MalformedRecordException;
import io.krabka.streams.coordination.record.RecordKind;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One fault-injection run: broker JVMs, member JVMs behind per-member TCP proxies, a
 * device, a seeded {@link FaultPlan}, and a {@link RequestProducer} feeding the
 * members' leader pipeline through the plan; afterwards the pipeline is left to drain,
 * the history is read back from the cluster and the members' output, and handed to the
 * {@link Checker}.
 */
public final class ChaosRun {

    /**
     * What to run. {@code unfenced} names members started in the deliberately broken mode;
     * {@code transactionVersion} is the cluster's finalized {@code transaction.version}
     * (0: what the brokers come up with, 2 on Kafka 4.x).
     */
    public record Settings(
            String name,
            int brokers,
            int members,
            Duration lease,
            Duration renew,
            Duration stagger,
            Duration slack,
            FaultPlan plan,
            Duration budget,
            List<String> unfenced,
            Path dir,
            int transactionVersion) {

        public Settings(
                String name,
                int brokers,
                int members,
                Duration lease,
                Duration renew,
                Duration stagger,
                Duration slack,
                FaultPlan plan,
                Duration budget,
                List<String> unfenced,
                Path dir) {
            this(name, brokers, members, lease, renew, stagger, slack, plan, budget, unfenced, dir, 0);
        }

        public Settings withTransactionVersion(int version) {
            return new Settings(
                    name, brokers, members, lease, renew, stagger, slack, plan, budget, unfenced, dir, version);
        }

        public Checker.GapBound gapBound() {
            return new Checker.GapBound(lease, stagger, members - 1, slack);
        }
    }

    /**
     * How the pipeline drained after the plan: how long until its lag was 0 (or the wait
     * gave up), and the last lag measured (-1 when none could be).
     */
    public record Drain(Duration took, long lag) {}

    /**
     * What the run exercised beyond the fault counts: which coordination partition each
     * role hashed to, how many records compaction removed while the run went on (the
     * lease recorder saw them; a fresh read at the end did not), how many records the
     * hostile producer forged and the most any member found suspicious.
     */
    public record Coverage(
            Map<String, Integer> partitionOfRole,
            int coordinationRecordsSeen,
            int compactedAway,
            long forgedInjected,
            long mostSuspiciousCounted,
            int heldRoleReleases,
            int currentAnswers) {

        /** Whether at least two roles share a coordination partition. */
        public boolean rolesSharePartitions() {
            return partitionOfRole.values().stream().distinct().count() < partitionOfRole.size();
        }

        String describe() {
            return "Roles by coordination partition: " + partitionOfRole + ". Coordination records seen live: "
                    + coordinationRecordsSeen + ", of which compaction removed " + compactedAway
                    + " before the run ended. Forged records appended: " + forgedInjected
                    + "; most found suspicious by one member: " + mostSuspiciousCounted
                    + ". Releases through the starter that gave up a held role: " + heldRoleReleases
                    + ". Answers of describe() that called someone current, each checked: " + currentAnswers + ".";
        }
    }

    /** The verdict, the figures, and where the evidence is. */
    public record Report(
            Settings settings,
            Checker.Result result,
            Map<String, Integer> faultCounts,
            long garbageInjected,
            long mostMalformedCounted,
            Drain drain,
            Duration elapsed,
            Path dir,
            Coverage coverage) {

        /** The table the issue asks for, as Markdown. */
        public String table() {
            StringBuilder table = new StringBuilder();
            table.append(
                    "| run | brokers | members | faults | leadership changes | commands committed | requests sent / acknowledged / processed | violations | longest leaderless gap | gap bound | elapsed |\n");
            table.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
            table.append("| ")
                    .append(settings.name())
                    .append(
                            settings.transactionVersion() > 0
                                    ? " (transaction version " + settings.transactionVersion() + ")"
                                    : "")
                    .append(" | ")
                    .append(settings.brokers())
                    .append(" | ")
                    .append(settings.members())
                    .append(" | ")
                    .append(faultCounts.entrySet().stream()
                            .map(e -> e.getKey() + " " + e.getValue())
                            .collect(Collectors.joining(", ")))
                    .append(" | ")
                    .append(result.leadershipChanges())
                    .append(" (")
                    .append(SpringMember.ROLE)
                    .append(" ")
                    .append(result.leadershipChangesByRole().getOrDefault(SpringMember.ROLE, 0))
                    .append(")")
                    .append(" | ")
                    .append(result.commandsCommitted())
                    .append(" | ")
                    .append(result.requestsProduced())
                    .append(" / ")
                    .append(result.requestsAcknowledged())
                    .append(" / ")
                    .append(result.requestsProcessed())
                    .append(" | ")
                    .append(result.violations().size())
                    .append(" | ")
                    .append(result.longestGapMillis())
                    .append(" ms (before ")
                    .append(result.longestGapAt())
                    .append(") | ")
                    .append(settings.gapBound().millis())
                    .append(" ms | ")
                    .append(elapsed.toSeconds())
                    .append(" s |\n");
            table.append("\nGarbage records appended: ")
                    .append(garbageInjected)
                    .append("; most counted by one member: ")
                    .append(mostMalformedCounted)
                    .append(
                            ". Late dispatches refused by the device (committed under an older term, delivered after a newer one): ")
                    .append(result.deliveriesRefused())
                    .append(".\n");
            table.append("\n").append(coverage.describe()).append("\n");
            table.append("\nAfter the plan the pipeline ")
                    .append(drain.lag() == 0 ? "drained in " : "had not drained after ")
                    .append(drain.took().toMillis())
                    .append(" ms (lag ")
                    .append(drain.lag())
                    .append(").\n");
            return table.toString();
        }
    }

    private static final String COMMANDS = "chaos-commands";
    /** The value of a challenger's marker in the command log: {@code CHALLENGER <n> <termsBelow>}. */
    private static final String CHALLENGER_MARK = "CHALLENGER ";

    private static final String REQUESTS = "chaos-requests";
    private static final int REQUEST_PARTITIONS = 3;
    /** 20 requests a second: a modest load beside the holder's 10 periodic commands a second. */
    private static final Duration REQUEST_INTERVAL = Duration.ofMillis(50);
    /** How long the run waits after the plan for the pipeline to commit every request. */
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration BROKER_DOWN = Duration.ofSeconds(4);
    /** How long a SIGTERMed member may take to release its role and exit. */
    private static final Duration TERM_TIMEOUT = Duration.ofSeconds(30);

    private static final int COORDINATION_PARTITIONS = 3;
    /**
     * How long the transaction coordinator keeps an idle transactional id (the broker's
     * default is seven days): short, so the EXPIRE_TRANSACTIONAL_ID fault can outlast it.
     * Live roles renew every {@code renew}, so only a role nobody serves expires.
     */
    private static final Duration TRANSACTIONAL_ID_EXPIRATION = Duration.ofSeconds(4);
    /**
     * The coordination topic's compaction settings for the run: segments roll every 2 s and
     * the cleaner runs every second, so members that start late read a compacted partition.
     * No record is compacted in its first minute by its timestamp, so the lease recorder
     * sees every one: a transaction that took long to commit (a broker restarting) shows
     * its records to readers only then, already old by their timestamps, and with a 3 s
     * lag the cleaner removed grants before the recorder read them.
     */
    private static final Map<String, String> COMPACTION = Map.of(
            "segment.ms",
            "2000",
            "min.cleanable.dirty.ratio",
            "0.01",
            "min.compaction.lag.ms",
            "60000",
            "delete.retention.ms",
            "5000");

    private final Settings settings;
    private final Role role = Role.of(SpringMember.ROLE);
    /** Every role the members contend for: the dispatcher and the others. */
    private final List<Role> roles = java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(SpringMember.ROLE), SpringMember.OTHER_ROLES.stream())
            .map(Role::of)
            .toList();
    /** Records the forged ones, as "partition/offset": what no member wrote, so no tenure. */
    private final java.util.Set<String> forged = ConcurrentHashMap.newKeySet();

    private final Map<String, Map<String, String>> controls = new ConcurrentHashMap<>();
    private LeaseRecorder leaseRecorder;
    private long forgedInjected;
    private final PipelineSettings pipeline = PipelineSettings.of(role, REQUESTS);
    private final Map<String, TcpProxy> proxies = new ConcurrentHashMap<>();
    private final Map<String, MemberProcess> members = new LinkedHashMap<>();
    private final List<History.Fault> faults = Collections.synchronizedList(new ArrayList<>());
    private final List<History.TailCheck> tailChecks = Collections.synchronizedList(new ArrayList<>());
    private final List<History.CurrentAnswer> currentAnswers = Collections.synchronizedList(new ArrayList<>());
    private final Random random;
    private final java.util.concurrent.ExecutorService tailChecker =
            java.util.concurrent.Executors.newSingleThreadExecutor();
    /** The tail checks of restarted members not yet registered again: the next fault waits for them. */
    private final List<java.util.concurrent.Future<?>> restarting = new ArrayList<>();

    private long garbageInjected;
    private KafkaProcessCluster cluster;
    private CoordinationClient observer;
    private CoordinationClient tailObserver;
    private RequestProducer requests;

    public ChaosRun(Settings settings) {
        this.settings = settings;
        this.random = new Random(settings.plan().seed());
    }

    public Report run() throws Exception {
        deleteRecursively(settings.dir()); // a rerun starts from fresh broker storage
        Files.createDirectories(settings.dir());
        long started = System.currentTimeMillis();
        KafkaProcessCluster.Builder builder = KafkaProcessCluster.builder(
                        settings.dir().resolve("brokers"))
                .nodes(settings.brokers())
                .setting("transactional.id.expiration.ms", Long.toString(TRANSACTIONAL_ID_EXPIRATION.toMillis()))
                .setting("transaction.remove.expired.transaction.cleanup.interval.ms", "500")
                // a frozen holder's open transaction is aborted within a second of its timeout, then can expire
                .setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000")
                .setting("log.cleaner.backoff.ms", "1000");
        for (int m = 1; m <= settings.members(); m++) {
            String member = "m" + m;
            builder.listener(new KafkaProcessCluster.Listener(
                    member.toUpperCase(),
                    "PLAINTEXT",
                    (node, bound) -> proxies.computeIfAbsent(member + "@" + node, key -> new TcpProxy(0, bound, key))
                            .port()));
        }
        int replicas = Math.min(3, settings.brokers());
        try (Device device = new Device();
                KafkaProcessCluster brokers = builder.start();
                KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                        Map.of("bootstrap.servers", brokers.bootstrapServers()),
                        TopicSpec.DEFAULTS
                                .withPartitions(COORDINATION_PARTITIONS)
                                .withReplicationFactor(replicas),
                        Duration.ofSeconds(20),
                        Duration.ofSeconds(20));
                CoordinationClient client = new CoordinationClient(
                        transport,
                        new LeaseConfig(settings.lease(), settings.renew(), settings.stagger()),
                        InstantSource.system());
                CoordinationClient tailClient = new CoordinationClient(
                        transport,
                        new LeaseConfig(settings.lease(), settings.renew(), settings.stagger()),
                        InstantSource.system())) {
            cluster = brokers;
            observer = client;
            if (settings.transactionVersion() > 0) {
                setTransactionVersion((short) settings.transactionVersion());
            }
            tailObserver = tailClient;
            createTopics(replicas);
            observer.observe(role, Duration.ZERO); // creates the coordination topic before any member needs it
            compactOften();
            leaseRecorder = new LeaseRecorder(
                    brokers.bootstrapServers(), CoordinationCodec.COORDINATION_STATE_TOPIC, COORDINATION_PARTITIONS);
            for (int m = 1; m <= settings.members(); m++) {
                MemberProcess member = member("m" + m, device.port(), replicas);
                members.put(member.id(), member);
                member.start();
                // Only a run with unfenced members needs m1 to hold first (the zombie must be the
                // unfenced m1); otherwise the member JVMs boot side by side, not one after another.
                if (m == 1 && !settings.unfenced().isEmpty()) {
                    awaitHolder(holder -> true, Duration.ofSeconds(60));
                }
            }
            // The plan starts once every member is up and registered, not while JVMs still boot.
            long rosterDeadline = System.nanoTime() + REGISTER_AGAIN_WITHIN.toNanos();
            while (!roster().containsAll(members.keySet()) && System.nanoTime() < rosterDeadline) {
                observer.observe(role, Duration.ofMillis(200));
            }
            if (!roster().containsAll(members.keySet())) {
                fault(
                        "STUCK",
                        "members did not all register within " + REGISTER_AGAIN_WITHIN.toSeconds() + " s: " + roster());
            }
            fault("START", members.keySet().toString());
            requests = new RequestProducer(brokers.bootstrapServers(), REQUESTS, REQUEST_PARTITIONS, REQUEST_INTERVAL);
            requests.start();
            long planStarted = System.nanoTime();
            long waitedForMembers = 0;
            for (FaultPlan.Step step : settings.plan().steps()) {
                // One fault at a time: a fault on the holder while the other members' JVMs still
                // boot leaves no one to take over (a gap of the machine, not of the library). That
                // boot took 55 s on a 2-core machine running two builds, so the budget, which caps
                // the plan's faults, does not count the wait.
                waitedForMembers += awaitRestartedMembers();
                if (System.nanoTime() - planStarted - waitedForMembers
                        > settings.budget().toNanos()) {
                    fault("BUDGET_SPENT", settings.budget().toString());
                    break;
                }
                long stepStarted = System.currentTimeMillis();
                apply(step);
                long healed = System.currentTimeMillis();
                awaitHolder(holder -> true, Duration.ofSeconds(60));
                askWhoIsCurrent();
                calm(step, stepStarted, healed); // commands flow undisturbed for a while: part of the plan
            }
            long ended = System.currentTimeMillis();
            fault("END", "");
            requests.stop();
            Drain drain = drain();
            tailChecker.shutdown();
            if (!tailChecker.awaitTermination(REGISTER_AGAIN_WITHIN.toSeconds() + 10, TimeUnit.SECONDS)) {
                fault("STUCK", "tail checks did not finish");
            }
            members.values().forEach(MemberProcess::kill);
            // A member may have seen its commit acknowledged just before it was killed; the
            // coordinator writes that transaction's markers afterwards. Read once every
            // transaction left behind is decided, so the history holds every commit.
            List<TopicPartition> logs = new ArrayList<>(List.of(new TopicPartition(COMMANDS, 0)));
            for (int partition = 0; partition < COORDINATION_PARTITIONS; partition++) {
                logs.add(new TopicPartition(CoordinationCodec.COORDINATION_STATE_TOPIC, partition));
            }
            awaitDecided(logs, Duration.ofSeconds(90));
            List<LeaseRecorder.Seen> coordination = leaseRecorder.finish(Duration.ofSeconds(60));
            History history = readHistory(device, ended, coordination);
            Checker.Result result = new Checker(settings.gapBound()).check(history);
            Report report = new Report(
                    settings,
                    result,
                    countFaults(),
                    garbageInjected,
                    history.malformedCounted().values().stream()
                            .mapToLong(Long::longValue)
                            .max()
                            .orElse(0),
                    drain,
                    Duration.ofMillis(System.currentTimeMillis() - started),
                    settings.dir(),
                    coverage(coordination));
            writeReport(report, history);
            return report;
        } finally {
            if (requests != null) {
                requests.close();
            }
            tailChecker.shutdownNow();
            members.values().forEach(MemberProcess::kill);
            if (leaseRecorder != null) {
                leaseRecorder.close();
            }
            proxies.values().forEach(TcpProxy::close);
        }
    }

    private MemberProcess member(String id, int devicePort, int replicas) {
        String bootstrap = cluster.nodes().stream()
                .map(node -> "127.0.0.1:" + proxies.get(id + "@" + node.id()).port())
                .collect(Collectors.joining(","));
        List<String> arguments = List.of(
                "member=" + id,
                "bootstrap=" + bootstrap,
                "role=" + role.name(),
                "commands=" + COMMANDS,
                "lease-ms=" + settings.lease().toMillis(),
                "renew-ms=" + settings.renew().toMillis(),
                "stagger-ms=" + settings.stagger().toMillis(),
                "device-port=" + devicePort,
                "partitions=" + COORDINATION_PARTITIONS,
                "replication=" + replicas,
                "requests=" + REQUESTS,
                "mode=" + (settings.unfenced().contains(id) ? "unfenced" : "fenced"),
                "control-file=" + controlFile(id));
        // The real members run the starter; the deliberately broken one is the core-level CommandMember.
        return new MemberProcess(
                id, !settings.unfenced().contains(id), arguments, settings.dir().resolve(id + ".out"));
    }

    /** The run on a cluster finalized at this transaction version ({@code -Dchaos.transaction-version=1} in ChaosIT). */
    private void setTransactionVersion(short version) throws Exception {
        try (Admin admin = cluster.admin()) {
            var finalized = admin.describeFeatures()
                    .featureMetadata()
                    .get(10, TimeUnit.SECONDS)
                    .finalizedFeatures()
                    .get("transaction.version");
            short current = finalized == null ? 0 : finalized.maxVersionLevel();
            if (current != version) {
                admin.updateFeatures(
                                Map.of(
                                        "transaction.version",
                                        new org.apache.kafka.clients.admin.FeatureUpdate(
                                                version,
                                                version < current
                                                        ? org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType
                                                                .SAFE_DOWNGRADE
                                                        : org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType
                                                                .UPGRADE)),
                                new org.apache.kafka.clients.admin.UpdateFeaturesOptions())
                        .all()
                        .get(30, TimeUnit.SECONDS);
            }
        }
        fault("TRANSACTION_VERSION", Short.toString(version));
    }

    /**
     * The command topic (one partition: one order for every command), the pipeline's request
     * topic, and its dead-letter topic (a {@code @LeaderListener} checks that it exists).
     */
    private void createTopics(int replicas) throws Exception {
        Map<String, String> durable = Map.of(
                "min.insync.replicas",
                Integer.toString(Math.min(2, replicas)),
                "unclean.leader.election.enable",
                "false");
        try (Admin admin = cluster.admin()) {
            Map<String, String> stamped = new HashMap<>(durable);
            // The broker stamps each command when it appends it: the stale-dispatch rule's clock.
            stamped.put("message.timestamp.type", "LogAppendTime");
            admin.createTopics(List.of(
                            new NewTopic(COMMANDS, 1, (short) replicas).configs(stamped),
                            new NewTopic(REQUESTS, REQUEST_PARTITIONS, (short) replicas).configs(durable),
                            new NewTopic(REQUESTS + ".DLT", 1, (short) replicas).configs(durable)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * After the plan, with the producer stopped: waits (bounded) until the pipeline's lag is
     * 0, so every request in the input is behind the group's committed offsets; then until
     * the command log has no transaction open from before that moment, so a read_committed
     * reader sees the outputs of every committed batch (their offsets and their commands
     * commit together, but their markers land on different brokers). A pipeline that does
     * not drain is left to the checker, which names the requests it never processed.
     */
    private Drain drain() throws Exception {
        long start = System.nanoTime();
        AtomicLong lag = new AtomicLong(-1);
        try (Admin admin = cluster.admin()) {
            try {
                await().pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(200))
                        .atMost(DRAIN_TIMEOUT)
                        .ignoreExceptions()
                        .until(() -> {
                            lag.set(LeaderPipeline.measureLag(admin, pipeline, Duration.ofSeconds(10)));
                            return lag.get() == 0;
                        });
            } catch (ConditionTimeoutException notDrained) {
                return new Drain(Duration.ofNanos(System.nanoTime() - start), lag.get());
            }
        }
        awaitDecided(List.of(new TopicPartition(COMMANDS, 0)), Duration.ofSeconds(30));
        return new Drain(Duration.ofNanos(System.nanoTime() - start), lag.get());
    }

    /**
     * Waits until every transaction with records in these partitions as of now is decided
     * (their last stable offsets reach the end offsets read now), so a read_committed
     * reader sees every commit made so far; a transaction left by a killed member is
     * committed by the coordinator's markers or aborted at its timeout. Records STUCK when
     * that takes longer than {@code timeout}.
     */
    private void awaitDecided(List<TopicPartition> partitions, Duration timeout) throws Exception {
        Map<TopicPartition, OffsetSpec> latest =
                partitions.stream().collect(Collectors.toMap(partition -> partition, partition -> OffsetSpec.latest()));
        try (Admin admin = cluster.admin()) {
            var ends = admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
            try {
                await().pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(50))
                        .atMost(timeout)
                        .ignoreExceptions()
                        .until(() -> {
                            var stable = admin.listOffsets(
                                            latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                                    .all()
                                    .get(10, TimeUnit.SECONDS);
                            return partitions.stream()
                                    .allMatch(p -> stable.get(p).offset()
                                            >= ends.get(p).offset());
                        });
            } catch (ConditionTimeoutException open) {
                fault(
                        "STUCK",
                        "a transaction stayed open in " + partitions + " before their offsets "
                                + ends.values().stream()
                                        .map(end -> Long.toString(end.offset()))
                                        .toList() + " for " + timeout);
            }
        }
    }

    private void apply(FaultPlan.Step step) throws Exception {
        switch (step.kind()) {
            case KILL_LEADER -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                MemberProcess victim = members.get(holder);
                if (victim == null) {
                    return; // no holder to kill: awaitHolder recorded STUCK
                }
                victim.kill();
                fault("KILL_LEADER", holder);
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                long registeredAfter = observer.observe(role, Duration.ZERO).readUpTo();
                victim.start();
                fault("RESTART_MEMBER", holder);
                // The JVM takes a few seconds to register; the next fault waits for it.
                restarting.add(tailChecker.submit(() -> checkTail(holder, registeredAfter)));
            }
            case PAUSE_LEADER -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                MemberProcess zombie = members.get(holder);
                if (zombie == null) {
                    return;
                }
                zombie.pause();
                fault("PAUSE_LEADER", holder);
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                Thread.sleep(step.lingerMillis()); // the zombie stays frozen a while longer: part of the fault
                zombie.resume();
                fault("RESUME_MEMBER", holder);
            }
            case CUT_LEADER -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                if (!members.containsKey(holder)) {
                    return;
                }
                List<TcpProxy> links = proxiesOf(holder);
                links.forEach(TcpProxy::cut);
                fault("CUT_LEADER", holder);
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                Thread.sleep(step.lingerMillis());
                links.forEach(TcpProxy::restore);
                fault("RESTORE_MEMBER", holder);
            }
            case KILL_BROKER -> {
                String lagged = brokerFaultAlone();
                int node =
                        step.partitionLeader() ? coordinationPartitionLeader() : 1 + random.nextInt(settings.brokers());
                cluster.kill(node);
                fault(
                        "KILL_BROKER",
                        "node-" + node + (step.partitionLeader() ? " (leads the role's partition)" : "") + lagged);
                // Down for longer than broker.session.timeout.ms (3 s), so the controller notices
                // the crash and takes the node out of every ISR, as after a real crash.
                Thread.sleep(BROKER_DOWN.toMillis() + step.lingerMillis()); // part of the fault
                long restarting = System.nanoTime();
                cluster.restart(node);
                cluster.awaitBrokers(settings.brokers(), Duration.ofSeconds(90));
                long up = System.nanoTime();
                // Healed means caught up: until the node is back in every ISR, killing another
                // broker would leave partitions below min.insync.replicas (two faults at once).
                String last = awaitFullIsr(Duration.ofSeconds(120));
                fault(
                        "RESTART_BROKER",
                        "node-" + node + " (up after " + TimeUnit.NANOSECONDS.toMillis(up - restarting)
                                + " ms, back in every ISR " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - up)
                                + " ms later"
                                + (last.isEmpty() ? "" : "; the last to catch up: " + last) + ")");
            }
            case TERM_LEADER -> {
                String holder = burstingHolder();
                MemberProcess victim = members.get(holder);
                if (victim == null) {
                    return;
                }
                long registeredAfter = observer.observe(role, Duration.ZERO).readUpTo();
                fault("TERM_LEADER", holder + " while writing at full speed");
                boolean exited = victim.terminate(TERM_TIMEOUT.toMillis());
                fault("MEMBER_EXITED", holder + (exited ? "" : " did not exit within " + TERM_TIMEOUT + "; killed"));
                if (!exited) {
                    victim.kill();
                    fault("STUCK", holder + " did not shut down on SIGTERM within " + TERM_TIMEOUT);
                }
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                control(holder, "burst", "false");
                victim.start();
                fault("RESTART_MEMBER", holder);
                restarting.add(tailChecker.submit(() -> checkTail(holder, registeredAfter)));
            }
            case PAUSE_BROKER -> {
                String lagged = brokerFaultAlone();
                int node =
                        step.partitionLeader() ? coordinationPartitionLeader() : 1 + random.nextInt(settings.brokers());
                cluster.pause(node);
                fault(
                        "PAUSE_BROKER",
                        "node-" + node + (step.partitionLeader() ? " (leads the role's partition)" : "") + lagged);
                // Frozen past broker.session.timeout.ms (3 s): the controller fences it while its sockets stay open.
                Thread.sleep(BROKER_DOWN.toMillis() + step.lingerMillis()); // part of the fault
                cluster.resume(node);
                long resumed = System.nanoTime();
                String last = awaitFullIsr(Duration.ofSeconds(120));
                fault(
                        "RESUME_BROKER",
                        "node-" + node + " (back in every ISR "
                                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed) + " ms later"
                                + (last.isEmpty() ? "" : "; the last to catch up: " + last) + ")");
            }
            case CHALLENGER -> challenge();
            case RELEASE_LEADER -> {
                String holder = burstingHolder();
                if (holder == null) {
                    return;
                }
                fault("RELEASE_LEADER", holder + " while writing at full speed");
                control(holder, "release", Long.toString(Long.parseLong(control(holder, "release")) + 1));
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                control(holder, "burst", "false");
                fault("RELEASED", holder);
            }
            case CLOCK_STEP -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                List<String> standbys =
                        members.keySet().stream().filter(m -> !m.equals(holder)).toList();
                boolean onHolder = random.nextBoolean() || standbys.isEmpty();
                String target = onHolder ? holder : standbys.get(random.nextInt(standbys.size()));
                long magnitude = settings.lease().toMillis() + 500 + random.nextInt(1500);
                long skew = random.nextBoolean() ? magnitude : -magnitude;
                control(target, "skew", Long.toString(skew));
                fault(
                        "CLOCK_STEP",
                        target + (onHolder ? " (holder) " : " (standby) ") + (skew > 0 ? "+" : "") + skew + " ms");
                // The member lives with the stepped clock for more than two leases: part of the fault.
                Thread.sleep(2 * settings.lease().toMillis() + step.lingerMillis());
                control(target, "skew", "0");
                fault("CLOCK_RESET", target);
            }
            case CUT_COORDINATOR -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                if (!members.containsKey(holder)) {
                    return;
                }
                int coordinator = transactionCoordinator(role.name());
                TcpProxy link = proxies.get(holder + "@" + coordinator);
                link.cut();
                fault(
                        "CUT_COORDINATOR",
                        holder + " from node-" + coordinator + ", the coordinator of " + role.name()
                                + "'s transactional id (its other links stay)");
                awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
                Thread.sleep(step.lingerMillis());
                link.restore();
                fault("RESTORE_MEMBER", holder);
            }
            case FORGE -> {
                String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
                int appended = forge(holder);
                fault("FORGE", appended + " forged records while " + holder + " holds " + role.name());
                // While the forged leases are the newest records, and after the holder answered them.
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                while (System.nanoTime() < until) {
                    askWhoIsCurrent();
                    Thread.sleep(100); // sampling describe() at a steady rate: part of the fault
                }
            }
            case EXPIRE_TRANSACTIONAL_ID -> expireTransactionalId(step);
            case GARBAGE -> {
                int appended = appendGarbage();
                fault("GARBAGE", appended + " records");
                // The standbys read the partition continuously; give them a moment to report.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (mostMalformedReported() < garbageInjected && System.nanoTime() < deadline) {
                    Thread.sleep(100); // polling the members' output files
                }
            }
        }
    }

    /**
     * Lets the holder write at full speed for a second (asynchronous guarded sends) and
     * returns it, still bursting, once the role's lease still names it: a fault meant for
     * a holder under load must not hit a member that lost the role meanwhile. Null (and
     * STUCK) when three tries found no such holder.
     */
    private String burstingHolder() throws IOException, InterruptedException {
        for (int attempt = 0; attempt < 3; attempt++) {
            String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
            if (!members.containsKey(holder)) {
                return null;
            }
            control(holder, "burst", "true");
            Thread.sleep(1000); // the burst runs before the fault strikes: part of the fault
            if (holder.equals(currentHolder())) {
                return holder;
            }
            control(holder, "burst", "false");
        }
        fault("STUCK", "no holder kept the role through a second of full-speed writes, three times");
        return null;
    }

    /** The member the role's lease names now, read up to the partition's end, or null when none holds it. */
    private String currentHolder() {
        return liveHolder(observer.observe(role, Duration.ofMillis(200))).orElse(null);
    }

    /** The member a status's lease names, while that lease's deadline has not passed. */
    private static Optional<String> liveHolder(LeadershipStatus state) {
        return state.lease()
                .filter(lease -> lease.deadline().toEpochMilli() > System.currentTimeMillis())
                .map(LeaseSnapshot::holder)
                .map(MemberId::value);
    }

    /**
     * Freezes every member until the coordinator has expired the role's transactional id
     * (the checker does not count this window against the gap bound: the harness made the
     * outage), thaws every member but the old holder, and thaws that zombie once another
     * member holds the role: its producer id and epoch are of a transactional id the
     * coordinator forgot.
     */
    private void expireTransactionalId(FaultPlan.Step step) throws Exception {
        String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
        List<MemberProcess> frozen =
                members.values().stream().filter(MemberProcess::alive).toList();
        frozen.forEach(MemberProcess::pause);
        fault("OUTAGE_BEGIN", "every member frozen");
        fault("EXPIRE_TRANSACTIONAL_ID", holder + " held " + role.name());
        long start = System.nanoTime();
        boolean expired = false;
        try (Admin admin = cluster.admin()) {
            long deadline = start + TimeUnit.SECONDS.toNanos(60);
            while (!expired && System.nanoTime() < deadline) {
                try {
                    admin.describeTransactions(List.of(role.name()))
                            .description(role.name())
                            .get(10, TimeUnit.SECONDS);
                    Thread.sleep(200); // polling the coordinator
                } catch (java.util.concurrent.ExecutionException e) {
                    expired = e.getCause() instanceof org.apache.kafka.common.errors.TransactionalIdNotFoundException;
                    if (!expired) {
                        Thread.sleep(200);
                    }
                }
            }
        }
        fault(
                expired ? "TRANSACTIONAL_ID_EXPIRED" : "STUCK",
                role.name() + (expired ? " expired after " : " not expired after ")
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
        frozen.stream().filter(member -> !member.id().equals(holder)).forEach(MemberProcess::resume);
        fault("OUTAGE_END", "every member but " + holder + " thawed");
        awaitHolder(h -> !h.equals(holder), Duration.ofSeconds(60));
        Thread.sleep(step.lingerMillis());
        frozen.stream().filter(member -> member.id().equals(holder)).forEach(MemberProcess::resume);
        fault("RESUME_MEMBER", holder);
    }

    /** The broker that coordinates a transactional id now. */
    private int transactionCoordinator(String transactionalId) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId)
                    .get(10, TimeUnit.SECONDS)
                    .coordinatorId();
        }
    }

    /**
     * A hostile producer (plain, no transaction: anyone with Write on the topic) appends, to
     * the dispatcher's partition: a lease naming an unknown member with a deadline a century
     * out, a lease naming a standby with a plausible deadline, and a lease tombstone stamped
     * half an hour ahead; and a tombstone and an absurd lease for a role sharing that
     * partition. Their offsets are remembered: they grant no tenure.
     */
    private int forge(String holder) throws Exception {
        int partition = RolePartitioner.partitionFor(role, COORDINATION_PARTITIONS);
        Role neighbour = roles.stream()
                .filter(other -> !other.equals(role)
                        && RolePartitioner.partitionFor(other, COORDINATION_PARTITIONS) == partition)
                .findFirst()
                .orElse(role);
        String standby = members.keySet().stream()
                .filter(m -> !m.equals(holder))
                .findFirst()
                .orElse("m-unknown");
        long now = System.currentTimeMillis();
        long century = Duration.ofDays(36_500).toMillis();
        // What anyone can read from the cluster: the coordinator's epoch and the holder's grant time.
        LeadershipStatus status = observer.describe(role);
        long producerId = status.coordinator().map(ProducerState::producerId).orElse(4240L);
        short epoch = status.coordinator().map(ProducerState::producerEpoch).orElse((short) 0);
        long holderGrantedAt =
                status.lease().map(lease -> lease.grantedAt().toEpochMilli()).orElse(now);
        List<ProducerRecord<byte[], byte[]>> records = List.of(
                forged(
                        partition,
                        now,
                        role,
                        new CoordinationRecord.Lease(MemberId.of("intruder"), 4242, (short) 7, now, now + century)),
                // The live holder's own leadership with a deadline already past, and a member
                // that does not hold the role with the coordinator's current epoch.
                forged(
                        partition,
                        now,
                        role,
                        new CoordinationRecord.Lease(MemberId.of(holder), producerId, epoch, holderGrantedAt, now - 1)),
                forged(
                        partition,
                        now,
                        role,
                        new CoordinationRecord.Lease(
                                MemberId.of(standby),
                                producerId,
                                epoch,
                                now - 60_000,
                                now + settings.lease().toMillis())),
                forged(
                        partition,
                        now,
                        role,
                        new CoordinationRecord.Lease(
                                MemberId.of(standby),
                                4243,
                                (short) 0,
                                now,
                                now + settings.lease().toMillis())),
                forged(partition, now + Duration.ofMinutes(30).toMillis(), role, null),
                forged(partition, now, neighbour, null),
                forged(
                        partition,
                        now,
                        neighbour,
                        new CoordinationRecord.Lease(MemberId.of("intruder"), 4244, (short) 1, now, now + century)));
        appendPlain(records).forEach(written -> forged.add(written.partition() + "/" + written.offset()));
        forgedInjected += records.size();
        return records.size();
    }

    /** Asks {@code describe()} who holds the main role and records the answer when it calls someone current. */
    private void askWhoIsCurrent() {
        long startedAt = System.currentTimeMillis();
        try {
            LeadershipStatus status = observer.describe(role);
            if (status.current()) {
                currentAnswers.add(new History.CurrentAnswer(
                        startedAt,
                        System.currentTimeMillis(),
                        role.name(),
                        status.holder().orElseThrow().value(),
                        status.lease().orElseThrow().token().term()));
            }
        } catch (RuntimeException unanswered) {
            // the cluster is moving (a fault): this sample has no answer, the next one may
        }
    }

    private static ProducerRecord<byte[], byte[]> forged(
            int partition, long timestamp, Role role, CoordinationRecord.Lease lease) {
        return new ProducerRecord<>(
                CoordinationCodec.COORDINATION_STATE_TOPIC,
                partition,
                timestamp,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                lease == null ? null : CoordinationCodec.encodeValue(lease));
    }

    /** The coordination topic compacts during the run, as production topics do over days (see {@link #COMPACTION}). */
    private void compactOften() throws Exception {
        try (Admin admin = cluster.admin()) {
            var topic = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC,
                    CoordinationCodec.COORDINATION_STATE_TOPIC);
            admin.incrementalAlterConfigs(Map.of(
                            topic,
                            COMPACTION.entrySet().stream()
                                    .map(e -> new org.apache.kafka.clients.admin.AlterConfigOp(
                                            new org.apache.kafka.clients.admin.ConfigEntry(e.getKey(), e.getValue()),
                                            org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))
                                    .toList()))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    private Path controlFile(String member) {
        return settings.dir().resolve(member + ".control");
    }

    private String control(String member, String key) {
        return controls.computeIfAbsent(member, m -> new ConcurrentHashMap<>()).getOrDefault(key, "0");
    }

    /** Sets one key of a member's control file (see SpringMember's Control), replacing the file atomically. */
    private void control(String member, String key, String value) throws IOException {
        Map<String, String> values = controls.computeIfAbsent(member, m -> new ConcurrentHashMap<>());
        values.put(key, value);
        Path file = controlFile(member);
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(
                next,
                values.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining("\n", "", "\n")));
        Files.move(
                next,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Plays a challenger that won the race to InitProducerId and died before writing its
     * lease: it takes the role's transactional id (fencing the holder's producer), commits
     * one marker to the command log, and is gone. The end of the role's coordination
     * partition, read before the InitProducerId, bounds the terms it fenced.
     */
    private void challenge() throws Exception {
        String holder = awaitHolder(h -> true, Duration.ofSeconds(60));
        TopicPartition coordination = new TopicPartition(
                CoordinationCodec.COORDINATION_STATE_TOPIC,
                RolePartitioner.partitionFor(role, COORDINATION_PARTITIONS));
        long termsBelow;
        try (Admin admin = cluster.admin()) {
            termsBelow = admin.listOffsets(Map.of(coordination, OffsetSpec.latest()))
                    .all()
                    .get(10, TimeUnit.SECONDS)
                    .get(coordination)
                    .offset();
        }
        long n = faults.stream().filter(f -> f.kind().equals("CHALLENGER")).count();
        try (KafkaProducer<byte[], byte[]> challenger = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                role.name(), // the role's transactional id, as members use it
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                30_000,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class))) {
            challenger.initTransactions();
            fault(
                    "CHALLENGER",
                    "InitProducerId for " + role.name() + " while " + holder + " holds it; terms below " + termsBelow
                            + " fenced");
            challenger.beginTransaction();
            challenger
                    .send(new ProducerRecord<>(
                            COMMANDS,
                            0,
                            role.name().getBytes(StandardCharsets.UTF_8),
                            (CHALLENGER_MARK + n + " " + termsBelow).getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            challenger.commitTransaction();
            fault("CHALLENGER_DIED", "marker committed, no lease written");
        } catch (Exception e) {
            // A member's InitProducerId may have fenced the challenger first: then it fenced nothing that counts.
            fault(
                    "CHALLENGER_DIED",
                    "before its marker committed: " + e.getClass().getSimpleName());
        }
        // The holder's next write is refused; the role passes on (or back) once its lease ran out:
        // wait for a grant after the challenger, so the next fault does not hit the fenced holder.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Optional<LeaseSnapshot> lease =
                    observer.observe(role, Duration.ofMillis(200)).lease();
            if (lease.isPresent()
                    && lease.get().token().term() >= termsBelow
                    && lease.get().deadline().toEpochMilli() > System.currentTimeMillis()) {
                fault(
                        "CHALLENGER_SUCCEEDED",
                        lease.get().holder().value() + " under term "
                                + lease.get().token().term());
                return;
            }
        }
        fault("STUCK", "no grant after the challenger within 60 s");
    }

    private Coverage coverage(List<LeaseRecorder.Seen> seen) throws IOException {
        Map<String, Integer> placement = new LinkedHashMap<>();
        roles.forEach(each -> placement.put(each.name(), RolePartitioner.partitionFor(each, COORDINATION_PARTITIONS)));
        List<TopicPartition> partitions = new ArrayList<>();
        for (int partition = 0; partition < COORDINATION_PARTITIONS; partition++) {
            partitions.add(new TopicPartition(CoordinationCodec.COORDINATION_STATE_TOPIC, partition));
        }
        java.util.Set<String> left = new java.util.HashSet<>();
        readAll(partitions).forEach(record -> left.add(record.partition() + "/" + record.offset()));
        int compacted = (int) seen.stream()
                .filter(record -> !left.contains(record.partition() + "/" + record.offset()))
                .count();
        List<MemberEvent.Line> lines = memberLines();
        long suspicious = lines.stream()
                .filter(line -> line.event() == MemberEvent.SUSPICIOUS)
                .mapToLong(line -> line.number("count"))
                .max()
                .orElse(0);
        int released = (int) lines.stream()
                .filter(line -> line.event() == MemberEvent.RELEASE)
                .filter(line -> "true".equals(line.fields().get("released")))
                .count();
        return new Coverage(
                placement, seen.size(), compacted, forgedInjected, suspicious, released, currentAnswers.size());
    }

    private long mostMalformedReported() throws IOException {
        return memberLines().stream()
                .filter(line -> line.event() == MemberEvent.MALFORMED)
                .mapToLong(line -> line.number("count"))
                .max()
                .orElse(0);
    }

    /** How many commits of the unfenced members after the new holder's first end a calm early. */
    private static final int UNFENCED_COMMITS_AFTER_TAKEOVER = 5;

    /**
     * The quiet time after a step: {@code calmMillis}. In a run with unfenced members it ends
     * early once what the checker must catch is in the command log: the new holder of the
     * role committed a command after the step began, and every unfenced member had {@link
     * #UNFENCED_COMMITS_AFTER_TAKEOVER} commands acknowledged after that one and after the
     * fault healed (a thawed zombie first resolves the commit it was frozen in, then writes
     * under its old term: each such command is appended after the new holder fenced it, and
     * behind a command of a higher term).
     */
    private void calm(FaultPlan.Step step, long stepStarted, long healed) throws Exception {
        if (settings.unfenced().isEmpty()) {
            Thread.sleep(step.calmMillis());
            return;
        }
        long deadline = System.currentTimeMillis() + step.calmMillis();
        while (System.currentTimeMillis() < deadline) {
            List<MemberEvent.Line> acks = memberLines().stream()
                    .filter(line -> line.event() == MemberEvent.ACK)
                    .filter(line -> roleOf(line).equals(role.name()))
                    .toList();
            OptionalLong takeover = acks.stream()
                    .filter(line -> !settings.unfenced().contains(line.member()) && line.at() > stepStarted)
                    .mapToLong(MemberEvent.Line::at)
                    .min();
            if (takeover.isPresent()) {
                long after = Math.max(healed, takeover.getAsLong());
                boolean caught = settings.unfenced().stream()
                        .allMatch(zombie -> acks.stream()
                                        .filter(line -> line.member().equals(zombie) && line.at() > after)
                                        .count()
                                >= UNFENCED_COMMITS_AFTER_TAKEOVER);
                if (caught) {
                    return;
                }
            }
            Thread.sleep(100); // polling the members' output files
        }
    }

    /** Every event line the members wrote so far, across all their lives. */
    private List<MemberEvent.Line> memberLines() throws IOException {
        List<MemberEvent.Line> lines = new ArrayList<>();
        for (MemberProcess member : members.values()) {
            for (String text : Files.readAllLines(member.output(), StandardCharsets.UTF_8)) {
                MemberEvent.Line line = MemberEvent.parse(text);
                if (line != null) {
                    lines.add(line);
                }
            }
        }
        return lines;
    }

    /**
     * Waits until every replica is in sync before a broker fault: a follower that fell out of
     * the ISR on this busy machine (seen 1 s before a kill) turns the loss of another broker
     * into partitions below min.insync.replicas, two faults at once.
     *
     * @return for the fault's record, what lagged, if anything
     */
    private String brokerFaultAlone() throws Exception {
        long from = System.nanoTime();
        String behind = awaitFullIsr(Duration.ofSeconds(120));
        return behind.isEmpty()
                ? ""
                : "; first waited " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from) + " ms for " + behind
                        + " to be in sync";
    }

    /** Waits until every partition the members use has its full ISR; returns the partitions that were the last to catch up. */
    private String awaitFullIsr(Duration timeout) throws Exception {
        List<String> topics = List.of(
                CoordinationCodec.COORDINATION_STATE_TOPIC,
                "__transaction_state",
                COMMANDS,
                REQUESTS,
                "__consumer_offsets");
        long deadline = System.nanoTime() + timeout.toNanos();
        List<String> behind = List.of();
        try (Admin admin = cluster.admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    List<String> shortIsr = new ArrayList<>();
                    admin.describeTopics(topics)
                            .allTopicNames()
                            .get(10, TimeUnit.SECONDS)
                            .forEach((name, topic) -> topic.partitions().stream()
                                    .filter(partition -> partition.isr().size()
                                            < partition.replicas().size())
                                    .forEach(partition -> shortIsr.add(name + "-" + partition.partition())));
                    if (shortIsr.isEmpty()) {
                        return String.join(",", behind);
                    }
                    behind = shortIsr;
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException notYet) {
                    // the metadata is moving; ask again
                }
                Thread.sleep(200); // polling the cluster's metadata
            }
        }
        fault("STUCK", "replicas did not catch up within " + timeout + ": " + behind);
        return String.join(",", behind);
    }

    private List<TcpProxy> proxiesOf(String member) {
        return proxies.entrySet().stream()
                .filter(e -> e.getKey().startsWith(member + "@"))
                .map(Map.Entry::getValue)
                .toList();
    }

    /** Waits until the role's lease names a member that passes {@code accept}; records STUCK and goes on if none does. */
    private String awaitHolder(Predicate<String> accept, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<String> holder = liveHolder(observer.observe(role, Duration.ofMillis(200)));
            if (holder.isPresent() && accept.test(holder.get())) {
                return holder.get();
            }
        }
        fault("STUCK", "no acceptable holder within " + timeout);
        return observer.observe(role, Duration.ZERO)
                .holder()
                .map(MemberId::value)
                .orElse("none");
    }

    private List<String> roster() {
        return observer.observe(role, Duration.ZERO).roster().stream()
                .map(entry -> entry.member().value())
                .toList();
    }

    /** How long a restarted member may take to start and register again. */
    private static final Duration REGISTER_AGAIN_WITHIN = Duration.ofSeconds(120);

    /**
     * Waits until every restarted member registered again (or its check recorded STUCK).
     *
     * @return the nanoseconds waited
     */
    private long awaitRestartedMembers() throws Exception {
        long from = System.nanoTime();
        for (java.util.concurrent.Future<?> check : restarting) {
            check.get(); // bounded: a check gives up after REGISTER_AGAIN_WITHIN
        }
        restarting.clear();
        return System.nanoTime() - from;
    }

    /**
     * Once the restarted member's new registration shows, no member that registered before
     * it may rank after it. Members of the old roster may legitimately rank after it when
     * they registered again later (pruned as silent, or thawed): that is told apart by the
     * offsets, not by who was in the roster, because this check can see the roster late.
     */
    private void checkTail(String member, long registeredAfter) {
        // The wait includes starting the member's JVM, which took 45 s on a 2-core machine
        // running two builds (a default build failed at 30 s): not the library's time.
        long deadline = System.nanoTime() + REGISTER_AGAIN_WITHIN.toNanos();
        while (System.nanoTime() < deadline) {
            List<RankedMember> roster =
                    tailObserver.observe(role, Duration.ofMillis(200)).roster();
            int at = -1;
            for (int i = 0; i < roster.size(); i++) {
                if (roster.get(i).member().value().equals(member)
                        && roster.get(i).registrationOffset() >= registeredAfter) {
                    at = i;
                }
            }
            if (at >= 0) {
                long registered = roster.get(at).registrationOffset();
                List<String> behind = roster.subList(at + 1, roster.size()).stream()
                        .filter(entry -> entry.registrationOffset() < registered)
                        .map(entry -> entry.member().value())
                        .toList();
                tailChecks.add(new History.TailCheck(System.currentTimeMillis(), member, behind));
                return;
            }
        }
        fault("STUCK", member + " did not register again within " + REGISTER_AGAIN_WITHIN.toSeconds() + " s");
    }

    private int coordinationPartitionLeader() throws Exception {
        int partition = RolePartitioner.partitionFor(role, COORDINATION_PARTITIONS);
        try (Admin admin = cluster.admin()) {
            TopicDescription topic = admin.describeTopics(List.of(CoordinationCodec.COORDINATION_STATE_TOPIC))
                    .allTopicNames()
                    .get(10, TimeUnit.SECONDS)
                    .get(CoordinationCodec.COORDINATION_STATE_TOPIC);
            var leader = topic.partitions().get(partition).leader();
            return leader == null ? 1 + random.nextInt(settings.brokers()) : leader.id();
        }
    }

    /** Appends records no member may act on: a lease and a registration of an unknown format version, and a garbage key. */
    private int appendGarbage() throws Exception {
        int partition = RolePartitioner.partitionFor(role, COORDINATION_PARTITIONS);
        byte[] unknownVersion = {0x00, 0x63, 0x01, 0x02, 0x03};
        byte[] garbageKey = new byte[12];
        random.nextBytes(garbageKey);
        garbageKey[0] = (byte) 0xFF; // version 0xFFxx: never a valid key
        List<ProducerRecord<byte[], byte[]>> records = List.of(
                new ProducerRecord<>(
                        CoordinationCodec.COORDINATION_STATE_TOPIC,
                        partition,
                        CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                        unknownVersion),
                new ProducerRecord<>(
                        CoordinationCodec.COORDINATION_STATE_TOPIC,
                        partition,
                        CoordinationCodec.encodeKey(CoordinationKey.registration(role, MemberId.of("intruder"))),
                        new byte[] {0x00, 0x00, 0x7F}),
                new ProducerRecord<>(
                        CoordinationCodec.COORDINATION_STATE_TOPIC,
                        partition,
                        garbageKey,
                        "not a coordination record".getBytes(StandardCharsets.UTF_8)));
        appendPlain(records);
        garbageInjected += records.size();
        return records.size();
    }

    /**
     * Appends records as any client with Write on the topic can: a plain producer, no
     * transaction, acks=all. Returns where each landed.
     */
    private List<org.apache.kafka.clients.producer.RecordMetadata> appendPlain(
            List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        List<org.apache.kafka.clients.producer.RecordMetadata> written = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG,
                "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class))) {
            for (ProducerRecord<byte[], byte[]> record : records) {
                written.add(producer.send(record).get(30, TimeUnit.SECONDS));
            }
        }
        return written;
    }

    private void fault(String kind, String target) {
        History.Fault fault = new History.Fault(System.currentTimeMillis(), kind, target);
        faults.add(fault);
        System.out.println(
                "[chaos " + settings.name() + "] " + Instant.ofEpochMilli(fault.at()) + " " + kind + " " + target);
    }

    private Map<String, Integer> countFaults() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (FaultKind kind : FaultKind.values()) {
            int count = (int)
                    faults.stream().filter(f -> f.kind().equals(kind.name())).count();
            if (count > 0) {
                counts.put(kind.name(), count);
            }
        }
        int restarts = (int)
                faults.stream().filter(f -> f.kind().equals("RESTART_MEMBER")).count();
        if (restarts > 0) {
            counts.put("RESTART_MEMBER", restarts);
        }
        int expired = (int) faults.stream()
                .filter(f -> f.kind().equals("TRANSACTIONAL_ID_EXPIRED"))
                .count();
        if (expired > 0) {
            counts.put("TRANSACTIONAL_ID_EXPIRED", expired);
        }
        int stuck = (int) faults.stream().filter(f -> f.kind().equals("STUCK")).count();
        if (stuck > 0) {
            counts.put("STUCK", stuck);
        }
        return counts;
    }

    // ---- reading the history back ----

    private History readHistory(Device device, long ended, List<LeaseRecorder.Seen> coordination) throws Exception {
        List<History.CommittedCommand> commands = new ArrayList<>();
        List<History.ChallengerFence> fences = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : readAll(new TopicPartition(COMMANDS, 0))) {
            String text = new String(record.value(), StandardCharsets.UTF_8);
            if (text.startsWith(CHALLENGER_MARK)) {
                fences.add(new History.ChallengerFence(
                        record.partition(),
                        record.offset(),
                        Long.parseLong(text.substring(CHALLENGER_MARK.length()).split(" ")[1]),
                        record.timestamp()));
                continue;
            }
            if (record.timestampType() != org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME) {
                throw new IllegalStateException("the command topic must keep log-append time: " + record);
            }
            Command command = Command.decode(record.value());
            commands.add(new History.CommittedCommand(
                    new String(record.key(), StandardCharsets.UTF_8),
                    record.partition(),
                    record.offset(),
                    command.member(),
                    command.term(),
                    command.seq(),
                    command.began(),
                    record.timestamp(),
                    command.request()));
        }
        List<MemberEvent.Line> lines = memberLines();
        Map<String, Long> reportedGrants = new HashMap<>();
        lines.stream()
                .filter(line -> line.event() == MemberEvent.GRANTED)
                .forEach(line -> reportedGrants.merge(
                        roleOf(line) + "/" + line.member() + "/" + line.number("term"), line.at(), Math::min));
        List<History.Tenure> tenures = new ArrayList<>();
        for (Role each : roles) {
            tenures.addAll(tenures(each, coordination, reportedGrants));
        }
        List<History.Ack> acks = new ArrayList<>();
        Map<String, Long> malformed = new LinkedHashMap<>();
        for (MemberEvent.Line line : lines) {
            switch (line.event()) {
                case ACK ->
                    acks.add(new History.Ack(
                            line.at(), roleOf(line), line.member(), line.number("term"), line.number("seq")));
                case MALFORMED -> malformed.merge(line.member(), line.number("count"), Math::max);
                default -> {}
            }
        }
        List<History.Delivery> deliveries = device.history().stream()
                .map(d -> new History.Delivery(d.at(), d.member(), d.term(), d.seq(), d.accepted()))
                .toList();
        return new History(
                commands,
                tenures,
                acks,
                deliveries,
                List.copyOf(faults),
                List.copyOf(tailChecks),
                garbageInjected,
                malformed,
                requestHistory(),
                ended,
                fences,
                outages(),
                List.copyOf(currentAnswers));
    }

    /** The role a member's line is about: the dispatcher when it names none (the core-level CommandMember's lines). */
    private static String roleOf(MemberEvent.Line line) {
        return line.fields().getOrDefault("role", SpringMember.ROLE);
    }

    /** The windows in which the harness froze every member (EXPIRE_TRANSACTIONAL_ID). */
    private List<History.Outage> outages() {
        List<History.Outage> outages = new ArrayList<>();
        Long began = null;
        for (History.Fault fault : List.copyOf(faults)) {
            if (fault.kind().equals("OUTAGE_BEGIN")) {
                began = fault.at();
            } else if (fault.kind().equals("OUTAGE_END") && began != null) {
                outages.add(new History.Outage(began, fault.at()));
                began = null;
            }
        }
        return outages;
    }

    /** What the request producer sent and had acknowledged, where each request is in the input, and the group's offsets. */
    private History.Requests requestHistory() throws Exception {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int partition = 0; partition < REQUEST_PARTITIONS; partition++) {
            partitions.add(new TopicPartition(REQUESTS, partition));
        }
        Map<String, List<History.InputPosition>> inputs = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : readAll(partitions)) {
            inputs.computeIfAbsent(new String(record.value(), StandardCharsets.UTF_8), id -> new ArrayList<>())
                    .add(new History.InputPosition(record.partition(), record.offset()));
        }
        Map<Integer, Long> committed = new HashMap<>();
        try (Admin admin = cluster.admin()) {
            admin.listConsumerGroupOffsets(pipeline.groupId())
                    .partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS)
                    .forEach((partition, offset) -> {
                        if (partition.topic().equals(REQUESTS) && offset != null) {
                            committed.put(partition.partition(), offset.offset());
                        }
                    });
        }
        return new History.Requests(requests.sent(), requests.acknowledged(), inputs, committed);
    }

    /**
     * Groups one role's lease records, as the recorder saw them live, into tenures: a new
     * (member, grantedAt) pair is a grant, its offset the term. Times are when the recorder
     * received each record (a stepped lease clock does not move them; a grant counts from
     * its member's GRANTED line when that came first); forged records grant nothing.
     */
    private List<History.Tenure> tenures(
            Role of, List<LeaseRecorder.Seen> coordination, Map<String, Long> reportedGrants) {
        int partition = RolePartitioner.partitionFor(of, COORDINATION_PARTITIONS);
        List<History.Tenure> tenures = new ArrayList<>();
        History.Tenure current = null;
        long currentGrantedAt = -1; // the lease's own grantedAt: what its renewals repeat
        for (LeaseRecorder.Seen record : coordination) {
            if (record.partition() != partition || forged.contains(record.partition() + "/" + record.offset())) {
                continue;
            }
            try {
                CoordinationKey key = CoordinationCodec.decodeKey(record.key());
                if (!key.role().equals(of) || key.kind() != RecordKind.LEASE) {
                    continue;
                }
                Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), record.value());
                if (value.isEmpty()) {
                    if (current != null && current.releasedAt().isEmpty()) {
                        current = new History.Tenure(
                                of.name(),
                                current.term(),
                                current.member(),
                                current.grantedAt(),
                                current.lastLeaseAt(),
                                OptionalLong.of(record.receivedAt()),
                                current.fencesFrom());
                        tenures.set(tenures.size() - 1, current);
                    }
                    continue;
                }
                CoordinationRecord.Lease lease = (CoordinationRecord.Lease) value.get();
                if (current != null
                        && current.member().equals(lease.member().value())
                        && currentGrantedAt == lease.grantedAt()) {
                    current = new History.Tenure(
                            of.name(),
                            current.term(),
                            current.member(),
                            current.grantedAt(),
                            record.receivedAt(),
                            current.releasedAt(),
                            current.fencesFrom());
                    tenures.set(tenures.size() - 1, current);
                } else {
                    long granted = Math.min(
                            record.receivedAt(),
                            reportedGrants.getOrDefault(
                                    of.name() + "/" + lease.member().value() + "/" + record.offset(), Long.MAX_VALUE));
                    current = new History.Tenure(
                            of.name(),
                            record.offset(),
                            lease.member().value(),
                            granted,
                            record.receivedAt(),
                            OptionalLong.empty(),
                            granted);
                    currentGrantedAt = lease.grantedAt();
                    tenures.add(current);
                }
            } catch (MalformedRecordException garbage) {
                // the harness's own garbage (or a foreign record): not a lease
            }
        }
        return tenures;
    }

    private List<ConsumerRecord<byte[], byte[]>> readAll(TopicPartition partition) {
        return readAll(List.of(partition));
    }

    /** Every record of these partitions up to their last stable offsets, in offset order per partition. */
    private List<ConsumerRecord<byte[], byte[]>> readAll(List<TopicPartition> partitions) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                IsolationLevel.READ_COMMITTED.toString().toLowerCase(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class))) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // Under read_committed the end offset is the last stable offset: everything decided so far.
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + partitions + " to offsets " + ends);
                }
                consumer.poll(Duration.ofMillis(500)).forEach(records::add);
            }
        }
        return records;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                for (Path path :
                        paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }
    }

    /**
     * Per fault kind: how often it ran, the leadership changes that followed it, the
     * violations found, and the longest leaderless gap that followed it in any role (a gap
     * belongs to the last fault injected before the grant that closed it; the part of a gap
     * inside an outage the harness made does not count, as for the checker). The whole run
     * is judged against one bound; violations are listed below with their evidence.
     */
    static String byFaultKind(History history, Report report) {
        Map<String, long[]> byKind = new LinkedHashMap<>(); // {count, changes, longest gap, role index of it}
        for (FaultKind kind : FaultKind.values()) {
            int count = report.faultCounts().getOrDefault(kind.name(), 0);
            if (count > 0) {
                byKind.put(kind.name(), new long[] {count, 0, 0});
            }
        }
        Map<String, String> longestIn = new HashMap<>();
        Map<String, List<History.Tenure>> byRole = history.tenures().stream()
                .collect(Collectors.groupingBy(History.Tenure::role, LinkedHashMap::new, Collectors.toList()));
        byRole.forEach((role, tenures) -> {
            List<History.Tenure> ordered = tenures.stream()
                    .sorted(java.util.Comparator.comparingLong(History.Tenure::term))
                    .toList();
            for (int i = 1; i < ordered.size(); i++) {
                long grant = ordered.get(i).grantedAt();
                long ended = ordered.get(i - 1).endedAt();
                long gap = grant - ended - Checker.timeInOutages(ended, grant, history.outages());
                history.faults().stream()
                        .filter(f -> f.at() <= grant && byKind.containsKey(f.kind()))
                        .reduce((first, second) -> second)
                        .ifPresent(f -> {
                            long[] figures = byKind.get(f.kind());
                            figures[1]++;
                            if (gap > figures[2]) {
                                figures[2] = gap;
                                longestIn.put(f.kind(), role);
                            }
                        });
            }
        });
        int violations = report.result().violations().size();
        StringBuilder table = new StringBuilder(
                "| fault kind | count | leadership changes after it (all roles) | violations | longest leaderless gap after it | bound |\n"
                        + "|---|---|---|---|---|---|\n");
        byKind.forEach((kind, figures) -> table.append("| ")
                .append(kind)
                .append(" | ")
                .append(figures[0])
                .append(" | ")
                .append(figures[1])
                .append(" | ")
                .append(violations == 0 ? "0" : "see the list (" + violations + " in the run)")
                .append(" | ")
                .append(figures[2])
                .append(" ms")
                .append(longestIn.containsKey(kind) ? " (" + longestIn.get(kind) + ")" : "")
                .append(" | ")
                .append(report.settings().gapBound().millis())
                .append(" ms |\n"));
        return table.toString();
    }

    private void writeReport(Report report, History history) {
        StringBuilder text = new StringBuilder();
        text.append("# Chaos run ")
                .append(settings.name())
                .append("\n\nPlan: ")
                .append(settings.plan())
                .append("\n\n");
        text.append(report.table())
                .append("\nGap bound: ")
                .append(settings.gapBound())
                .append("\n\n")
                .append(byFaultKind(history, report))
                .append("\n## Violations\n\n");
        if (report.result().violations().isEmpty()) {
            text.append("none\n");
        }
        report.result().violations().forEach(v -> text.append("- ").append(v).append('\n'));
        text.append("\n## Requests\n\n")
                .append(requests.sent().size())
                .append(" sent, ")
                .append(requests.acknowledged().size())
                .append(" acknowledged, ")
                .append(requests.failed())
                .append(" failed")
                .append(requests.failed() > 0 ? " (the first: " + requests.firstFailure() + ")" : "")
                .append("; ")
                .append(report.result().requestsProcessed())
                .append(" have a command.\n");
        text.append("\n## Faults\n\n");
        history.faults()
                .forEach(f -> text.append("- ")
                        .append(Instant.ofEpochMilli(f.at()))
                        .append(' ')
                        .append(f.kind())
                        .append(' ')
                        .append(f.target())
                        .append('\n'));
        text.append("\n## Tenures\n\n");
        history.tenures().forEach(t -> text.append("- ").append(t).append('\n'));
        try {
            Files.writeString(settings.dir().resolve("report.md"), text.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
