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
 * Runs every measure for this library and its peers in one JVM on one machine, prints a Markdown table and
 * writes it into docs/PERFORMANCE.md between the generated-block markers (the rest of that file is kept).
 *
 * <pre>./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests</pre>
 *
 * Arguments: {@code --out=FILE} (where to write; none: print only), {@code --handovers=30}, {@code --crashes=10},
 * {@code --cold=10}, {@code --describes=300}, {@code --tx=300} (transactions per throughput round, 3 rounds),
 * {@code --only=ours,curator,spring,scale,fold} (which groups run; default all of these; the system property {@code
 * bench.only} overrides it, and {@code -Dbench.only=pipeline} runs only {@link PipelineBench}, which writes its own block
 * and leaves this one as it is), {@code --scale=100,500,1000} (roles per member in measure 5), {@code --scale-seconds=20}
 * (renewal phase), {@code --fold=1000,10000,100000,1000000} (records in the role's partition in measure 6),
 * {@code --fold-passes=50}, {@code --fold-catchups=5}.
 */
public final class Bench {

    static final String BEGIN = "<!-- BEGIN GENERATED: benchmarks/ Bench; do not edit by hand -->";
    static final String END = "<!-- END GENERATED -->";
    static final String COMMAND = "./mvnw -B -q -Pbench -pl benchmarks -am verify -DskipTests";

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        String out = arg(args, "out", "");
        int handovers = Integer.parseInt(arg(args, "handovers", "30"));
        int crashes = Integer.parseInt(arg(args, "crashes", "10"));
        int cold = Integer.parseInt(arg(args, "cold", "10"));
        int describes = Integer.parseInt(arg(args, "describes", "300"));
        int tx = Integer.parseInt(arg(args, "tx", "300"));
        String selected = System.getProperty("bench.only", "");
        java.util.Set<String> only = java.util.Set.of((selected.isBlank() ? arg(args, "only", "ours,curator,spring,scale,fold")
                : selected).split(","));
        if (only.equals(java.util.Set.of("pipeline"))) {
            PipelineBench.main(args); // its own block in the output file; exits
            return;
        }
        List<Integer> scaleSizes = ints(arg(args, "scale", "100,500,1000"));
        int scaleSeconds = Integer.parseInt(arg(args, "scale-seconds", "20"));
        RENEW_AFTER_SECONDS = scaleSeconds;
        List<Integer> foldSizes = ints(arg(args, "fold", "1000,10000,100000,1000000"));
        int foldPasses = Integer.parseInt(arg(args, "fold-passes", "50"));
        int foldCatchUps = Integer.parseInt(arg(args, "fold-catchups", "5"));
        long began = System.nanoTime();

        List<Samples> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        OursBench.Throughput throughput = null;
        if (only.contains("ours") || only.contains("scale") || only.contains("fold")) {
        System.err.println("benchmarks: Kafka (this library)");
        try (OursBench ours = new OursBench()) {
            if (only.contains("ours")) {
            rows.add(new Samples("1 graceful handover", OursBench.SYSTEM, ours.handover(2, handovers)));
            List<long[]> crash = ours.crash(1, crashes);
            rows.add(new Samples("2 crash failover: overshoot past deadline", OursBench.SYSTEM, column(crash, 0)));
            rows.add(new Samples("2 crash failover: kill -> granted", OursBench.SYSTEM, column(crash, 1)));
            List<List<Long>> describe = ours.describe(describes);
            rows.add(new Samples("4 describe(role)", OursBench.SYSTEM, describe.get(0)));
            rows.add(new Samples("4 describe(role)", "raw Admin.describeTransactions", describe.get(1)));
            rows.add(new Samples("7 cold start to first grant", OursBench.SYSTEM, ours.coldStart(1, cold)));
            List<List<Long>> init = ours.initTransactions(20);
            rows.add(new Samples("x initTransactions, new producer", OursBench.SYSTEM + " (experiment)", init.get(0)));
            rows.add(new Samples("x initTransactions, pre-connected producer", OursBench.SYSTEM + " (experiment)", init.get(1)));
            rows.add(new Samples("x initTransactions, new producer, retry.backoff.ms=10", OursBench.SYSTEM + " (experiment)", init.get(2)));
            throughput = ours.throughput(3, tx);
            rows.add(new Samples("3 one-record transaction", OursBench.SYSTEM + " guarded write", throughput.guarded()));
            rows.add(new Samples("3 one-record transaction", "plain transactional KafkaProducer", throughput.plain()));
            }
            ScaleBench scale = new ScaleBench(ours.cluster());
            if (only.contains("scale")) {
                for (int n : scaleSizes) {
                    ScaleBench.Scale r = scale.scale(n, java.time.Duration.ofSeconds(scaleSeconds));
                    rows.add(new Samples("5 scale " + n + " roles: acquire one role (sequential)", OursBench.SYSTEM, r.acquire()));
                    rows.add(new Samples("5 scale " + n + " roles: renew() one role, " + ScaleBench.RENEW_THREADS + " renew threads",
                            OursBench.SYSTEM, r.renew()));
                    notes.add(scaleNote(r));
                }
            }
            if (only.contains("fold")) {
                for (int n : foldSizes) {
                    ScaleBench.Fold r = scale.fold(n, foldCatchUps, foldPasses);
                    rows.add(new Samples("6 partition " + n + " records: catch-up (new client's first pass)", OursBench.SYSTEM, r.catchUp()));
                    rows.add(new Samples("6 partition " + n + " records: incremental election pass", OursBench.SYSTEM, r.passes()));
                    notes.add(String.format(Locale.ROOT, "- 6 partition of %d records (filled in %.1f s): catch-up p50 %s ms,"
                            + " incremental pass p50 %s ms / p90 %s ms", n, r.fillNanos() / 1e9,
                            ms(new Samples("", "", r.catchUp()).percentile(50)), ms(new Samples("", "", r.passes()).percentile(50)),
                            ms(new Samples("", "", r.passes()).percentile(90))));
                }
            }
        }
        }
        if (only.contains("curator")) {
        System.err.println("benchmarks: Curator");
        try (CuratorBench curator = new CuratorBench()) {
            rows.add(new Samples("1 graceful handover", CuratorBench.SYSTEM, curator.handover(2, handovers)));
            List<long[]> crash = curator.crash(1, crashes);
            rows.add(new Samples("2 crash failover: overshoot past deadline", CuratorBench.SYSTEM, column(crash, 0)));
            rows.add(new Samples("2 crash failover: kill -> granted", CuratorBench.SYSTEM, column(crash, 1)));
            rows.add(new Samples("7 cold start to first grant", CuratorBench.SYSTEM, curator.coldStart(1, cold)));
        }
        }
        if (only.contains("spring")) {
        System.err.println("benchmarks: Spring Integration");
        try (SpringBench spring = new SpringBench()) {
            rows.add(new Samples("1 graceful handover", SpringBench.SYSTEM, spring.handover(2, handovers)));
            List<long[]> crash = spring.crash(1, crashes);
            rows.add(new Samples("2 crash failover: overshoot past deadline", SpringBench.SYSTEM, column(crash, 0)));
            rows.add(new Samples("2 crash failover: kill -> granted", SpringBench.SYSTEM, column(crash, 1)));
            rows.add(new Samples("7 cold start to first grant", SpringBench.SYSTEM, spring.coldStart(1, cold)));
        }
        }
        double minutes = (System.nanoTime() - began) / 60e9;
        String report = report(rows, throughput, notes, minutes, String.join(" ", args));
        System.out.println(report);
        if (!out.isEmpty()) {
            write(Path.of(out), report);
            System.err.println("written to " + Path.of(out).toAbsolutePath().normalize());
        }
        if (only.contains("pipeline")) {
            PipelineBench.run(args);
        }
        System.exit(0); // the brokers' and ZooKeeper's non-daemon threads
    }

    private static int RENEW_AFTER_SECONDS = 20;

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
        return String.format(Locale.ROOT, "- 5 scale, %d roles on one member (lease %d s, renew %d s, %d renew threads):"
                        + " acquired all in %.1f s; heap used after GC %d MiB (%d MiB before the member, +%d KiB per role);"
                        + " live threads %d (%d before, +%d); producer network threads +%d (one transactional producer per role"
                        + " plus the registrar); %d renewals in %.0f s (%.0f/s; renewing from the first grant through acquisition and %d s after), %d after their lease deadline, %d failed;"
                        + " worst start after renewAt %s ms",
                r.roles(), ScaleBench.SCALE_LEASE.duration().toSeconds(), ScaleBench.SCALE_LEASE.renewInterval().toSeconds(),
                ScaleBench.RENEW_THREADS, r.acquireAllNanos() / 1e9, r.heapHeld() >> 20, r.heapBefore() >> 20,
                Math.max(0, r.heapHeld() - r.heapBefore()) / 1024 / r.roles(), r.threadsHeld(), r.threadsBefore(),
                r.threadsHeld() - r.threadsBefore(), r.producerThreads(), r.renewals(), r.renewSeconds(),
                r.renewals() / r.renewSeconds(), RENEW_AFTER_SECONDS, r.missed(), r.failed(), ms(r.worstLateNanos()));
    }

    private static List<Long> column(List<long[]> pairs, int index) {
        return pairs.stream().map(p -> p[index]).collect(Collectors.toList());
    }

    private static String arg(String[] args, String name, String fallback) {
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

    private static Samples find(List<Samples> rows, String measure, String system) {
        return rows.stream().filter(s -> s.measure().equals(measure) && s.system().equals(system)).findFirst().orElse(null);
    }

    static String report(List<Samples> rows, OursBench.Throughput throughput, List<String> notes, double minutes, String args) {
        StringBuilder b = new StringBuilder();
        b.append(BEGIN).append('\n');
        b.append("Run ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME).replaceAll("\\.\\d+", ""))
                .append(String.format(Locale.ROOT, ", %.1f minutes, with `%s`%s.%n%n", minutes, COMMAND,
                        args.replaceAll("--out=\\S*", "").isBlank() ? ""
                                : " and `-Dbench.args=\"" + args.replaceAll("--out=\\S*", "").trim() + "\"`"));
        b.append("Machine: ").append(machine()).append("\n\n");
        b.append("| Measure | System | n | p50 ms | p90 ms | p99 ms | max ms | ours / this (p50, p99) |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Samples s : rows) {
            String ratio = "";
            if (!s.system().startsWith(OursBench.SYSTEM) && !s.measure().startsWith("3") && !s.measure().startsWith("x")) {
                Samples ours = find(rows, s.measure(), OursBench.SYSTEM);
                ratio = ours == null ? "" : ratio(ours.percentile(50), s.percentile(50)) + ", " + ratio(ours.percentile(99), s.percentile(99));
            } else if (s.measure().startsWith("3") && !s.system().startsWith(OursBench.SYSTEM)) {
                Samples ours = find(rows, s.measure(), OursBench.SYSTEM + " guarded write");
                ratio = ours == null ? "" : ratio(ours.percentile(50), s.percentile(50)) + ", " + ratio(ours.percentile(99), s.percentile(99));
            }
            b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s |%n", s.measure(), s.system(), s.n(),
                    ms(s.percentile(50)), ms(s.percentile(90)), ms(s.percentile(99)), ms(s.max()), ratio));
        }
        if (throughput != null) {
            b.append(String.format(Locale.ROOT, "%nThroughput (3): guarded writes %.0f tx/s, plain transactional producer %.0f tx/s:"
                    + " ratio %.2f (goal >= 0.90).%n", throughput.guardedPerSecond(), throughput.plainPerSecond(),
                    throughput.guardedPerSecond() / throughput.plainPerSecond()));
        }
        if (!notes.isEmpty()) {
            b.append("\nScale (5) and election-pass cost (6), ours only:\n\n");
            notes.forEach(n -> b.append(n).append('\n'));
        }
        b.append("\nGoals (ours):\n\n");
        Samples handover = find(rows, "1 graceful handover", OursBench.SYSTEM);
        if (handover != null) {
            goal(b, "1 graceful handover p50 <= 100 ms", handover.percentile(50), 100);
            goal(b, "1 graceful handover p99 <= 250 ms", handover.percentile(99), 250);
            goal(b, "2 crash overshoot p99 <= 200 ms", find(rows, "2 crash failover: overshoot past deadline", OursBench.SYSTEM).percentile(99), 200);
        }
        if (throughput != null) {
            double ratio = throughput.guardedPerSecond() / throughput.plainPerSecond();
            b.append(String.format(Locale.ROOT, "- 3 guarded-write throughput >= 0.9x plain: %.2fx, %s%n", ratio, ratio >= 0.9 ? "met" : "MISSED"));
        }
        Samples describeOurs = find(rows, "4 describe(role)", OursBench.SYSTEM);
        if (describeOurs != null) {
            double describe = (double) describeOurs.percentile(50)
                    / find(rows, "4 describe(role)", "raw Admin.describeTransactions").percentile(50);
            b.append(String.format(Locale.ROOT, "- 4 describe p50 <= 2x raw describeTransactions: %.2fx, %s%n", describe, describe <= 2 ? "met" : "MISSED"));
            goal(b, "7 cold start p50 <= 1500 ms", find(rows, "7 cold start to first grant", OursBench.SYSTEM).percentile(50), 1500);
        }
        boolean scaled = rows.stream().anyMatch(r -> r.measure().startsWith("5 "));
        boolean folded = rows.stream().anyMatch(r -> r.measure().startsWith("6 "));
        b.append(scaled ? "- 5 scale: measured above (no numeric goal; see the notes)\n"
                : "- 5 scale (100/500/1000 roles on one member): not measured in this run\n");
        b.append(folded ? "- 6 election-pass cost as the partition grows: measured above (no numeric goal; see the notes)\n"
                : "- 6 election-pass cost as the partition grows: not measured in this run\n");
        b.append(END).append('\n');
        return b.toString();
    }

    private static void goal(StringBuilder b, String what, long nanos, long limitMs) {
        b.append(String.format(Locale.ROOT, "- %s: %s ms, %s%n", what, ms(nanos), nanos <= limitMs * 1_000_000L ? "met"
                : String.format(Locale.ROOT, "MISSED by %s ms", ms(nanos - limitMs * 1_000_000L))));
    }

    private static String ratio(long ours, long peer) {
        return peer == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", (double) ours / peer);
    }

    static String machine() {
        String cpu = "unknown CPU";
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            cpu = lines.filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst().orElse(cpu);
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return String.format(Locale.ROOT, "%d CPUs (`nproc`), %s; Java %s (%s, %s); %s %s; heap max %d MiB",
                Runtime.getRuntime().availableProcessors(), cpu, System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.name"), System.getProperty("java.vendor"), System.getProperty("os.name"),
                System.getProperty("os.version"), ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() >> 20);
    }

    static void write(Path file, String block) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "# Performance\n\n" + BEGIN + "\n" + END + "\n";
        int from = text.indexOf(BEGIN);
        int to = text.indexOf(END);
        String updated = from < 0 || to < 0 ? text + "\n" + block
                : text.substring(0, from) + block + text.substring(to + END.length() + (text.startsWith("\n", to + END.length()) ? 1 : 0));
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, updated, StandardCharsets.UTF_8);
    }
}
