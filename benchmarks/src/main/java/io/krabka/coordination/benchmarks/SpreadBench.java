package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.kafka.ChildJvm;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The spread benchmark: {@code roles} roles over four starter members with
 * {@code krabka.coordination.balance=spread}, each its own JVM ({@link SpreadMember}), against one member holding them
 * all, measured in the same run on the same broker: each member's live threads and heap used after a GC, as a ratio to
 * the lone member's, and how long after the fourth member's JVM starts the shares are even again (every role held,
 * each member within one of the others). Run alone: {@code -Dbench.only=spread}; arguments {@code --spread-roles=1000}
 * {@code --spread-lease-ms=6000 --spread-renew-ms=2000 --spread-stagger-ms=1000} (the defaults).
 */
final class SpreadBench {

    private static final List<String> MEMBER_JVM = List.of(
            "-Xmx768m",
            "-XX:+UseSerialGC",
            "-Dorg.springframework.boot.logging.LoggingSystem=none",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
            "-Dlog4j2.configurationFile=classpath:bench-log4j2.xml");
    private static final Duration READY = Duration.ofMinutes(10);
    // The lease timings of every member: --spread-lease-ms, --spread-renew-ms, --spread-stagger-ms.
    private static long leaseMs;
    private static long renewMs;
    private static long staggerMs;

    private SpreadBench() {}

    /** One member JVM; its lines are read back from its log. */
    private record Member(String name, Process process, Path log) {

        int held() {
            List<String> lines = lines("HELD ");
            return lines.isEmpty()
                    ? 0
                    : Integer.parseInt(lines.get(lines.size() - 1).split(" ")[2]);
        }

        /** Live threads, heap used after a GC (bytes), moves made and the threads by name, asked for on stdin. */
        Stats stats() throws Exception {
            int before = lines("STATS ").size();
            Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            in.write("stats\n");
            in.flush();
            await(() -> lines("STATS ").size() > before, Duration.ofSeconds(30), name + " answers stats");
            String[] last = lines("STATS ").get(before).split(" ");
            return new Stats(
                    Long.parseLong(last[1]),
                    Long.parseLong(last[2]),
                    Long.parseLong(last[3]),
                    last.length > 4 ? last[4] : "");
        }

        /** The member's {@code GRANTED} and {@code ENDED} lines: time (monotonic ns), role, and for an end its cause. */
        List<String[]> events() {
            List<String[]> events = new ArrayList<>();
            lines("GRANTED ").forEach(line -> events.add(line.split(" ")));
            lines("ENDED ").forEach(line -> events.add(line.split(" ")));
            return events;
        }

        private List<String> lines(String prefix) {
            try {
                return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                        .filter(l -> l.startsWith(prefix))
                        .toList();
            } catch (IOException e) {
                return List.of();
            }
        }
    }

    private record Stats(long threads, long heap, long moves, String threadsByName) {}

    static void main(String[] args) throws Exception {
        int roles = Integer.parseInt(Bench.arg(args, "spread-roles", "1000"));
        leaseMs = Long.parseLong(Bench.arg(args, "spread-lease-ms", Long.toString(SpringScaleBench.LEASE.toMillis())));
        renewMs = Long.parseLong(Bench.arg(args, "spread-renew-ms", Long.toString(SpringScaleBench.RENEW.toMillis())));
        staggerMs = Long.parseLong(Bench.arg(args, "spread-stagger-ms", "1000"));
        Path logs = Files.createTempDirectory("spread-bench");
        List<Member> started = new ArrayList<>();
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            // The baseline: one member holds every role.
            Member solo = start(cluster, "solo", "coordination-solo", roles, logs, started);
            long soloStart = System.nanoTime();
            await(() -> solo.held() == roles, READY, "the lone member holds all " + roles + " roles");
            double soloHeld = (System.nanoTime() - soloStart) / 1e9;
            Stats soloStats = solo.stats();
            solo.process().destroyForcibly().waitFor();

            // Three members even out, then a fourth arrives.
            List<Member> members = new ArrayList<>();
            for (String name : List.of("m1", "m2", "m3")) {
                members.add(start(cluster, name, "coordination-spread", roles, logs, started));
            }
            long threeStart = System.nanoTime();
            await(() -> even(members, roles), READY, "three members hold even shares");
            double threeEven = (System.nanoTime() - threeStart) / 1e9;
            members.add(start(cluster, "m4", "coordination-spread", roles, logs, started));
            long arrived = System.nanoTime();
            await(() -> even(members, roles), READY, "four members hold even shares");
            double fourEven = (System.nanoTime() - arrived) / 1e9;

            StringBuilder report = new StringBuilder();
            report.append(String.format(
                    "Spread, %d roles through the starter (lease %d ms, renew %d ms, stagger %d ms), each member "
                            + "its own JVM:%n",
                    roles, leaseMs, renewMs, staggerMs));
            report.append(String.format(
                    "- one member alone: held all after %.1f s; %d live threads, heap used after GC %d MiB; "
                            + "threads by name %s%n",
                    soloHeld, soloStats.threads(), soloStats.heap() >> 20, soloStats.threadsByName()));
            report.append(String.format("- three members (started together): even shares after %.1f s%n", threeEven));
            report.append(
                    String.format("- a fourth member: shares even again %.1f s after its JVM started%n", fourEven));
            for (Member member : members) {
                Stats stats = member.stats();
                report.append(String.format(
                        "- %s: holds %d; %d live threads (%.2f of the lone member's), heap used after GC %d MiB "
                                + "(%.2f of its); %d moves made; threads by name %s%n",
                        member.name(),
                        member.held(),
                        stats.threads(),
                        stats.threads() / (double) soloStats.threads(),
                        stats.heap() >> 20,
                        stats.heap() / (double) soloStats.heap(),
                        stats.moves(),
                        stats.threadsByName()));
            }
            report.append(gaps(members));
            System.out.print(report);
        } finally {
            started.forEach(member -> member.process().destroyForcibly());
        }
    }

    private static Member start(
            KafkaTestCluster cluster, String name, String topic, int roles, Path logs, List<Member> started) {
        Path log = logs.resolve(name + ".log");
        Process process = ChildJvm.start(
                SpreadMember.class.getName(),
                MEMBER_JVM,
                List.of(
                        "bootstrap=" + cluster.bootstrapServers(),
                        "topic=" + topic,
                        "member=" + name,
                        "roles=" + roles,
                        "leaseMs=" + leaseMs,
                        "renewMs=" + renewMs,
                        "staggerMs=" + staggerMs),
                log);
        Member member = new Member(name, process, log);
        started.add(member);
        return member;
    }

    /**
     * How long each role was without a holder after a member released it (a move, by
     * handover): from the release's end event to the next grant of the role by any member
     * after the releaser's own grant, on the monotonic clock all the JVMs share (zero when
     * the next grant came before the end event was published); and how many leases ran out
     * instead.
     */
    private static String gaps(List<Member> members) {
        Map<String, List<Long>> grants = new HashMap<>();
        Map<String, List<Long>> grantsByMember = new HashMap<>();
        List<String[]> releases = new ArrayList<>();
        int expired = 0;
        for (Member member : members) {
            for (String[] event : member.events()) {
                if (event[0].equals("GRANTED")) {
                    grants.computeIfAbsent(event[2], role -> new ArrayList<>()).add(Long.parseLong(event[1]));
                    grantsByMember
                            .computeIfAbsent(member.name() + " " + event[2], key -> new ArrayList<>())
                            .add(Long.parseLong(event[1]));
                } else if (event[3].equals("RELEASED")) {
                    releases.add(new String[] {member.name(), event[1], event[2]});
                } else if (event[3].equals("EXPIRED")) {
                    expired++;
                }
            }
        }
        List<Long> gaps = new ArrayList<>();
        for (String[] release : releases) {
            long at = Long.parseLong(release[1]);
            long tenure = grantsByMember.getOrDefault(release[0] + " " + release[2], List.of()).stream()
                    .filter(granted -> granted <= at)
                    .max(Long::compare)
                    .orElse(Long.MIN_VALUE);
            grants.getOrDefault(release[2], List.of()).stream()
                    .filter(granted -> granted > tenure)
                    .min(Long::compare)
                    .ifPresent(granted -> gaps.add(Math.max(0, granted - at)));
        }
        Collections.sort(gaps);
        if (gaps.isEmpty()) {
            return String.format("- no releases; %d leases ran out%n", expired);
        }
        return String.format(
                "- a released role without a holder until its next grant (%d releases): p50 %.0f ms, p90 %.0f ms, "
                        + "p99 %.0f ms, max %.0f ms; %d leases ran out (EXPIRED ends)%n",
                gaps.size(),
                percentile(gaps, 0.5),
                percentile(gaps, 0.9),
                percentile(gaps, 0.99),
                gaps.get(gaps.size() - 1) / 1e6,
                expired);
    }

    private static double percentile(List<Long> sorted, double p) {
        return sorted.get(Math.max(0, (int) Math.ceil(p * sorted.size()) - 1)) / 1e6;
    }

    private static boolean even(List<Member> members, int roles) {
        List<Integer> held = members.stream().map(Member::held).toList();
        int min = held.stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = held.stream().mapToInt(Integer::intValue).max().orElse(0);
        return held.stream().mapToInt(Integer::intValue).sum() == roles && max - min <= 1;
    }

    private static void await(BooleanSupplier condition, Duration within, String what) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not within " + within + ": " + what);
            }
            Thread.sleep(200); // a poll of another process's log, not a synchronisation within this one
        }
    }
}
