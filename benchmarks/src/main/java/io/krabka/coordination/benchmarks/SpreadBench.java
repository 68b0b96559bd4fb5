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
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Issue 24's benchmark: {@code roles} roles over four starter members with
 * {@code krabka.coordination.balance=spread}, each its own JVM ({@link SpreadMember}), against one member holding them
 * all, measured in the same run on the same broker: each member's live threads and heap used after a GC, as a ratio to
 * the lone member's, and how long after the fourth member's JVM starts the shares are even again (every role held,
 * each member within one of the others). Run alone: {@code -Dbench.only=spread}; arguments {@code --spread-roles=1000}.
 */
final class SpreadBench {

    private static final List<String> MEMBER_JVM = List.of("-Xmx768m", "-XX:+UseSerialGC",
            "-Dorg.springframework.boot.logging.LoggingSystem=none", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
            "-Dlog4j2.configurationFile=classpath:bench-log4j2.xml");
    private static final long LEASE_MS = SpringScaleBench.LEASE.toMillis();
    private static final long RENEW_MS = SpringScaleBench.RENEW.toMillis();
    private static final Duration READY = Duration.ofMinutes(5);

    private SpreadBench() {
    }

    /** One member JVM; its lines are read back from its log. */
    private record Member(String name, Process process, Path log) {

        int held() {
            List<String> lines = lines("HELD ");
            return lines.isEmpty() ? 0 : Integer.parseInt(lines.get(lines.size() - 1).split(" ")[2]);
        }

        /** Live threads, heap used after a GC (bytes) and moves made, asked for on stdin. */
        long[] stats() throws Exception {
            int before = lines("STATS ").size();
            Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            in.write("stats\n");
            in.flush();
            await(() -> lines("STATS ").size() > before, Duration.ofSeconds(30), name + " answers stats");
            String[] last = lines("STATS ").get(before).split(" ");
            return new long[] {Long.parseLong(last[1]), Long.parseLong(last[2]), Long.parseLong(last[3])};
        }

        private List<String> lines(String prefix) {
            try {
                return Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> l.startsWith(prefix)).toList();
            } catch (IOException e) {
                return List.of();
            }
        }
    }

    static void main(String[] args) throws Exception {
        int roles = Integer.parseInt(Bench.arg(args, "spread-roles", "1000"));
        Path logs = Files.createTempDirectory("spread-bench");
        List<Member> started = new ArrayList<>();
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            // The baseline: one member holds every role.
            Member solo = start(cluster, "solo", "coordination-solo", roles, logs, started);
            long soloStart = System.nanoTime();
            await(() -> solo.held() == roles, READY, "the lone member holds all " + roles + " roles");
            double soloHeld = (System.nanoTime() - soloStart) / 1e9;
            long[] soloStats = solo.stats();
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
            report.append(String.format("Spread, %d roles through the starter (lease %d ms, renew %d ms), each member its own JVM:%n",
                    roles, LEASE_MS, RENEW_MS));
            report.append(String.format("- one member alone: held all after %.1f s; %d live threads, heap used after GC %d MiB%n",
                    soloHeld, soloStats[0], soloStats[1] >> 20));
            report.append(String.format("- three members (started together): even shares after %.1f s%n", threeEven));
            report.append(String.format("- a fourth member: shares even again %.1f s after its JVM started%n", fourEven));
            for (Member member : members) {
                long[] stats = member.stats();
                report.append(String.format("- %s: holds %d; %d live threads (%.2f of the lone member's), heap used after GC %d MiB "
                        + "(%.2f of its); %d moves made%n", member.name(), member.held(), stats[0],
                        stats[0] / (double) soloStats[0], stats[1] >> 20, stats[1] / (double) soloStats[1], stats[2]));
            }
            System.out.print(report);
        } finally {
            started.forEach(member -> member.process().destroyForcibly());
        }
    }

    private static Member start(KafkaTestCluster cluster, String name, String topic, int roles, Path logs, List<Member> started) {
        Path log = logs.resolve(name + ".log");
        Process process = ChildJvm.start(SpreadMember.class.getName(), MEMBER_JVM, List.of("bootstrap=" + cluster.bootstrapServers(),
                "topic=" + topic, "member=" + name, "roles=" + roles, "leaseMs=" + LEASE_MS, "renewMs=" + RENEW_MS), log);
        Member member = new Member(name, process, log);
        started.add(member);
        return member;
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
