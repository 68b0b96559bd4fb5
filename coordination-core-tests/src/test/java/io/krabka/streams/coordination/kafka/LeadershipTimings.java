package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Measures, on one in-process broker and the real clock: acquire on an idle role,
 * graceful handover, failover overshoot past the deadline, and one describe next to
 * one raw DescribeTransactions. Not a test: it asserts nothing and runs only by hand:
 *
 * <pre>./mvnw -B -q -pl coordination-core-tests test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.krabka.streams.coordination.kafka.LeadershipTimings</pre>
 */
public final class LeadershipTimings {

    private static final LeaseConfig FAST =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(600), Duration.ofMillis(500));

    public static void main(String[] args) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            report("acquire on an idle role", measure(20, () -> acquireIdle(cluster)));
            report("graceful handover (close -> standby granted)", measure(20, () -> handover(cluster)));
            report("failover overshoot past the deadline (rank 0)", measure(8, () -> failover(cluster)));
            try (KafkaCoordinationTransport transport = cluster.transport();
                    CoordinationClient client = new CoordinationClient(transport, FAST, InstantSource.system())) {
                Role role = Role.of("describe-timing");
                Leadership held = client.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
                report("describe(role)", measure(300, () -> time(() -> client.describe(role))));
                report(
                        "raw Admin.describeTransactions",
                        measure(
                                300,
                                () -> time(() -> cluster.admin()
                                        .describeTransactions(List.of(role.name()))
                                        .description(role.name())
                                        .get(10, TimeUnit.SECONDS))));
                held.close();
            }
        }
        System.exit(0);
    }

    private static long acquireIdle(KafkaTestCluster cluster) throws Exception {
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = new CoordinationClient(transport, FAST, InstantSource.system())) {
            Role role = Role.of("idle-" + System.nanoTime());
            long start = System.nanoTime();
            client.acquire(role, MemberId.of("a"), Duration.ofSeconds(30)).close();
            return System.nanoTime() - start;
        }
    }

    private static long handover(KafkaTestCluster cluster) throws Exception {
        Role role = Role.of("handover-" + System.nanoTime());
        try (KafkaCoordinationTransport ta = cluster.transport();
                KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient a = new CoordinationClient(ta, FAST, InstantSource.system());
                CoordinationClient b = new CoordinationClient(tb, FAST, InstantSource.system())) {
            Leadership held = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
            b.tryAcquire(role, MemberId.of("b"));
            CompletableFuture<Long> granted = CompletableFuture.supplyAsync(() -> {
                try {
                    Leadership taken = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(30));
                    long grantedAt = System.nanoTime();
                    taken.close();
                    return grantedAt;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300); // let b settle into its wait before the release
            long start = System.nanoTime();
            held.close();
            return granted.get(30, TimeUnit.SECONDS) - start;
        }
    }

    private static long failover(KafkaTestCluster cluster) throws Exception {
        Role role = Role.of("failover-" + System.nanoTime());
        KafkaCoordinationTransport ta = cluster.transport();
        try (KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient b = new CoordinationClient(tb, FAST, InstantSource.system())) {
            CoordinationClient a = new CoordinationClient(ta, FAST, InstantSource.system());
            Leadership held = a.acquire(role, MemberId.of("a"), Duration.ofSeconds(30));
            b.tryAcquire(role, MemberId.of("b"));
            Instant deadline = held.deadline();
            ta.close(); // a dies: no release
            Leadership taken = b.acquire(role, MemberId.of("b"), Duration.ofSeconds(30));
            long overshoot = Duration.between(deadline, Instant.now()).toNanos();
            taken.close();
            return overshoot;
        }
    }

    private interface Step {
        long run() throws Exception;
    }

    private interface Call {
        void run() throws Exception;
    }

    private static long time(Call call) throws Exception {
        long start = System.nanoTime();
        call.run();
        return System.nanoTime() - start;
    }

    private static List<Long> measure(int runs, Step step) throws Exception {
        step.run(); // warm-up
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            samples.add(step.run());
        }
        Collections.sort(samples);
        return samples;
    }

    private static void report(String what, List<Long> sorted) {
        System.out.printf(
                "%-48s n=%4d  p50 %8.1f ms  p90 %8.1f ms  max %8.1f ms%n",
                what,
                sorted.size(),
                sorted.get(sorted.size() / 2) / 1e6,
                sorted.get((int) (sorted.size() * 0.9)) / 1e6,
                sorted.get(sorted.size() - 1) / 1e6);
    }
}
