package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.kafka.ChildJvm;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The leader pipeline ({@code LeaderPipeline} under a {@code Contender}) against Kafka Streams with
 * {@code processing.guarantee=exactly_once_v2}, both doing the same one-to-one map (request -> command) from a
 * one-partition input topic to a one-partition output topic, every member in a JVM of its own
 * ({@link PipelineMember}) on one in-process KRaft broker. Measures, alternating the systems round by round:
 *
 * <ol>
 *   <li>throughput: a backlog of requests written while the active member is paused, then committed commands per
 *       second as a {@code read_committed} consumer sees them (after a smaller warm-up backlog);
 *   <li>end-to-end latency at a fixed offered load: scheduled send time of a request to the moment its command is
 *       visible to a {@code read_committed} consumer (both clocks in this JVM);
 *   <li>kill -9 (SIGKILL) of the active member's JVM under the same load -> the first command of the standby visible,
 *       with failure detection tuned (lease = session timeout) and at Kafka Streams' defaults (45 s for both).
 * </ol>
 *
 * <pre>./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests -Dbench.only=pipeline</pre>
 *
 * Arguments: {@code --out=FILE}, {@code --pipeline-rounds=3} (rounds of throughput, latency and a kill per system),
 * {@code --pipeline-kills=5} (kills with tuned detection per system, the rounds' included; the rest are kill-only
 * rounds), {@code --pipeline-default-rounds=2} (kills at the 45 s defaults per system), {@code --pipeline-rate=1000}
 * (requests/s), {@code --pipeline-latency-seconds=5}, {@code --pipeline-backlog=50000}, {@code
 * --pipeline-detect-ms=6000} (tuned lease and session timeout), {@code --pipeline-batch-wait-ms=100}, {@code --pipeline-batch-records=100000}, {@code
 * --pipeline-big-batch-records=0} (ours' throughput once more with this many records per transaction at most; 0: not
 * measured).
 */
public final class PipelineBench {

    static final String BEGIN = "<!-- BEGIN GENERATED: benchmarks/ PipelineBench; do not edit by hand -->";
    static final String END = "<!-- END GENERATED: PipelineBench -->";
    static final String COMMAND = "./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests -Dbench.only=pipeline";

    static final String OURS = "krabka LeaderPipeline";
    static final String STREAMS = "Kafka Streams EOS v2";
    /** Kafka Streams' defaults: consumer session timeout, heartbeat interval, producer transaction timeout under EOS. */
    static final int STREAMS_DEFAULT_SESSION_MS = 45_000;

    static final int STREAMS_DEFAULT_HEARTBEAT_MS = 3_000;
    static final int STREAMS_DEFAULT_TX_TIMEOUT_MS = 10_000;
    static final int STREAMS_COMMIT_MS = 100;
    /** The options of every member JVM, both systems alike. */
    static final List<String> MEMBER_JVM = List.of(
            "-Xms128m",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dlog4j2.configurationFile=classpath:bench-log4j2.xml");

    private static final Duration READY = Duration.ofSeconds(60);
    private static final long STARTED = System.nanoTime();
    /** Opens one lane while the main thread opens the other (the common pool has one thread on two cores). */
    private static final ExecutorService OPENER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-opener");
        t.setDaemon(true);
        return t;
    });

    private final Config config;
    private final KafkaTestCluster cluster;
    private final Path logs;

    record Config(
            int rounds,
            int kills,
            int defaultRounds,
            int rate,
            int warmSeconds,
            int latencySeconds,
            int backlog,
            int detectMs,
            int batchWaitMs,
            int batchRecords,
            int bigBatchRecords) {}

    private PipelineBench(Config config, KafkaTestCluster cluster, Path logs) {
        this.config = config;
        this.cluster = cluster;
        this.logs = logs;
    }

    public static void main(String[] args) throws Exception {
        run(args);
        System.exit(0); // the broker's non-daemon threads
    }

    /** Runs the whole pipeline bench, prints its block and, with {@code --out}, writes it into that file. */
    static void run(String[] args) throws Exception {
        int rounds = intArg(args, "pipeline-rounds", 3);
        Config config = new Config(
                rounds,
                Math.max(rounds, intArg(args, "pipeline-kills", 5)),
                intArg(args, "pipeline-default-rounds", 2),
                intArg(args, "pipeline-rate", 1000),
                2,
                intArg(args, "pipeline-latency-seconds", 5),
                intArg(args, "pipeline-backlog", 50_000),
                intArg(args, "pipeline-detect-ms", 6000),
                intArg(args, "pipeline-batch-wait-ms", 100),
                intArg(args, "pipeline-batch-records", 100_000),
                intArg(args, "pipeline-big-batch-records", 0));
        String out = arg(args, "out", "");
        long began = System.nanoTime();
        LoadAverage load = LoadAverage.start();
        Path logs = Files.createTempDirectory("krabka-pipeline-bench");
        System.err.println("benchmarks: leader pipeline vs Kafka Streams EOS v2 (member logs in " + logs + ")");
        Results results;
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            results = new PipelineBench(config, cluster, logs).measure();
        }
        double minutes = (System.nanoTime() - began) / 60e9;
        String shown =
                Arrays.stream(args).filter(a -> a.startsWith("--pipeline-")).collect(Collectors.joining(" "));
        String report = report(config, results, minutes, shown, load.stop());
        System.out.println(report);
        if (!out.isEmpty()) {
            write(Path.of(out), report);
            System.err.println("written to " + Path.of(out).toAbsolutePath().normalize());
        }
    }

    // ------------------------------------------------------------------------------------------------ the run

    record Failover(
            long killToOutput,
            long killToTakeover,
            long killToFirstProcessed,
            long killToUnblocked,
            boolean openAtKill,
            long lastOldOutputBeforeKill) {}

    record Drain(long perSecond, double recordsPerTransaction, long nanosPerTransaction) {}

    static final class Results {
        final Map<String, List<Drain>> drains = new HashMap<>();
        final Map<String, List<List<Long>>> latencies = new HashMap<>();
        final Map<String, List<Failover>> tuned = new HashMap<>();
        final Map<String, List<Failover>> defaults = new HashMap<>();
        final Map<String, long[]> exactlyOnce = new HashMap<>(); // system -> [commands seen, duplicates, missing]
    }

    private Results measure() throws Exception {
        Results results = new Results();
        // The coordination topic, created once before the members race for it.
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = new CoordinationClient(transport)) {
            client.describe(Role.of("bench-pipeline-setup"));
        }
        Lane ours = new Lane("ours", "tuned", config.detectMs(), 0, 0);
        Lane streams = new Lane("streams", "tuned", config.detectMs(), config.detectMs() / 3, config.detectMs());
        List<Lane> lanes = List.of(ours, streams);
        try {
            System.err.printf("  [%s] starting both systems' members%n", elapsed());
            CompletableFuture<Void> opening = CompletableFuture.runAsync(
                    () -> uncheck(() -> {
                        ours.open();
                        return null;
                    }),
                    OPENER);
            streams.open();
            opening.get(5, TimeUnit.MINUTES);
            // One unmeasured backlog each before round 1, so the broker (in this JVM) is not cold for whichever goes
            // first.
            System.err.printf("  [%s] warm-up%n", elapsed());
            ours.drain(config.backlog());
            streams.drain(config.backlog());
            for (int round = 0; round < config.kills(); round++) {
                List<Lane> order = round % 2 == 0 ? lanes : List.of(streams, ours);
                for (Lane lane : order) {
                    System.err.printf("  [%s] round %d: %s%n", elapsed(), round + 1, lane.system);
                    if (round >= config.rounds()) { // a kill-only round
                        Failover f = lane.failover();
                        results.tuned
                                .computeIfAbsent(lane.system, k -> new ArrayList<>())
                                .add(f);
                        System.err.printf("    kill -> output %s ms%n", ms(f.killToOutput()));
                        if (round + 1 < config.kills()) {
                            lane.replaceStandby();
                        }
                        continue;
                    }
                    lane.drain(config.backlog() / 8); // warm-up
                    results.drains
                            .computeIfAbsent(lane.system, k -> new ArrayList<>())
                            .add(lane.drain(config.backlog()));
                    if (lane.system.equals("ours") && config.bigBatchRecords() > 0) {
                        lane.batch("big");
                        results.drains
                                .computeIfAbsent("ours-big", k -> new ArrayList<>())
                                .add(lane.drain(config.backlog()));
                        lane.batch("normal");
                    }
                    results.latencies
                            .computeIfAbsent(lane.system, k -> new ArrayList<>())
                            .add(lane.latency());
                    Failover f = lane.failover();
                    results.tuned
                            .computeIfAbsent(lane.system, k -> new ArrayList<>())
                            .add(f);
                    System.err.printf(
                            "    drain %d/s, kill -> output %s ms%n",
                            results.drains.get(lane.system).get(round).perSecond(), ms(f.killToOutput()));
                    if (round + 1 < config.kills()) {
                        lane.replaceStandby();
                    }
                }
            }
            for (Lane lane : lanes) {
                results.exactlyOnce.put(lane.system, lane.exactlyOnce());
                lane.close();
            }
            if (config.defaultRounds() > 0) {
                defaults(results);
            }
        } catch (Exception e) {
            System.err.println("pipeline bench failed; member logs in " + logs);
            throw e;
        }
        return results;
    }

    /** At the defaults: both systems at once (the wait is a timer), kills 2 s apart, first system alternating. */
    private void defaults(Results results) throws Exception {
        Lane ours45 = new Lane("ours", "default", STREAMS_DEFAULT_SESSION_MS, 0, 0);
        Lane streams45 = new Lane("streams", "default", 0, 0, 0);
        List<Lane> slow = List.of(ours45, streams45);
        System.err.printf("  [%s] defaults: starting both systems' members%n", elapsed());
        CompletableFuture<Void> opening = CompletableFuture.runAsync(
                () -> uncheck(() -> {
                    ours45.open();
                    return null;
                }),
                OPENER);
        streams45.open();
        opening.get(5, TimeUnit.MINUTES);
        for (int round = 0; round < config.defaultRounds(); round++) {
            List<Lane> order = round % 2 == 0 ? slow : List.of(streams45, ours45);
            System.err.printf(
                    "  [%s] defaults round %d: kill %s, then %s 2 s later%n",
                    elapsed(), round + 1, order.get(0).system, order.get(1).system);
            // Threads of their own: the common pool has one thread on two cores.
            CompletableFuture<Failover> first =
                    CompletableFuture.supplyAsync(() -> uncheck(order.get(0)::failover), OPENER);
            Timing.sleep(2000);
            CompletableFuture<Failover> second =
                    CompletableFuture.supplyAsync(() -> uncheck(order.get(1)::failover), OPENER);
            results.defaults
                    .computeIfAbsent(order.get(0).system, k -> new ArrayList<>())
                    .add(first.get(5, TimeUnit.MINUTES));
            results.defaults
                    .computeIfAbsent(order.get(1).system, k -> new ArrayList<>())
                    .add(second.get(5, TimeUnit.MINUTES));
            if (round + 1 < config.defaultRounds()) {
                CompletableFuture<Void> replacing = CompletableFuture.runAsync(
                        () -> uncheck(() -> {
                            ours45.replaceStandby();
                            return null;
                        }),
                        OPENER);
                streams45.replaceStandby();
                replacing.get(5, TimeUnit.MINUTES);
            }
        }
        for (Lane lane : slow) {
            long[] check = lane.exactlyOnce();
            long[] sum = results.exactlyOnce.get(lane.system);
            for (int i = 0; i < 3; i++) {
                sum[i] += check[i];
            }
            lane.close();
        }
    }

    private static String elapsed() {
        long s = (System.nanoTime() - STARTED) / 1_000_000_000L;
        return String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }

    private interface Step<T> {
        T run() throws Exception;
    }

    private static <T> T uncheck(Step<T> step) {
        try {
            return step.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** One system with one setting: its topics, its load, its watcher, its active member and its standby. */
    private final class Lane {
        final String system;
        final String label;
        final String input;
        final String output;
        final String group;
        /** ours: lease; streams: session timeout (0: default). */
        final int detectMs;

        final int heartbeatMs;
        final int txTimeoutMs;
        final Load load;
        final Watcher watcher;
        Member active;
        Member standby;
        int members;

        Lane(String system, String label, int detectMs, int heartbeatMs, int txTimeoutMs) {
            this.system = system;
            this.label = label;
            this.input = "bench-" + system + "-" + label + "-requests";
            this.output = "bench-" + system + "-" + label + "-commands";
            this.group = "bench-" + system + "-" + label;
            this.detectMs = detectMs;
            this.heartbeatMs = heartbeatMs;
            this.txTimeoutMs = txTimeoutMs;
            cluster.createTopic(input, 1);
            cluster.createTopic(output, 1);
            this.load = new Load(cluster.bootstrapServers(), input);
            this.watcher = new Watcher(cluster.bootstrapServers(), output);
        }

        String tag(int index) {
            return (system.equals("ours") ? "o" : "s") + (label.equals("tuned") ? "t" : "d") + index;
        }

        Member start() {
            String name = tag(members++);
            List<String> args = new ArrayList<>(List.of(
                    "system=" + system,
                    "bootstrap=" + cluster.bootstrapServers(),
                    "input=" + input,
                    "output=" + output,
                    "group=" + group,
                    "name=" + name));
            if (system.equals("ours")) {
                args.addAll(List.of(
                        "leaseMs=" + detectMs,
                        "renewMs=" + detectMs / 3,
                        "batchRecords=" + config.batchRecords(),
                        "batchWaitMs=" + config.batchWaitMs(),
                        "bigBatchRecords=" + Math.max(1, config.bigBatchRecords())));
            } else {
                args.add("commitMs=" + STREAMS_COMMIT_MS);
                if (detectMs > 0) {
                    args.add("sessionMs=" + detectMs);
                }
                if (heartbeatMs > 0) {
                    args.add("heartbeatMs=" + heartbeatMs);
                }
                if (txTimeoutMs > 0) {
                    args.add("txTimeoutMs=" + txTimeoutMs);
                }
            }
            return new Member(
                    name,
                    ChildJvm.start(PipelineMember.class.getName(), MEMBER_JVM, args, logs.resolve(name + ".log")),
                    logs.resolve(name + ".log"));
        }

        void open() throws Exception {
            active = start();
            active.await(system.equals("ours") ? "GRANTED" : "TASK", 0, READY);
            standby = start();
            awaitStandby(standby);
        }

        void awaitStandby(Member member) throws Exception {
            if (system.equals("ours")) {
                member.await("REGISTERED", 0, READY);
                return;
            }
            member.await("STATE", "RUNNING", 0, READY);
            long deadline = System.nanoTime() + READY.toNanos();
            while (System.nanoTime() < deadline) {
                ConsumerGroupDescription d = cluster.admin()
                        .describeConsumerGroups(List.of(group))
                        .all()
                        .get(10, TimeUnit.SECONDS)
                        .get(group);
                if (d.groupState() == GroupState.STABLE && d.members().size() == 2) {
                    Timing.sleep(500);
                    return;
                }
                Timing.sleep(100);
            }
            throw new IllegalStateException("the group " + group + " did not settle with two members");
        }

        /** The member that holds the work now: the writer of the command of a probe of ten requests. */
        Member writer() {
            long probe = load.burst(10);
            if (!watcher.awaitDistinct(probe + 10, Duration.ofSeconds(60))) {
                throw new IllegalStateException(system + ": a probe of ten requests was not committed within 60 s");
            }
            String tag = watcher.lastTag();
            if (tag == null || tag.equals(active.name)) {
                return active;
            }
            if (tag.equals(standby.name)) {
                Member swap = active;
                active = standby;
                standby = swap;
                return active;
            }
            throw new IllegalStateException(
                    "commands from " + tag + ", neither " + active.name + " nor " + standby.name);
        }

        /** Ours: switches the active member to the other batch size (a new run, so a new consumer). */
        void batch(String which) throws Exception {
            Member member = writer();
            long asked = System.nanoTime();
            member.send("batch " + which);
            member.await("BATCH", asked, Duration.ofSeconds(10));
        }

        /** Pauses the active member, writes {@code n} requests, resumes it: committed commands per second. */
        Drain drain(int n) throws Exception {
            Member member = writer();
            watcher.awaitDistinct(load.sent(), Duration.ofSeconds(60));
            long[] before = member.stats();
            long asked = System.nanoTime();
            member.send("pause");
            member.await("PAUSED", asked, Duration.ofSeconds(30));
            Timing.sleep(300);
            long from = load.burst(n);
            long resumed = System.nanoTime();
            member.send("resume");
            if (!watcher.awaitDistinct(from + n, Duration.ofSeconds(120))) {
                throw new IllegalStateException(system + ": the backlog was not committed within 120 s");
            }
            long[] after = member.stats();
            long[] arrivals = watcher.arrivals(from, from + n);
            Arrays.sort(arrivals);
            // From the resume to the backlog's last command visible: every transaction of the drain is inside.
            long perSecond = Math.round(n / ((arrivals[n - 1] - resumed) / 1e9));
            long transactions = after[1] - before[1];
            double perTx = transactions <= 0 ? Double.NaN : (double) (after[0] - before[0]) / transactions;
            long nanosPerTx = transactions <= 0 ? -1 : (arrivals[n - 1] - resumed) / transactions;
            System.err.printf(
                    "    %s drain of %d: %d/s (first command %s ms after resume), %.0f records and %s ms per transaction%n",
                    system, n, perSecond, ms(arrivals[0] - resumed), perTx, ms(nanosPerTx));
            return new Drain(perSecond, perTx, nanosPerTx);
        }

        /** Requests at the fixed rate: warm-up, then the measured seconds; returns the measured latencies. */
        List<Long> latency() throws Exception {
            writer();
            long[] range = load.paced(config.rate(), config.warmSeconds(), config.latencySeconds());
            if (!watcher.awaitDistinct(load.sent(), Duration.ofSeconds(60))) {
                throw new IllegalStateException(system + ": the paced requests were not committed within 60 s");
            }
            return watcher.latencies(range[0], range[1]);
        }

        /** Under the fixed load, kill -9 the active member: the times to the standby's first command and its steps. */
        Failover failover() throws Exception {
            Member victim = writer();
            Member next = standby;
            load.startPaced(config.rate());
            Timing.sleep(1000);
            TopicPartition partition = new TopicPartition(output, 0);
            long killed = victim.kill();
            long[] atKill = offsets(cluster.admin(), partition);
            long lastOld = watcher.lastArrivalOf(victim.name);
            // The output's last stable offset, every 20 ms: when it passes where it stood at the kill, the
            // dead member's open transaction (if it had one) has ended.
            long unblocked = -1;
            long firstNew = -1;
            long deadline = killed + TimeUnit.SECONDS.toNanos(180);
            while (System.nanoTime() < deadline && (firstNew < 0 || unblocked < 0)) {
                if (unblocked < 0 && offsets(cluster.admin(), partition)[0] > atKill[0]) {
                    unblocked = System.nanoTime();
                }
                if (firstNew < 0) {
                    firstNew = watcher.firstArrivalOf(next.name, killed);
                }
                Timing.sleep(20);
            }
            if (firstNew < 0) {
                throw new IllegalStateException(
                        system + ": no command from " + next.name + " within 180 s of the kill");
            }
            Timing.sleep(500);
            load.stopPaced();
            long takeover = next.await(system.equals("ours") ? "GRANTED" : "TASK", killed, Duration.ofSeconds(5));
            long processed = next.await("FIRST", killed, Duration.ofSeconds(5));
            if (!watcher.awaitDistinct(load.sent(), Duration.ofSeconds(60))) {
                throw new IllegalStateException(
                        system + ": requests sent around the kill were not committed within 60 s");
            }
            active = next;
            standby = null;
            return new Failover(
                    firstNew - killed,
                    takeover - killed,
                    processed - killed,
                    unblocked < 0 ? -1 : unblocked - killed,
                    atKill[0] < atKill[1],
                    killed - lastOld);
        }

        void replaceStandby() throws Exception {
            standby = start();
            awaitStandby(standby);
        }

        long[] exactlyOnce() {
            return new long[] {watcher.distinct(), watcher.duplicates(), load.sent() - watcher.distinct()};
        }

        void close() {
            for (Member m : new Member[] {active, standby}) {
                if (m != null) {
                    m.close();
                }
            }
            watcher.close();
            load.close();
        }
    }

    /** [last stable offset, high watermark] of one partition. */
    private static long[] offsets(Admin admin, TopicPartition partition) throws Exception {
        long stable = admin.listOffsets(
                        Map.of(partition, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(partition)
                .get(10, TimeUnit.SECONDS)
                .offset();
        long high = admin.listOffsets(
                        Map.of(partition, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                .partitionResult(partition)
                .get(10, TimeUnit.SECONDS)
                .offset();
        return new long[] {stable, high};
    }

    // ------------------------------------------------------------------------------------------------ members

    /** A member JVM: its events are the {@code EVENT} lines of its output file. */
    private static final class Member {
        final String name;
        final Process process;
        final Path log;

        Member(String name, Process process, Path log) {
            this.name = name;
            this.process = process;
            this.log = log;
        }

        long await(String event, long after, Duration timeout) throws Exception {
            return await(event, null, after, timeout);
        }

        /** The time of the first {@code event} (with this detail, if given) at or after {@code after}. */
        long await(String event, String detail, long after, Duration timeout) throws Exception {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                for (String[] e : events()) {
                    if (e[1].equals(event)
                            && Long.parseLong(e[2]) >= after
                            && (detail == null || (e.length > 3 && e[3].equals(detail)))) {
                        return Long.parseLong(e[2]);
                    }
                }
                if (!process.isAlive()) {
                    throw new IllegalStateException(
                            name + " exited (" + process.exitValue() + ") before " + event + "; see " + log);
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + ": no " + event + " within " + timeout + "; see " + log);
                }
                Thread.sleep(20);
            }
        }

        private List<String[]> events() throws IOException {
            if (!Files.exists(log)) {
                return List.of();
            }
            List<String[]> events = new ArrayList<>();
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                if (line.startsWith("EVENT ")) {
                    events.add(line.split(" ", 4));
                }
            }
            return events;
        }

        void send(String command) throws IOException {
            OutputStream in = process.getOutputStream();
            in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        /** [records processed, transactions committed] as the member counts them. */
        long[] stats() throws Exception {
            long asked = System.nanoTime();
            send("stats");
            await("STATS", asked, Duration.ofSeconds(10));
            String[] last = null;
            for (String[] e : events()) {
                if (e[1].equals("STATS")) {
                    last = e;
                }
            }
            Map<String, Long> values = new HashMap<>();
            for (String kv : last[3].split(" ")) {
                String[] p = kv.split("=");
                values.put(p[0], Long.parseLong(p[1]));
            }
            return new long[] {values.get("records"), values.get("transactions")};
        }

        /** SIGKILL (Process.destroyForcibly on Linux); returns the time just before the signal. */
        long kill() throws InterruptedException {
            long at = System.nanoTime();
            process.destroyForcibly();
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 137) {
                throw new IllegalStateException(name + " did not die of SIGKILL");
            }
            return at;
        }

        void close() {
            try {
                process.getOutputStream().close(); // the member halts when its stdin closes
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (IOException | InterruptedException e) {
                process.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ load and watcher

    /** Writes requests: {@code [seq (8), scheduled send nanos (8), padding]} to partition 0, acks=all, idempotent. */
    private static final class Load implements AutoCloseable {
        private final KafkaProducer<byte[], byte[]> producer;
        private final String topic;
        private final AtomicLong seq = new AtomicLong();
        private volatile boolean stop;
        private Thread pacer;

        Load(String bootstrap, String topic) {
            this.topic = topic;
            this.producer = new KafkaProducer<>(
                    Map.of(
                            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                            bootstrap,
                            ProducerConfig.ACKS_CONFIG,
                            "all",
                            ProducerConfig.LINGER_MS_CONFIG,
                            0,
                            ProducerConfig.CLIENT_ID_CONFIG,
                            "bench-load-" + topic),
                    new ByteArraySerializer(),
                    new ByteArraySerializer());
        }

        long sent() {
            return seq.get();
        }

        private void send(long scheduled) {
            ByteBuffer value = ByteBuffer.allocate(PipelineMember.REQUEST_BYTES);
            value.putLong(seq.getAndIncrement()).putLong(scheduled);
            producer.send(new ProducerRecord<>(topic, 0, null, value.array()));
        }

        /** {@code n} requests as fast as the producer takes them; returns the first sequence number. */
        long burst(int n) {
            long from = seq.get();
            for (int i = 0; i < n; i++) {
                send(System.nanoTime());
            }
            producer.flush();
            return from;
        }

        /** {@code rate}/s for {@code warm + measured} seconds; returns the sequence range of the measured part. */
        long[] paced(int rate, int warm, int measured) {
            long period = 1_000_000_000L / rate;
            long start = System.nanoTime();
            long from = -1;
            long total = (long) rate * (warm + measured);
            for (long i = 0; i < total; i++) {
                long at = start + i * period;
                park(at);
                if (i == (long) rate * warm) {
                    from = seq.get();
                }
                send(at); // the scheduled time: a send that fell behind still counts its delay
            }
            producer.flush();
            return new long[] {from, seq.get()};
        }

        void startPaced(int rate) {
            stop = false;
            pacer = new Thread(
                    () -> {
                        long period = 1_000_000_000L / rate;
                        long start = System.nanoTime();
                        for (long i = 0; !stop; i++) {
                            long at = start + i * period;
                            park(at);
                            send(at);
                        }
                        producer.flush();
                    },
                    "bench-pacer-" + topic);
            pacer.start();
        }

        void stopPaced() throws InterruptedException {
            stop = true;
            pacer.join();
        }

        private static void park(long at) {
            long left;
            while ((left = at - System.nanoTime()) > 0) {
                LockSupport.parkNanos(left);
            }
        }

        @Override
        public void close() {
            producer.close(Duration.ofSeconds(5));
        }
    }

    /** Reads the commands {@code read_committed} from the start, noting for each its arrival here. */
    private static final class Watcher implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final Thread thread;
        private final BitSet seen = new BitSet();
        private final List<String> tags = new ArrayList<>();
        private volatile boolean stop;
        private long[] seqs = new long[1 << 16];
        private long[] sents = new long[1 << 16];
        private long[] arrivals = new long[1 << 16];
        private int[] tagIndex = new int[1 << 16];
        private int size;
        private long distinct;
        private long duplicates;

        Watcher(String bootstrap, String topic) {
            Map<String, Object> settings = new HashMap<>();
            settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            settings.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100_000);
            settings.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
            settings.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-watcher-" + topic);
            consumer = new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            thread = new Thread(this::loop, "bench-watcher-" + topic);
            thread.setDaemon(true);
            thread.start();
        }

        private void loop() {
            while (!stop) {
                var records = consumer.poll(Duration.ofMillis(100));
                long now = System.nanoTime();
                synchronized (this) {
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        ByteBuffer v = ByteBuffer.wrap(r.value());
                        long seq = v.getLong(0);
                        String tag = new String(
                                r.value(),
                                PipelineMember.REQUEST_BYTES,
                                r.value().length - PipelineMember.REQUEST_BYTES,
                                StandardCharsets.UTF_8);
                        int t = tags.indexOf(tag);
                        if (t < 0) {
                            tags.add(tag);
                            t = tags.size() - 1;
                        }
                        if (seen.get((int) seq)) {
                            duplicates++;
                            continue;
                        }
                        seen.set((int) seq);
                        distinct++;
                        if (size == seqs.length) {
                            seqs = Arrays.copyOf(seqs, size * 2);
                            sents = Arrays.copyOf(sents, size * 2);
                            arrivals = Arrays.copyOf(arrivals, size * 2);
                            tagIndex = Arrays.copyOf(tagIndex, size * 2);
                        }
                        seqs[size] = seq;
                        sents[size] = v.getLong(8);
                        arrivals[size] = now;
                        tagIndex[size] = t;
                        size++;
                    }
                }
            }
            consumer.close();
        }

        synchronized long distinct() {
            return distinct;
        }

        synchronized long duplicates() {
            return duplicates;
        }

        synchronized String lastTag() {
            return size == 0 ? null : tags.get(tagIndex[size - 1]);
        }

        boolean awaitDistinct(long n, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (distinct() < n) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Timing.sleep(10);
            }
            return true;
        }

        /** Arrival times of the commands of requests {@code from} (inclusive) to {@code to} (exclusive). */
        synchronized long[] arrivals(long from, long to) {
            long[] out = new long[(int) (to - from)];
            int k = 0;
            for (int i = 0; i < size; i++) {
                if (seqs[i] >= from && seqs[i] < to) {
                    out[k++] = arrivals[i];
                }
            }
            return Arrays.copyOf(out, k);
        }

        synchronized List<Long> latencies(long from, long to) {
            List<Long> out = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                if (seqs[i] >= from && seqs[i] < to) {
                    out.add(arrivals[i] - sents[i]);
                }
            }
            return out;
        }

        /** The first arrival of a command written by {@code tag} at or after {@code after}; -1 if none yet. */
        synchronized long firstArrivalOf(String tag, long after) {
            int t = tags.indexOf(tag);
            long first = -1;
            // Arrivals are in the order noted, so only the tail after {@code after} is scanned.
            for (int i = size - 1; t >= 0 && i >= 0 && arrivals[i] >= after; i--) {
                if (tagIndex[i] == t) {
                    first = arrivals[i];
                }
            }
            return first;
        }

        synchronized long lastArrivalOf(String tag) {
            int t = tags.indexOf(tag);
            for (int i = size - 1; i >= 0; i--) {
                if (tagIndex[i] == t) {
                    return arrivals[i];
                }
            }
            return -1;
        }

        @Override
        public void close() {
            stop = true;
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The machine's 1-minute load average every 5 s of the run: this bench shares the machine with whatever else runs. */
    private static final class LoadAverage {
        private final List<Double> samples = new ArrayList<>();
        private final Thread thread;

        private LoadAverage() {
            thread = new Thread(
                    () -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            try {
                                double v = Double.parseDouble(Files.readString(Path.of("/proc/loadavg"))
                                        .split(" ")[0]);
                                synchronized (samples) {
                                    samples.add(v);
                                }
                                Thread.sleep(5000);
                            } catch (InterruptedException e) {
                                return;
                            } catch (IOException | RuntimeException e) {
                                return; // not Linux
                            }
                        }
                    },
                    "bench-loadavg");
            thread.setDaemon(true);
        }

        static LoadAverage start() {
            LoadAverage l = new LoadAverage();
            l.thread.start();
            return l;
        }

        String stop() {
            thread.interrupt();
            synchronized (samples) {
                if (samples.isEmpty()) {
                    return "load average not available";
                }
                List<Double> sorted = samples.stream().sorted().toList();
                return String.format(
                        Locale.ROOT,
                        "1-minute load average during the run: median %.1f, max %.1f (%d samples, 5 s apart)",
                        sorted.get(sorted.size() / 2),
                        sorted.get(sorted.size() - 1),
                        sorted.size());
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ report

    static String report(Config c, Results r, double minutes, String args, String load) {
        StringBuilder b = new StringBuilder();
        b.append(BEGIN).append('\n');
        b.append(String.format(
                Locale.ROOT,
                "The run took %.1f minutes, with `%s`%s.%n%n",
                minutes,
                COMMAND,
                args.isBlank() ? "" : " and `-Dbench.args=\"" + args.trim() + "\"`"));
        b.append("Machine: ")
                .append(Bench.machine())
                .append("; every member in a JVM of its own (")
                .append(String.join(" ", MEMBER_JVM.subList(0, 3)))
                .append("); ")
                .append(load)
                .append("\n\n");
        b.append(String.format(
                Locale.ROOT,
                "Settings. Same batching: a transaction is bounded by time only, %d ms, with no"
                        + " record cap on either side (ours: `maxBatchWait` %d ms from when the batch's first record was there,"
                        + " `maxBatchRecords` %d, large enough never to cap; its consumer polls at most 500 records at a time and a"
                        + " batch spans polls; Kafka Streams: `commit.interval.ms` %d, its EOS default, `max.poll.records` 1000,"
                        + " its default; a transaction spans the polls of one commit interval). Offered load %d requests/s of %d"
                        + " bytes; backlog %d requests (after a warm-up backlog of %d). Tuned failure detection %d ms: ours lease %d"
                        + " ms, renew every %d ms; Kafka Streams `session.timeout.ms` %d, `heartbeat.interval.ms` %d,"
                        + " `transaction.timeout.ms` %d. Defaults: ours lease %d ms (Kafka Streams' session timeout), renew every"
                        + " %d ms; Kafka Streams `session.timeout.ms` %d, `heartbeat.interval.ms` %d, `transaction.timeout.ms` %d."
                        + " One stream thread; classic group protocol; one broker (KafkaTestCluster, broker defaults but"
                        + " `group.initial.rebalance.delay.ms` 0).%n%n",
                c.batchWaitMs(),
                c.batchWaitMs(),
                c.batchRecords(),
                STREAMS_COMMIT_MS,
                c.rate(),
                PipelineMember.REQUEST_BYTES,
                c.backlog(),
                c.backlog() / 8,
                c.detectMs(),
                c.detectMs(),
                c.detectMs() / 3,
                c.detectMs(),
                c.detectMs() / 3,
                c.detectMs(),
                STREAMS_DEFAULT_SESSION_MS,
                STREAMS_DEFAULT_SESSION_MS / 3,
                STREAMS_DEFAULT_SESSION_MS,
                STREAMS_DEFAULT_HEARTBEAT_MS,
                STREAMS_DEFAULT_TX_TIMEOUT_MS));

        b.append(
                "Median over the rounds (with an even n, the mean of the two middle values); min and max are the extreme"
                        + " rounds.\n\n");
        b.append("| Measure | System | n | median | min | max | ours / Kafka Streams (median) |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|\n");
        Samples oursRate = new Samples(
                "", "", r.drains.get("ours").stream().map(Drain::perSecond).toList());
        Samples ksRate = new Samples(
                "", "", r.drains.get("streams").stream().map(Drain::perSecond).toList());
        List<String> drained =
                r.drains.containsKey("ours-big") ? List.of("ours", "streams", "ours-big") : List.of("ours", "streams");
        String[][] measures = {
            {"throughput, commands committed per s", "rate"},
            {"records per transaction in that drain", "size"},
            {"ms per transaction in that drain", "time"}
        };
        for (String[] measure : measures) {
            for (String system : drained) {
                List<Long> values = r.drains.get(system).stream()
                        .map(d -> switch (measure[1]) {
                            case "rate" -> d.perSecond();
                            case "size" -> Math.round(d.recordsPerTransaction());
                            default -> d.nanosPerTransaction();
                        })
                        .toList();
                Samples v = new Samples("", "", values);
                String ratio = "";
                if (measure[1].equals("rate") && !system.equals("streams")) {
                    ratio = String.format(Locale.ROOT, "%.2f", (double) median(v) / median(ksRate));
                }
                LongFunction<String> show = measure[1].equals("time") ? PipelineBench::ms : Long::toString;
                b.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d rounds | %s | %s | %s | %s |%n",
                        measure[0],
                        label(system, c),
                        v.n(),
                        show.apply(median(v)),
                        show.apply(v.values().get(0)),
                        show.apply(v.max()),
                        ratio));
            }
        }
        for (String kind : kinds(r)) {
            Map<String, List<Failover>> f = kind.equals("tuned") ? r.tuned : r.defaults;
            int detect = kind.equals("tuned") ? c.detectMs() : STREAMS_DEFAULT_SESSION_MS;
            Samples o = new Samples(
                    "", "", f.get("ours").stream().map(Failover::killToOutput).toList());
            Samples k = new Samples(
                    "",
                    "",
                    f.get("streams").stream().map(Failover::killToOutput).toList());
            String what = String.format(
                    Locale.ROOT, "kill -9 -> first new command visible, ms (%s, detection %d s)", kind, detect / 1000);
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %s | %s | %.2f |%n",
                    what,
                    OURS,
                    o.n(),
                    ms(median(o)),
                    ms(o.values().get(0)),
                    ms(o.max()),
                    (double) median(o) / median(k)));
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %s | %s | |%n",
                    what,
                    STREAMS,
                    k.n(),
                    ms(median(k)),
                    ms(k.values().get(0)),
                    ms(k.max())));
        }

        b.append(String.format(
                Locale.ROOT,
                "%nEnd-to-end latency at %d requests/s (scheduled send -> command visible"
                        + " `read_committed`), %d s per round after %d s of warm-up:%n%n",
                c.rate(),
                c.latencySeconds(),
                c.warmSeconds()));
        b.append(
                "| System | n | p50 ms | p90 ms | p99 ms | max ms | p50 per round | p99 per round | ours / Kafka Streams (p50, p99) |\n");
        b.append("|---|---:|---:|---:|---:|---:|---|---|---:|\n");
        Samples oursAll = pooled(r.latencies.get("ours"));
        Samples ksAll = pooled(r.latencies.get("streams"));
        for (String system : List.of("ours", "streams")) {
            Samples all = system.equals("ours") ? oursAll : ksAll;
            String perRound50 = r.latencies.get(system).stream()
                    .map(l -> ms(new Samples("", "", l).percentile(50)))
                    .collect(Collectors.joining(", "));
            String perRound99 = r.latencies.get(system).stream()
                    .map(l -> ms(new Samples("", "", l).percentile(99)))
                    .collect(Collectors.joining(", "));
            String ratio = system.equals("ours")
                    ? ""
                    : String.format(
                            Locale.ROOT,
                            "%.2f, %.2f",
                            (double) oursAll.percentile(50) / ksAll.percentile(50),
                            (double) oursAll.percentile(99) / ksAll.percentile(99));
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %s | %s | %s | %s | %s | %s | %s |%n",
                    name(system),
                    all.n(),
                    ms(all.percentile(50)),
                    ms(all.percentile(90)),
                    ms(all.percentile(99)),
                    ms(all.max()),
                    perRound50,
                    perRound99,
                    ratio));
        }

        b.append(
                "\nWhere the failover time goes (ms after the kill, the median of each column on its own; takeover is ours' grant or Kafka Streams' task"
                        + " initialised on the standby; \"open tx ended\" is when the output's last stable offset moved past where it stood"
                        + " at the kill, counted only for kills that left a transaction open):\n\n");
        b.append(
                "| Setting | System | killed member's last command seen, ms before the kill | takeover | first request processed"
                        + " | open tx ended (kills with one open) | first new command visible |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|\n");
        for (String kind : kinds(r)) {
            Map<String, List<Failover>> f = kind.equals("tuned") ? r.tuned : r.defaults;
            for (String system : List.of("ours", "streams")) {
                List<Failover> list = f.get(system);
                List<Long> open = list.stream()
                        .filter(Failover::openAtKill)
                        .map(Failover::killToUnblocked)
                        .filter(v -> v >= 0)
                        .toList();
                b.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %s (%d of %d) | %s |%n",
                        kind,
                        name(system),
                        med(list, Failover::lastOldOutputBeforeKill),
                        med(list, Failover::killToTakeover),
                        med(list, Failover::killToFirstProcessed),
                        open.isEmpty() ? "-" : ms(median(open)),
                        open.size(),
                        list.size(),
                        med(list, Failover::killToOutput)));
            }
        }
        b.append(
                "\nExactly once, as a `read_committed` consumer of the commands saw it over the whole run (every kill included): ");
        for (String system : List.of("ours", "streams")) {
            long[] e = r.exactlyOnce.get(system);
            b.append(String.format(
                    Locale.ROOT,
                    "%s %d commands, %d duplicates, %d requests without a command; ",
                    name(system),
                    e[0],
                    e[1],
                    e[2]));
        }
        b.setLength(b.length() - 2);
        b.append(".\n\nGoals (ours):\n\n");
        double ratio = (double) median(oursRate) / median(ksRate);
        b.append(String.format(
                Locale.ROOT,
                "- throughput >= 1.0x Kafka Streams at the same batching: %.2fx (median of %d rounds), %s%n",
                ratio,
                oursRate.n(),
                ratio >= 1.0 ? "met" : "MISSED"));
        for (String kind : kinds(r)) {
            Map<String, List<Failover>> f = kind.equals("tuned") ? r.tuned : r.defaults;
            long o = median(f.get("ours").stream().map(Failover::killToOutput).toList());
            long k =
                    median(f.get("streams").stream().map(Failover::killToOutput).toList());
            b.append(String.format(
                    Locale.ROOT,
                    "- kill -9 -> first new command <= Kafka Streams' at the same failure detection (%s, %d s):"
                            + " %s ms against %s ms (medians), %s%n",
                    kind,
                    (kind.equals("tuned") ? c.detectMs() : STREAMS_DEFAULT_SESSION_MS) / 1000,
                    ms(o),
                    ms(k),
                    o <= k ? "met" : String.format(Locale.ROOT, "MISSED by %s ms", ms(o - k))));
        }
        b.append(END).append('\n');
        return b.toString();
    }

    /** The median: the middle value, or the mean of the two middle values when n is even (n = 2: their mean). */
    static long median(Samples s) {
        int n = s.n();
        return n % 2 == 1
                ? s.values().get(n / 2)
                : (s.values().get(n / 2 - 1) + s.values().get(n / 2)) / 2;
    }

    private static long median(List<Long> values) {
        return median(new Samples("", "", values));
    }

    private static List<String> kinds(Results r) {
        return r.defaults.isEmpty() ? List.of("tuned") : List.of("tuned", "default");
    }

    private static Samples pooled(List<List<Long>> rounds) {
        List<Long> all = new ArrayList<>();
        rounds.forEach(all::addAll);
        return new Samples("", "", all);
    }

    private static String med(List<Failover> list, ToLongFunction<Failover> field) {
        return ms(median(list.stream().map(field::applyAsLong).toList()));
    }

    private static String name(String system) {
        return system.equals("ours") ? OURS : STREAMS;
    }

    private static String label(String system, Config c) {
        return system.equals("ours-big")
                ? OURS + " with `maxBatchRecords` " + c.bigBatchRecords() + " (not the same batching)"
                : name(system);
    }

    static String ms(long nanos) {
        double v = nanos / 1e6;
        return String.format(Locale.ROOT, v < 10 && v > -10 ? "%.2f" : "%.0f", v);
    }

    private static String arg(String[] args, String name, String fallback) {
        for (String a : args) {
            if (a.startsWith("--" + name + "=")) {
                return a.substring(name.length() + 3);
            }
        }
        return fallback;
    }

    private static int intArg(String[] args, String name, int fallback) {
        return Integer.parseInt(arg(args, name, Integer.toString(fallback)));
    }

    /** Replaces this bench's generated block (its own markers; Bench's block is left alone), or appends it. */
    static void write(Path file, String block) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "# Performance\n";
        int from = text.indexOf(BEGIN);
        int to = text.indexOf(END, Math.max(from, 0));
        String updated = from < 0 || to < 0
                ? text + "\n" + block
                : text.substring(0, from)
                        + block
                        + text.substring(to + END.length() + (text.startsWith("\n", to + END.length()) ? 1 : 0));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, updated, StandardCharsets.UTF_8);
    }
}
