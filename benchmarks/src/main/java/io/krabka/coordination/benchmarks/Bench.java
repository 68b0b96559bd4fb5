package io.krabka.coordination.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs every measure for this library and its peers in one JVM on one machine, prints a Markdown report and writes
 * every measure and goal verdict as JSON. With {@code --out}, {@link BenchReport} then renders that JSON into the page.
 *
 * <pre>./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests</pre>
 *
 * Arguments: {@code --out=FILE} (where to write; none: print only), {@code --handovers=30}, {@code --crashes=30},
 * {@code --cold=10}, {@code --describes=300}, {@code --tx=300} (transactions per throughput round, 3 rounds),
 * {@code --only=ours,curator,spring,scale,fold} (which groups run; default all of these; the system property {@code
 * bench.only} overrides it, and {@code -Dbench.only=pipeline} runs only {@link PipelineBench}, which writes its own block
 * and leaves this one as it is), {@code --scale=100,500,1000} (roles per member in measure 5), {@code --scale-seconds=20}
 * (renewal phase), {@code --fold=1000,10000,100000,1000000} (records in the role's partition in measure 6),
 * {@code --fold-passes=50}, {@code --fold-catchups=5}; {@code --json=target/bench.json} (every
 * measure and goal verdict as JSON), {@code --send-factor=11} (the fixed rate of async guarded sends, times the one-record
 * baseline), {@code --send-threads=4}, {@code --send-seconds=5}, {@code --batched-rounds=7}, {@code --batched-tx=60}
 * (100-record transactions per side per round), {@code --spring-roles=1000}, {@code --spring-lease-ms=30000},
 * {@code --spring-renew-ms=10000}, {@code --spring-hold-seconds=30} (group {@code spring-scale}, run first).
 */
public final class Bench {

    static final String COMMAND = "./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests";

    private Bench() {}

    public static void main(String[] args) throws Exception {
        String out = arg(args, "out", "");
        String json = arg(args, "json", "target/bench.json");
        int sendSeconds = Integer.parseInt(arg(args, "send-seconds", "5"));
        double sendFactor = Double.parseDouble(arg(args, "send-factor", "11"));
        int sendThreads = Integer.parseInt(arg(args, "send-threads", "4"));
        int batchedRounds = Integer.parseInt(arg(args, "batched-rounds", "7"));
        int batchedTx = Integer.parseInt(arg(args, "batched-tx", "60"));
        int springRoles = Integer.parseInt(arg(args, "spring-roles", "1000"));
        int springHold = Integer.parseInt(arg(args, "spring-hold-seconds", "30"));
        java.time.Duration springLease =
                java.time.Duration.ofMillis(Long.parseLong(arg(args, "spring-lease-ms", "30000")));
        java.time.Duration springRenew =
                java.time.Duration.ofMillis(Long.parseLong(arg(args, "spring-renew-ms", "10000")));
        int handovers = Integer.parseInt(arg(args, "handovers", "30"));
        int crashes = Integer.parseInt(arg(args, "crashes", "30"));
        int cold = Integer.parseInt(arg(args, "cold", "10"));
        int describes = Integer.parseInt(arg(args, "describes", "300"));
        int tx = Integer.parseInt(arg(args, "tx", "300"));
        String selected = System.getProperty("bench.only", "");
        java.util.Set<String> only = java.util.Set.of(
                (selected.isBlank() ? arg(args, "only", "ours,curator,spring,scale,fold,spring-scale") : selected)
                        .split(","));
        if (only.equals(java.util.Set.of("pipeline"))) {
            PipelineBench.main(args); // its own block in the output file; exits
            return;
        }
        if (only.equals(java.util.Set.of("spread"))) {
            SpreadBench.main(args); // four member JVMs against one; prints its report
            return;
        }
        List<Integer> scaleSizes = ints(arg(args, "scale", "100,500,1000"));
        int scaleSeconds = Integer.parseInt(arg(args, "scale-seconds", "20"));
        RENEW_AFTER_SECONDS = scaleSeconds;
        List<Integer> foldSizes = ints(arg(args, "fold", "1000,10000,100000,1000000"));
        int foldPasses = Integer.parseInt(arg(args, "fold-passes", "50"));
        int foldCatchUps = Integer.parseInt(arg(args, "fold-catchups", "5"));
        long began = System.nanoTime();
        LOAD.start();

        List<Samples> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        OursBench.Throughput throughput = null;
        // "crash" alone: only the crash failovers of the three systems (goal 4 wants n >= 30 each).
        boolean crashOnly = only.equals(java.util.Set.of("crash"));
        // "batched" alone: only guarded against plain 100-record transactions (goal 2).
        boolean batchedOnly = only.equals(java.util.Set.of("batched"));
        // "handover" alone: only the three systems' graceful handovers (goal 1).
        boolean handoverOnly = only.equals(java.util.Set.of("handover"));
        if (only.contains("ours")
                || only.contains("scale")
                || only.contains("fold")
                || only.contains("spring-scale")
                || crashOnly
                || batchedOnly
                || handoverOnly) {
            System.err.println("benchmarks: Kafka (this library)");
            try (OursBench ours = new OursBench()) {
                if (only.contains(
                        "spring-scale")) { // first: before any Contender in this JVM started the shared pass threads
                    System.err.println("benchmarks: " + springRoles + " roles through the Spring Boot starter");
                    // The broker in a JVM of its own, warmed, as users run one: the member's JVM holds only the member.
                    try (BrokerJvm broker = BrokerJvm.startWarmed(
                            java.nio.file.Path.of("target", "bench-broker").toAbsolutePath(), springRoles)) {
                        SPRING_SCALE = SpringScaleBench.run(
                                broker.cluster(),
                                broker.pid(),
                                springRoles,
                                java.time.Duration.ofSeconds(springHold),
                                springLease,
                                springRenew);
                        PRODUCER_COST = ProducerCost.measure(
                                broker.cluster().connection(), 200, java.time.Duration.ofSeconds(10));
                        System.err.printf(
                                Locale.ROOT,
                                "  one held role's producer: %.0f KiB heap, %.2f threads, %.2f connections,"
                                        + " %.3f ms CPU per idle second%n",
                                PRODUCER_COST.heapBytes() / 1024,
                                PRODUCER_COST.threads(),
                                PRODUCER_COST.connections(),
                                PRODUCER_COST.idleCpuMillisPerSecond());
                    }
                    if (!SPRING_SCALE.renewTook().isEmpty()) {
                        rows.add(new Samples(
                                "5s Spring starter " + springRoles + " roles: renewal (Contender pass)",
                                OursBench.SYSTEM,
                                SPRING_SCALE.renewTook()));
                    }
                }
                if (batchedOnly) {
                    batched(ours, batchedRounds, batchedTx, rows);
                }
                if (handoverOnly) {
                    rows.add(new Samples(
                            HANDOVER, OursBench.SYSTEM, ours.handoverContender(HANDOVER_WARMUPS, handovers)));
                    handoverSteps(ours, rows);
                    handoverFloors(ours, handovers, rows);
                }
                if (crashOnly) {
                    List<long[]> crash = ours.crashContender(1, crashes);
                    rows.add(new Samples(
                            "2 crash failover: overshoot past deadline", OursBench.SYSTEM, column(crash, 0)));
                    rows.add(new Samples("2 crash failover: kill -> granted", OursBench.SYSTEM, column(crash, 1)));
                }
                if (only.contains("ours")) {
                    rows.add(new Samples(
                            HANDOVER, OursBench.SYSTEM, ours.handoverContender(HANDOVER_WARMUPS, handovers)));
                    handoverSteps(ours, rows);
                    rows.add(new Samples(HANDOVER_ACQUIRE, OursBench.SYSTEM, ours.handover(2, handovers)));
                    handoverFloors(ours, handovers, rows);
                    List<long[]> crash = ours.crashContender(1, crashes);
                    rows.add(new Samples(
                            "2 crash failover: overshoot past deadline", OursBench.SYSTEM, column(crash, 0)));
                    rows.add(new Samples("2 crash failover: kill -> granted", OursBench.SYSTEM, column(crash, 1)));
                    List<List<Long>> describe = ours.describe(describes);
                    rows.add(new Samples("4 describe(role)", OursBench.SYSTEM, describe.get(0)));
                    rows.add(new Samples("4 describe(role)", "raw Admin.describeTransactions", describe.get(1)));
                    rows.add(new Samples("7 cold start to first grant", OursBench.SYSTEM, ours.coldStart(1, cold)));
                    List<List<Long>> init = ours.initTransactions(20);
                    rows.add(new Samples(
                            "x initTransactions, new producer", OursBench.SYSTEM + " (experiment)", init.get(0)));
                    rows.add(new Samples(
                            "x initTransactions, pre-connected producer",
                            OursBench.SYSTEM + " (experiment)",
                            init.get(1)));
                    rows.add(new Samples(
                            "x initTransactions, new producer, retry.backoff.ms=10",
                            OursBench.SYSTEM + " (experiment)",
                            init.get(2)));
                    throughput = ours.throughput(3, tx);
                    rows.add(new Samples(
                            "3 one-record transaction", OursBench.SYSTEM + " guarded write", throughput.guarded()));
                    rows.add(new Samples(
                            "3 one-record transaction", "plain transactional KafkaProducer", throughput.plain()));
                    double baseline = throughput.guardedPerSecond();
                    SEND_FIXED =
                            ours.send(Math.ceil(baseline * sendFactor), sendThreads, sendSeconds, Integer.MAX_VALUE);
                    rows.add(new Samples(
                            String.format(
                                    Locale.ROOT,
                                    "3 async send at %.0f/s (%.0fx baseline): send -> committed",
                                    SEND_FIXED.offeredPerSecond(),
                                    sendFactor),
                            OursBench.SYSTEM + " Leadership.send",
                            SEND_FIXED.latencies()));
                    // Within SendBatching's default bound on queued sends (10 000), so no sender blocks on it.
                    SEND_CLOSED = ours.send(0, sendThreads, 3, 10_000);
                    rows.add(new Samples(
                            "3 async send, closed loop (10000 outstanding): send -> committed",
                            OursBench.SYSTEM + " Leadership.send",
                            SEND_CLOSED.latencies()));
                    batched(ours, batchedRounds, batchedTx, rows);
                }
                ScaleBench scale = new ScaleBench(ours.cluster());
                if (only.contains("scale")) {
                    for (int n : scaleSizes) {
                        ScaleBench.Scale r = scale.scale(n, java.time.Duration.ofSeconds(scaleSeconds));
                        rows.add(new Samples(
                                "5 scale " + n + " roles: acquire one role (sequential)",
                                OursBench.SYSTEM,
                                r.acquire()));
                        rows.add(new Samples(
                                "5 scale " + n + " roles: renew() one role, " + ScaleBench.RENEW_THREADS
                                        + " renew threads",
                                OursBench.SYSTEM,
                                r.renew()));
                        notes.add(scaleNote(r));
                    }
                }
                if (only.contains("fold")) {
                    for (int n : foldSizes) {
                        ScaleBench.Fold r;
                        try {
                            r = scale.fold(n, foldCatchUps, foldPasses);
                        } catch (RuntimeException e) { // reported, not fatal: the rest of the run still counts
                            System.err.println("  fold " + n + " records failed: " + e);
                            notes.add("- 6 partition of " + n + " records: not measured, the measure failed: "
                                    + e.getMessage());
                            continue;
                        }
                        rows.add(new Samples(
                                "6 partition " + n + " records: catch-up (new client's first pass)",
                                OursBench.SYSTEM,
                                r.catchUp()));
                        rows.add(new Samples(
                                "6 partition " + n + " records: incremental election pass",
                                OursBench.SYSTEM,
                                r.passes()));
                        notes.add(String.format(
                                Locale.ROOT,
                                "- 6 partition of %d records (filled in %.1f s): catch-up p50 %s ms,"
                                        + " incremental pass p50 %s ms / p90 %s ms",
                                n,
                                r.fillNanos() / 1e9,
                                ms(new Samples("", "", r.catchUp()).percentile(50)),
                                ms(new Samples("", "", r.passes()).percentile(50)),
                                ms(new Samples("", "", r.passes()).percentile(90))));
                    }
                }
            }
        }
        if (only.contains("curator") || crashOnly || handoverOnly) {
            peer(
                    "Curator",
                    CuratorBench.SYSTEM,
                    CuratorBench::new,
                    !crashOnly,
                    !handoverOnly,
                    handovers,
                    crashes,
                    cold,
                    rows);
        }
        if (only.contains("spring") || crashOnly || handoverOnly) {
            peer(
                    "Spring Integration",
                    SpringBench.SYSTEM,
                    SpringBench::new,
                    !crashOnly,
                    !handoverOnly,
                    handovers,
                    crashes,
                    cold,
                    rows);
        }
        double minutes = (System.nanoTime() - began) / 60e9;
        List<Goal> goals = new ArrayList<>();
        String report = report(rows, throughput, notes, minutes, String.join(" ", args), goals);
        System.out.println(report);
        if (!json.isEmpty()) {
            writeJson(Path.of(json), rows, throughput, goals, minutes);
            System.err.println(
                    "json written to " + Path.of(json).toAbsolutePath().normalize());
            if (!out.isEmpty()) { // the page shows what the JSON holds, rendered by the same code as BenchReport's
                // check
                BenchReport.rewrite(Path.of(out), Path.of(json));
                System.err.println(
                        "figures rendered into " + Path.of(out).toAbsolutePath().normalize());
            }
        }
        if (only.contains("pipeline")) {
            PipelineBench.run(args);
        }
        System.exit(0); // the brokers' and ZooKeeper's non-daemon threads
    }

    private static int RENEW_AFTER_SECONDS = 20;
    /** Where a phase's CPU went ({@link CpuSplit}): the process, the JIT and GC, the thread groups that took most. */
    private static String cpuLine(String what, CpuSplit.Split cpu) {
        if (cpu == null) {
            return "";
        }
        String top = cpu.byPrefix().entrySet().stream()
                .limit(8)
                .map(e -> String.format(Locale.ROOT, "`%s` %.1f s", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
        return String.format(
                Locale.ROOT,
                "%n%s: %.1f s of process CPU in %.1f s (%.2f cores busy); JIT compilation %.1f s,"
                        + " GC %.1f s; by thread: %s; in no thread live at both ends (compiler and GC threads, threads that"
                        + " ended) %.1f s%s.%n",
                what,
                cpu.processSeconds(),
                cpu.wallSeconds(),
                cpu.processSeconds() / cpu.wallSeconds(),
                cpu.compileSeconds(),
                cpu.gcSeconds(),
                top,
                cpu.unattributedSeconds(),
                cpu.brokerSeconds() < 0
                        ? ""
                        : String.format(Locale.ROOT, "; the broker's own JVM %.1f s", cpu.brokerSeconds()));
    }

    private static String cpuJson(CpuSplit.Split cpu) {
        if (cpu == null) {
            return "null";
        }
        return String.format(
                Locale.ROOT,
                "{\"wallSeconds\": %s, \"processSeconds\": %s, \"compileSeconds\": %s, \"gcSeconds\": %s,"
                        + " \"unattributedSeconds\": %s, \"byThreadPrefix\": {%s}%s}",
                num(cpu.wallSeconds()),
                num(cpu.processSeconds()),
                num(cpu.compileSeconds()),
                num(cpu.gcSeconds()),
                num(cpu.unattributedSeconds()),
                cpu.byPrefix().entrySet().stream()
                        .map(e -> jsonString(e.getKey()) + ": " + num(e.getValue()))
                        .collect(Collectors.joining(", ")),
                cpu.brokerSeconds() < 0 ? "" : ", \"brokerJvmSeconds\": " + num(cpu.brokerSeconds()));
    }

    /** Seconds with one decimal, or "never" for a negative (not reached) time. */
    private static String seconds(long nanos) {
        return nanos < 0 ? "never (90 s)" : String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    /** Opens a {@link PeerBench}; its constructor starts the peer's store. */
    private interface PeerStart {
        PeerBench start() throws Exception;
    }

    /**
     * A peer's measures, as for ours: its handovers (unless only crashes run), its crash failovers (unless only
     * handovers run) and its cold starts (only when both run).
     */
    private static void peer(
            String name,
            String system,
            PeerStart start,
            boolean handover,
            boolean crash,
            int handovers,
            int crashes,
            int cold,
            List<Samples> rows)
            throws Exception {
        System.err.println("benchmarks: " + name);
        try (PeerBench peer = start.start()) {
            if (handover) {
                rows.add(new Samples(CROSS_HANDOVER, system, peer.handover(HANDOVER_WARMUPS, handovers)));
            }
            if (crash) {
                List<long[]> crashed = peer.crash(1, crashes);
                rows.add(new Samples("2 crash failover: overshoot past deadline", system, column(crashed, 0)));
                rows.add(new Samples("2 crash failover: kill -> granted", system, column(crashed, 1)));
            }
            if (handover && crash) {
                rows.add(new Samples("7 cold start to first grant", system, peer.coldStart(1, cold)));
            }
        }
    }

    /** Each step of the handovers just measured ({@link HandoverTimeline}), as experiment rows. */
    private static void handoverSteps(OursBench ours, List<Samples> rows) {
        ours.handoverSteps()
                .forEach((step, took) ->
                        rows.add(new Samples(BenchReport.STEP_TOOK + step, OursBench.SYSTEM + " (experiment)", took)));
    }

    /** The floor of each step of a handover on this broker ({@link HandoverFloors}), as experiment rows. */
    private static void handoverFloors(OursBench ours, int runs, List<Samples> rows) throws Exception {
        for (java.util.Map.Entry<String, List<Long>> step : new HandoverFloors(ours.cluster())
                .measure(HANDOVER_WARMUPS, runs)
                .entrySet()) {
            rows.add(new Samples(
                    BenchReport.STEP_FLOOR + step.getKey(), OursBench.SYSTEM + " (experiment)", step.getValue()));
        }
    }

    /** Handovers discarded before the recorded ones, per system: the first few run on a JVM that has not compiled their path yet. */
    static final int HANDOVER_WARMUPS = 5;

    static final String HANDOVER = "1 graceful handover: Contender.release() -> standby Listener.granted";
    static final String HANDOVER_ACQUIRE = "1 graceful handover: Leadership.close() -> standby acquire() returns";
    static final String CROSS_HANDOVER = "1 graceful handover";
    private static SpringScaleBench.Result SPRING_SCALE;
    private static OursBench.SendRun SEND_FIXED;
    private static OursBench.SendRun SEND_CLOSED;
    private static OursBench.Batched BATCHED;
    // What one held role's producer costs, idle (issue 39, item 4).
    private static ProducerCost.Cost PRODUCER_COST;
    // The same at 1 000 records per transaction (goal 4b).
    private static OursBench.Batched BATCHED_1000;

    /**
     * Guarded against plain transactions, with the plain one plus one partition beside them: at 100 records per
     * transaction ({@code txPerRound} a side per round), then at 1 000 (a third as many).
     */
    private static void batched(OursBench ours, int rounds, int txPerRound, List<Samples> rows) throws Exception {
        BATCHED = ours.batched(rounds, txPerRound, 100);
        BATCHED_1000 = ours.batched(rounds, Math.max(7, txPerRound / 3), 1000);
        for (OursBench.Batched run : List.of(BATCHED, BATCHED_1000)) {
            String measure = "3b " + run.recordsPerTx() + "-record transaction";
            rows.add(new Samples(measure, OursBench.SYSTEM + " guarded write", run.guardedTx()));
            rows.add(new Samples(measure, "plain transactional KafkaProducer", run.plainTx()));
            rows.add(new Samples(measure, PLUS_ONE, run.plusOneTx()));
            rows.add(new Samples(measure, STAMPED, run.stampedTx()));
        }
    }

    private static List<OursBench.Batched> batchedRuns() {
        List<OursBench.Batched> runs = new ArrayList<>();
        if (BATCHED != null) {
            runs.add(BATCHED);
        }
        if (BATCHED_1000 != null) {
            runs.add(BATCHED_1000);
        }
        return runs;
    }

    /** Nanoseconds as milliseconds with two decimals, comma-separated. */
    private static String millis(List<Long> nanos) {
        return nanos.stream()
                .map(n -> String.format(Locale.ROOT, "%.2f", n / 1e6))
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /** The system of the guarded write's floor: a plain transaction with one more partition. */
    static final String PLUS_ONE = "plain, one more partition (the guarded floor)";

    /** That floor with the token headers a guarded write stamps on every record: every byte it writes. */
    static final String STAMPED = "plain, one more partition, records stamped";

    static final LoadSampler LOAD = new LoadSampler();

    /** One goal's verdict: what was measured against what limit. */
    record Goal(String id, String goal, String value, boolean met, String note) {}

    /** The 1-minute load average every 5 s of the run. */
    static final class LoadSampler {
        private final List<Double> samples = java.util.Collections.synchronizedList(new ArrayList<>());
        private Thread thread;

        synchronized void start() {
            if (thread != null) {
                return;
            }
            thread = new Thread(
                    () -> {
                        while (true) {
                            try {
                                samples.add(Double.parseDouble(Files.readString(Path.of("/proc/loadavg"))
                                        .split(" ")[0]));
                                Thread.sleep(5000);
                            } catch (InterruptedException e) {
                                return;
                            } catch (IOException | RuntimeException e) {
                                return;
                            }
                        }
                    },
                    "bench-loadavg");
            thread.setDaemon(true);
            thread.start();
        }

        String describe() {
            List<Double> s;
            synchronized (samples) {
                s = new ArrayList<>(samples);
            }
            if (s.isEmpty()) {
                return "load average not sampled";
            }
            java.util.Collections.sort(s);
            return String.format(
                    Locale.ROOT,
                    "1-minute load average during the run: median %.1f, min %.1f, max %.1f (%d samples, 5 s apart)",
                    s.get(s.size() / 2),
                    s.get(0),
                    s.get(s.size() - 1),
                    s.size());
        }
    }

    private static List<Integer> ints(String csv) {
        List<Integer> out = new ArrayList<>();
        for (String v : csv.split(",")) {
            if (!v.isBlank()) {
                out.add(Integer.parseInt(v.trim()));
            }
        }
        return out;
    }

    private static String scaleNote(ScaleBench.Scale r) {
        return String.format(
                Locale.ROOT,
                "- 5 scale, %d roles on one member (lease %d s, renew %d s, %d renew threads):"
                        + " acquired all in %.1f s; heap used after GC %d MiB (%d MiB before the member, +%d KiB per role);"
                        + " live threads %d (%d before, +%d); producer network threads +%d (one transactional producer per role"
                        + " plus the registrar); %d renewals in %.0f s (%.0f/s; renewing from the first grant through acquisition and %d s after), %d after their lease deadline, %d failed;"
                        + " worst start after renewAt %s ms",
                r.roles(),
                ScaleBench.SCALE_LEASE.duration().toSeconds(),
                ScaleBench.SCALE_LEASE.renewInterval().toSeconds(),
                ScaleBench.RENEW_THREADS,
                r.acquireAllNanos() / 1e9,
                r.heapHeld() >> 20,
                r.heapBefore() >> 20,
                Math.max(0, r.heapHeld() - r.heapBefore()) / 1024 / r.roles(),
                r.threadsHeld(),
                r.threadsBefore(),
                r.threadsHeld() - r.threadsBefore(),
                r.producerThreads(),
                r.renewals(),
                r.renewSeconds(),
                r.renewals() / r.renewSeconds(),
                RENEW_AFTER_SECONDS,
                r.missed(),
                r.failed(),
                ms(r.worstLateNanos()));
    }

    private static List<Long> column(List<long[]> pairs, int index) {
        return pairs.stream().map(p -> p[index]).collect(Collectors.toList());
    }

    static String arg(String[] args, String name, String fallback) {
        for (String a : args) {
            if (a.startsWith("--" + name + "=")) {
                return a.substring(name.length() + 3);
            }
        }
        return fallback;
    }

    private static String ms(long nanos) {
        double v = nanos / 1e6;
        return String.format(Locale.ROOT, v < 10 && v > -10 ? "%.2f" : "%.0f", v);
    }

    /** The row of one handover step measured alone ({@link HandoverFloors}), or null. */
    private static Samples stepFloor(List<Samples> rows, String step) {
        return find(rows, BenchReport.STEP_FLOOR + step, OursBench.SYSTEM + " (experiment)");
    }

    private static Samples find(List<Samples> rows, String measure, String system) {
        return rows.stream()
                .filter(s -> s.measure().equals(measure) && s.system().equals(system))
                .findFirst()
                .orElse(null);
    }

    static String report(
            List<Samples> rows,
            OursBench.Throughput throughput,
            List<String> notes,
            double minutes,
            String args,
            List<Goal> goals) {
        StringBuilder b = new StringBuilder();
        b.append("Run ")
                .append(ZonedDateTime.now()
                        .format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)
                        .replaceAll("\\.\\d+", ""))
                .append(String.format(
                        Locale.ROOT,
                        ", %.1f minutes, with `%s`%s.%n%n",
                        minutes,
                        COMMAND,
                        args.replaceAll("--(out|json)=\\S*", "").isBlank()
                                ? ""
                                : " and `-Dbench.args=\""
                                        + args.replaceAll("--(out|json)=\\S*", "")
                                                .trim() + "\"`"));
        b.append("Machine: ")
                .append(machine())
                .append("; ")
                .append(LOAD.describe())
                .append("\n\n");
        b.append("| Measure | System | n | p50 ms | p90 ms | p99 ms | max ms | ours / this (p50, p99) |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Samples s : rows) {
            String ratio = "";
            if (!s.system().startsWith(OursBench.SYSTEM)
                    && !s.measure().startsWith("3")
                    && !s.measure().startsWith("x")) {
                Samples ours =
                        find(rows, s.measure().equals(CROSS_HANDOVER) ? HANDOVER : s.measure(), OursBench.SYSTEM);
                ratio = ours == null
                        ? ""
                        : ratio(ours.percentile(50), s.percentile(50)) + ", "
                                + ratio(ours.percentile(99), s.percentile(99));
            } else if (s.measure().startsWith("3") && !s.system().startsWith(OursBench.SYSTEM)) {
                Samples ours = find(rows, s.measure(), OursBench.SYSTEM + " guarded write");
                ratio = ours == null
                        ? ""
                        : ratio(ours.percentile(50), s.percentile(50)) + ", "
                                + ratio(ours.percentile(99), s.percentile(99));
            }
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %s | %s | %s | %s |%n",
                    s.measure(),
                    s.system(),
                    s.n(),
                    ms(s.percentile(50)),
                    ms(s.percentile(90)),
                    ms(s.percentile(99)),
                    ms(s.max()),
                    ratio));
        }
        if (throughput != null) {
            b.append(String.format(
                    Locale.ROOT,
                    "%nOne-record transactions (baseline of goal 3): guarded `write` %.0f tx/s, plain"
                            + " transactional producer %.0f tx/s (ratio %.2f).%n",
                    throughput.guardedPerSecond(),
                    throughput.plainPerSecond(),
                    throughput.guardedPerSecond() / throughput.plainPerSecond()));
        }
        if (SEND_FIXED != null) {
            for (OursBench.SendRun run : List.of(SEND_FIXED, SEND_CLOSED)) {
                Samples l = new Samples("", "", run.latencies());
                b.append(String.format(
                        Locale.ROOT,
                        "%nAsync guarded `send` (group commit, default `SendBatching` 1000 records / 2 ms), %s%s,"
                                + " %d sender threads: %.0f records committed per s (%.1fx the one-record baseline), %d sent, %d failed;"
                                + " send -> committed p50 %s ms, p90 %s ms, p99 %s ms, max %s ms.%n",
                        run.label(),
                        run.offeredPerSecond() > 0
                                ? String.format(Locale.ROOT, " offered %.0f/s", run.offeredPerSecond())
                                : "",
                        run.threads(),
                        run.committedPerSecond(),
                        throughput == null ? Double.NaN : run.committedPerSecond() / throughput.guardedPerSecond(),
                        run.sent(),
                        run.failed(),
                        ms(l.percentile(50)),
                        ms(l.percentile(90)),
                        ms(l.percentile(99)),
                        ms(l.max())));
            }
        }
        for (OursBench.Batched run : batchedRuns()) {
            b.append(String.format(
                    Locale.ROOT,
                    "%n%d records per transaction on each side, %d rounds: guarded %s records/s,"
                            + " plain %s, plain with one more partition %s, stamped too %s (per round); guarded / plain"
                            + " per round %s; per-transaction p50 per round: guarded %s ms, plain %s, plain with one more"
                            + " partition %s, stamped too %s.%n",
                    run.recordsPerTx(),
                    run.ratios().size(),
                    list(run.guardedPerSecond(), "%.0f"),
                    list(run.plainPerSecond(), "%.0f"),
                    list(run.plusOnePerSecond(), "%.0f"),
                    list(run.stampedPerSecond(), "%.0f"),
                    list(run.ratios(), "%.2f"),
                    millis(run.guardedRoundP50()),
                    millis(run.plainRoundP50()),
                    millis(run.plusOneRoundP50()),
                    millis(run.stampedRoundP50())));
        }
        if (SPRING_SCALE != null) {
            SpringScaleBench.Result r = SPRING_SCALE;
            b.append(String.format(
                    Locale.ROOT,
                    "%nSpring Boot starter, %d roles on one member (lease %d s, renew %d s): %s;"
                            + " then %.0f s more; live threads %d before the context, %d while holding"
                            + " (+%d); %d renewals, %d completed after the deadline they renewed (worst %s ms %s it), %d lapses seen by"
                            + " the 50 ms sampler, %d failed; ends %s; heap used after a GC %d MiB before the context, %d MiB holding;"
                            + " a standby joining it was in every roster after %s and had a producer prepared for every role after %s."
                            + " New threads by name prefix: %s.%n",
                    r.roles(),
                    SpringScaleBench.LEASE.toSeconds(),
                    SpringScaleBench.RENEW.toSeconds(),
                    r.acquireAllNanos() >= 0
                            ? String.format(
                                    Locale.ROOT, "held all %.1f s after the context started", r.acquireAllNanos() / 1e9)
                            : String.format(
                                    Locale.ROOT,
                                    "never held all at once (at most %d) within the 90 s wait",
                                    r.heldMax()),
                    r.holdSeconds(),
                    r.threadsBefore(),
                    r.threadsHeld(),
                    r.memberThreads(),
                    r.renewals(),
                    r.lateRenewals(),
                    ms(Math.abs(r.worstLateNanos())),
                    r.worstLateNanos() > 0 ? "after" : "before",
                    r.lapsedSeen(),
                    r.renewFailures(),
                    r.ends().isEmpty() ? "none" : r.ends().toString(),
                    r.heapBefore() >> 20,
                    r.heapHeld() >> 20,
                    seconds(r.standbyRosterNanos()),
                    seconds(r.standbyPreparedNanos()),
                    r.newByPrefix().entrySet().stream()
                            .sorted((x, y) -> y.getValue() - x.getValue())
                            .map(e -> "`" + e.getKey() + "` " + e.getValue())
                            .collect(Collectors.joining(", "))));
            b.append(cpuLine("CPU while the starter took its roles", r.startCpu()));
            b.append(cpuLine("CPU while the standby joined, until it was ready", r.standbyCpu()));
        }
        if (!notes.isEmpty()) {
            b.append("\nScale (5) and election-pass cost (6), ours only:\n\n");
            notes.forEach(n -> b.append(n).append('\n'));
        }
        // The goals, then the measures without a goal.
        List<String> measuredOnly = new ArrayList<>();
        Samples handover = find(rows, HANDOVER, OursBench.SYSTEM);
        Samples curatorHandover = find(rows, CROSS_HANDOVER, CuratorBench.SYSTEM);
        if (handover != null) {
            if (curatorHandover != null) {
                double x = (double) handover.percentile(50) / curatorHandover.percentile(50);
                goals.add(new Goal(
                        "1a",
                        "graceful handover (Contender) p50 <= 5x Curator's p50",
                        String.format(
                                Locale.ROOT,
                                "%s ms = %.1fx Curator's %s ms",
                                ms(handover.percentile(50)),
                                x,
                                ms(curatorHandover.percentile(50))),
                        x <= 5,
                        ""));
            }
            goals.add(new Goal(
                    "1b",
                    "graceful handover (Contender) p99 <= 60 ms",
                    ms(handover.percentile(99)) + " ms",
                    handover.percentile(99) <= 60_000_000L,
                    ""));
            if (curatorHandover != null) {
                double x = (double) handover.percentile(50) / curatorHandover.percentile(50);
                goals.add(new Goal(
                        "23-1a",
                        "graceful handover (Contender) p50 <= 2x Curator's p50",
                        String.format(
                                Locale.ROOT,
                                "%s ms = %.1fx Curator's %s ms",
                                ms(handover.percentile(50)),
                                x,
                                ms(curatorHandover.percentile(50))),
                        x <= 2,
                        ""));
            }
            goals.add(new Goal(
                    "23-1b",
                    "graceful handover (Contender) p99 <= 30 ms",
                    ms(handover.percentile(99)) + " ms",
                    handover.percentile(99) <= 30_000_000L,
                    ""));
            long floor = 0;
            List<String> parts = new ArrayList<>();
            for (String step : HandoverFloors.PATH) {
                Samples s = stepFloor(rows, step);
                if (s == null) {
                    floor = -1;
                    break;
                }
                floor += s.percentile(50);
                parts.add(ms(s.percentile(50)));
            }
            if (floor > 0) {
                measuredOnly.add(String.format(
                        Locale.ROOT,
                        "- 23-1c the handover path's floor on this broker, the p50s of its"
                                + " steps added (the x rows): %s ms (%s), against the measured p50 of %s ms (no goal)%n",
                        ms(floor),
                        String.join(" + ", parts),
                        ms(handover.percentile(50))));
            }
            // The floor a handover cannot go below on this broker: a challenger's InitProducerId, the grant's
            // one-record transaction, and its commit becoming visible to read_committed readers.
            Samples init = stepFloor(rows, HandoverFloors.INIT_BEHIND_COMMIT);
            Samples grant = stepFloor(rows, HandoverFloors.ONE_RECORD_TX);
            Samples visible = stepFloor(rows, HandoverFloors.COMMIT_VISIBLE);
            if (init != null && grant != null && visible != null) {
                long least = init.percentile(50) + grant.percentile(50) + visible.percentile(50);
                double x = (double) handover.percentile(50) / least;
                goals.add(new Goal(
                        "39-3a",
                        "graceful handover (Contender) p50 <= 1.25x its floor (InitProducerId + one-record transaction + commit -> visible)",
                        String.format(
                                Locale.ROOT,
                                "%s ms = %.2fx %s ms (%s + %s + %s)",
                                ms(handover.percentile(50)),
                                x,
                                ms(least),
                                ms(init.percentile(50)),
                                ms(grant.percentile(50)),
                                ms(visible.percentile(50))),
                        x <= 1.25,
                        ""));
            }
            Samples crash = find(rows, "2 crash failover: overshoot past deadline", OursBench.SYSTEM);
            Samples cc = find(rows, "2 crash failover: overshoot past deadline", CuratorBench.SYSTEM);
            Samples sc = find(rows, "2 crash failover: overshoot past deadline", SpringBench.SYSTEM);
            if (crash != null && cc != null && sc != null) {
                long best = Math.min(cc.percentile(99), sc.percentile(99));
                goals.add(new Goal(
                        "2",
                        "crash overshoot past the deadline p99 <= the better peer's p99",
                        String.format(
                                Locale.ROOT,
                                "%s ms against %s ms (Curator %s, Spring Integration %s)",
                                ms(crash.percentile(99)),
                                ms(best),
                                ms(cc.percentile(99)),
                                ms(sc.percentile(99))),
                        crash.percentile(99) <= best,
                        ""));
            }
        }
        if (SEND_FIXED != null && throughput != null) {
            double x = SEND_FIXED.committedPerSecond() / throughput.guardedPerSecond();
            goals.add(new Goal(
                    "3a",
                    "async guarded send throughput of one role >= 10x one-record guarded tx/s",
                    String.format(
                            Locale.ROOT,
                            "%.0f/s = %.1fx %.0f tx/s",
                            SEND_FIXED.committedPerSecond(),
                            x,
                            throughput.guardedPerSecond()),
                    x >= 10 && SEND_FIXED.failed() == 0,
                    ""));
            long p99 = new Samples("", "", SEND_FIXED.latencies()).percentile(99);
            goals.add(new Goal(
                    "3b", "p99 send -> committed <= 50 ms at that rate", ms(p99) + " ms", p99 <= 50_000_000L, ""));
        }
        if (BATCHED != null) {
            long guarded = new Samples("", "", BATCHED.guardedTx()).percentile(50);
            long floor = new Samples("", "", BATCHED.plusOneTx()).percentile(50);
            long plain = new Samples("", "", BATCHED.plainTx()).percentile(50);
            goals.add(new Goal(
                    "4a",
                    "guarded 100-record transaction p50 <= a plain one with one more partition (its floor)",
                    String.format(
                            Locale.ROOT,
                            "%s ms against %s ms (plain alone %s ms, the floor with stamped records %s ms);"
                                    + " round p50s guarded %s, floor %s",
                            ms(guarded),
                            ms(floor),
                            ms(plain),
                            ms(new Samples("", "", BATCHED.stampedTx()).percentile(50)),
                            millis(BATCHED.guardedRoundP50()),
                            millis(BATCHED.plusOneRoundP50())),
                    guarded <= floor,
                    ""));
        }
        if (BATCHED_1000 != null) {
            List<Double> r = new ArrayList<>(BATCHED_1000.ratios());
            java.util.Collections.sort(r);
            double median = BenchReport.median(r);
            goals.add(new Goal(
                    "4b",
                    "guarded / plain at 1000 records per transaction >= 0.95x (median of rounds)",
                    String.format(Locale.ROOT, "%.2fx (rounds %.2f-%.2f)", median, r.get(0), r.get(r.size() - 1)),
                    median >= 0.95,
                    ""));
        }
        if (SPRING_SCALE != null) {
            SpringScaleBench.Result r = SPRING_SCALE;
            goals.add(new Goal(
                    "5a",
                    "Spring starter, " + r.roles() + " roles: threads <= roles + 50",
                    String.format(Locale.ROOT, "+%d threads (limit %d)", r.memberThreads(), r.roles() + 50),
                    r.acquireAllNanos() > 0 && r.memberThreads() <= r.roles() + 50,
                    ""));
            int expired = r.ends().getOrDefault("EXPIRED", 0);
            goals.add(new Goal(
                    "5b",
                    "Spring starter: 0 renewals after their deadline",
                    String.format(
                            Locale.ROOT,
                            "%d late of %d renewals, %d lapses seen, %d EXPIRED ends",
                            r.lateRenewals(),
                            r.renewals(),
                            r.lapsedSeen(),
                            expired),
                    r.acquireAllNanos() > 0 && r.lateRenewals() == 0 && r.lapsedSeen() == 0 && expired == 0,
                    ""));
            goals.add(new Goal(
                    "23-3a",
                    "Spring starter holds " + r.roles() + " roles within 10 s of its context starting",
                    seconds(r.acquireAllNanos()),
                    r.acquireAllNanos() > 0 && r.acquireAllNanos() <= 10_000_000_000L,
                    ""));
            long ready = r.standbyRosterNanos() < 0 || r.standbyPreparedNanos() < 0
                    ? -1
                    : Math.max(r.standbyRosterNanos(), r.standbyPreparedNanos());
            goals.add(new Goal(
                    "23-3b",
                    "a standby joining it is ready (in every roster, producers prepared) within 10 s",
                    seconds(ready),
                    ready > 0 && ready <= 10_000_000_000L,
                    ""));
        }
        Samples describeOurs = find(rows, "4 describe(role)", OursBench.SYSTEM);
        if (describeOurs != null) {
            double describe = (double) describeOurs.percentile(50)
                    / find(rows, "4 describe(role)", "raw Admin.describeTransactions")
                            .percentile(50);
            goals.add(new Goal(
                    "earlier-4",
                    "describe p50 <= 2x raw describeTransactions",
                    String.format(Locale.ROOT, "%.2fx", describe),
                    describe <= 2,
                    ""));
            long cold =
                    find(rows, "7 cold start to first grant", OursBench.SYSTEM).percentile(50);
            goals.add(new Goal("earlier-7", "cold start p50 <= 1500 ms", ms(cold) + " ms", cold <= 1_500_000_000L, ""));
        }
        b.append("\nGoals (ours):\n\n");
        for (Goal g : goals) {
            b.append(String.format(
                    Locale.ROOT, "- %s %s: %s, %s%n", g.id(), g.goal(), g.value(), g.met() ? "met" : "MISSED"));
        }
        measuredOnly.forEach(b::append);
        boolean scaled = rows.stream().anyMatch(r -> r.measure().startsWith("5 "));
        boolean folded = rows.stream().anyMatch(r -> r.measure().startsWith("6 "));
        b.append(
                scaled
                        ? "- 5 core-level scale: measured above (no numeric goal; see the notes)\n"
                        : "- 5 core-level scale (100/500/1000 roles on one member): not measured in this run\n");
        b.append(
                folded
                        ? "- 6 election-pass cost as the partition grows: measured above (no numeric goal; see the notes)\n"
                        : "- 6 election-pass cost as the partition grows: not measured in this run\n");
        return b.toString();
    }

    private static String list(List<Double> values, String format) {
        return values.stream().map(v -> String.format(Locale.ROOT, format, v)).collect(Collectors.joining(", "));
    }

    private static String jsonString(String v) {
        return "\"" + v.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Seconds, or null for a time that was not reached (negative). */
    private static String jsonSeconds(long nanos) {
        return nanos < 0 ? "null" : num(nanos / 1e9);
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "null";
    }

    /** Every measure (system, n, p50/p90/p99/max in ms) and the goal verdicts, as JSON. */
    static void writeJson(
            Path file, List<Samples> rows, OursBench.Throughput throughput, List<Goal> goals, double minutes)
            throws IOException {
        StringBuilder j = new StringBuilder("{\n");
        j.append("  \"run\": ")
                .append(jsonString(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)))
                .append(",\n");
        j.append("  \"minutes\": ").append(num(minutes)).append(",\n");
        j.append("  \"machine\": ").append(jsonString(machine())).append(",\n");
        j.append("  \"load\": ").append(jsonString(LOAD.describe())).append(",\n");
        j.append("  \"measures\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Samples s = rows.get(i);
            j.append(String.format(
                    Locale.ROOT,
                    "    {\"measure\": %s, \"system\": %s, \"unit\": \"ms\", \"n\": %d, \"p50\": %s,"
                            + " \"p90\": %s, \"p99\": %s, \"max\": %s}%s%n",
                    jsonString(s.measure()),
                    jsonString(s.system()),
                    s.n(),
                    num(s.percentile(50) / 1e6),
                    num(s.percentile(90) / 1e6),
                    num(s.percentile(99) / 1e6),
                    num(s.max() / 1e6),
                    i + 1 < rows.size() ? "," : ""));
        }
        j.append("  ],\n  \"rates\": [\n");
        List<String> rates = new ArrayList<>();
        if (throughput != null) { // the baseline the async send's rate is compared with
            rates.add(String.format(
                    Locale.ROOT,
                    "    {\"measure\": \"3 one-record transactions per second\", \"unit\": \"tx/s\","
                            + " \"guardedPerSecond\": %s, \"plainPerSecond\": %s}",
                    num(throughput.guardedPerSecond()),
                    num(throughput.plainPerSecond())));
        }
        for (OursBench.SendRun run : java.util.Arrays.asList(SEND_FIXED, SEND_CLOSED)) {
            if (run != null) {
                rates.add(String.format(
                        Locale.ROOT,
                        "    {\"measure\": %s, \"system\": %s, \"unit\": \"records/s\", \"offered\": %s,"
                                + " \"committed\": %s, \"sent\": %d, \"failed\": %d, \"threads\": %d}",
                        jsonString("3 async send, " + run.label()),
                        jsonString(OursBench.SYSTEM + " Leadership.send"),
                        num(run.offeredPerSecond()),
                        num(run.committedPerSecond()),
                        run.sent(),
                        run.failed(),
                        run.threads()));
            }
        }
        if (PRODUCER_COST != null) {
            rates.add(String.format(
                    Locale.ROOT,
                    "    {\"measure\": \"5c one held role's producer, idle\", \"producers\": %d, \"heapKiB\": %s,"
                            + " \"threads\": %s, \"connections\": %s, \"idleCpuMsPerSecond\": %s}",
                    PRODUCER_COST.producers(),
                    num(PRODUCER_COST.heapBytes() / 1024),
                    num(PRODUCER_COST.threads()),
                    num(PRODUCER_COST.connections()),
                    num(PRODUCER_COST.idleCpuMillisPerSecond())));
        }
        for (OursBench.Batched run : batchedRuns()) {
            rates.add(String.format(
                    Locale.ROOT,
                    "    {\"measure\": \"3b %d records per transaction, per round\", \"unit\": \"records/s\","
                            + " \"records\": %d, \"guarded\": [%s], \"plain\": [%s], \"plusOne\": [%s],"
                            + " \"stamped\": [%s], \"ratio\": [%s], \"guardedP50ms\": [%s], \"plainP50ms\": [%s],"
                            + " \"plusOneP50ms\": [%s], \"stampedP50ms\": [%s]}",
                    run.recordsPerTx(),
                    run.recordsPerTx(),
                    list(run.guardedPerSecond(), "%.0f"),
                    list(run.plainPerSecond(), "%.0f"),
                    list(run.plusOnePerSecond(), "%.0f"),
                    list(run.stampedPerSecond(), "%.0f"),
                    list(run.ratios(), "%.3f"),
                    millis(run.guardedRoundP50()),
                    millis(run.plainRoundP50()),
                    millis(run.plusOneRoundP50()),
                    millis(run.stampedRoundP50())));
        }
        if (SPRING_SCALE != null) {
            SpringScaleBench.Result r = SPRING_SCALE;
            rates.add(String.format(
                    Locale.ROOT,
                    "    {\"measure\": \"5 Spring starter scale\", \"roles\": %d, \"acquireAllSeconds\": %s,"
                            + " \"threadsBefore\": %d, \"threadsHeld\": %d, \"memberThreads\": %d, \"renewals\": %d,"
                            + " \"lateRenewals\": %d, \"lapsesSeen\": %d, \"renewFailures\": %d, \"heapBeforeMiB\": %d,"
                            + " \"heapHeldMiB\": %d, \"standbyInEveryRosterSeconds\": %s, \"standbyPreparedSeconds\": %s,"
                            + " \"startCpu\": %s, \"standbyCpu\": %s, \"ends\": {%s}, \"threadsByPrefix\": {%s}}",
                    r.roles(),
                    jsonSeconds(r.acquireAllNanos()),
                    r.threadsBefore(),
                    r.threadsHeld(),
                    r.memberThreads(),
                    r.renewals(),
                    r.lateRenewals(),
                    r.lapsedSeen(),
                    r.renewFailures(),
                    r.heapBefore() >> 20,
                    r.heapHeld() >> 20,
                    jsonSeconds(r.standbyRosterNanos()),
                    jsonSeconds(r.standbyPreparedNanos()),
                    cpuJson(r.startCpu()),
                    cpuJson(r.standbyCpu()),
                    r.ends().entrySet().stream()
                            .map(e -> jsonString(e.getKey()) + ": " + e.getValue())
                            .collect(Collectors.joining(", ")),
                    r.newByPrefix().entrySet().stream()
                            .map(e -> jsonString(e.getKey()) + ": " + e.getValue())
                            .collect(Collectors.joining(", "))));
        }
        j.append(String.join(",\n", rates)).append("\n  ],\n  \"goals\": [\n");
        for (int i = 0; i < goals.size(); i++) {
            Goal g = goals.get(i);
            j.append(String.format(
                    Locale.ROOT,
                    "    {\"id\": %s, \"goal\": %s, \"value\": %s, \"verdict\": %s}%s%n",
                    jsonString(g.id()),
                    jsonString(g.goal()),
                    jsonString(g.value()),
                    jsonString(g.met() ? "met" : "missed"),
                    i + 1 < goals.size() ? "," : ""));
        }
        j.append("  ]\n}\n");
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, j.toString(), StandardCharsets.UTF_8);
    }

    private static void goal(StringBuilder b, String what, long nanos, long limitMs) {
        b.append(String.format(
                Locale.ROOT,
                "- %s: %s ms, %s%n",
                what,
                ms(nanos),
                nanos <= limitMs * 1_000_000L
                        ? "met"
                        : String.format(Locale.ROOT, "MISSED by %s ms", ms(nanos - limitMs * 1_000_000L))));
    }

    private static String ratio(long ours, long peer) {
        return peer == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", (double) ours / peer);
    }

    static String machine() {
        String cpu = "unknown CPU";
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            cpu = lines.filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse(cpu);
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return String.format(
                Locale.ROOT,
                "%d CPUs (`nproc`), %s; Java %s (%s, %s); %s %s; heap max %d MiB",
                Runtime.getRuntime().availableProcessors(),
                cpu,
                System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.name"),
                System.getProperty("java.vendor"),
                System.getProperty("os.name"),
                System.getProperty("os.version"),
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() >> 20);
    }
}
