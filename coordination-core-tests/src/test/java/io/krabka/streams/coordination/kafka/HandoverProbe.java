package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Times graceful handovers between two contenders on one in-process broker: holder
 * {@code release()} to the standby's {@code granted}. Not a test: it asserts nothing and
 * runs only by hand, to find what is on the handover's path:
 *
 * <pre>./mvnw -B -q -pl coordination-core-tests test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.krabka.streams.coordination.kafka.HandoverProbe</pre>
 */
public final class HandoverProbe {

    private static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(600), Duration.ofMillis(500));
    private static final int WARMUPS = 5;
    private static final int RUNS = 30;

    public static void main(String[] args) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start();
                KafkaCoordinationTransport ta = cluster.transport();
                KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient a = new CoordinationClient(ta, LEASE, InstantSource.system());
                CoordinationClient b = new CoordinationClient(tb, LEASE, InstantSource.system())) {
            List<Long> samples = new ArrayList<>();
            for (int i = 0; i < WARMUPS + RUNS; i++) {
                Role role = Role.of("probe-" + i);
                AtomicReference<CompletableFuture<Long>> grantedAt = new AtomicReference<>(new CompletableFuture<>());
                try (Contender first = contender(a, role, "a", grantedAt);
                        Contender second = contender(b, role, "b", grantedAt)) {
                    first.start();
                    long firstGrant = grantedAt.get().get(30, TimeUnit.SECONDS);
                    grantedAt.set(new CompletableFuture<>());
                    second.start();
                    // The standby registers and settles into its wait on the topic.
                    TimeUnit.MILLISECONDS.sleep(300);
                    Contender holder = first.leadership().isPresent() ? first : second;
                    long start = System.nanoTime();
                    holder.release();
                    long granted = grantedAt.get().get(30, TimeUnit.SECONDS);
                    if (i >= WARMUPS) {
                        samples.add(granted - start);
                    }
                    if (firstGrant == 0) {
                        throw new IllegalStateException();
                    }
                }
            }
            Collections.sort(samples);
            System.out.printf(
                    "handover release -> granted, n=%d: p50 %.1f ms, p90 %.1f ms, max %.1f ms%n%s%n",
                    samples.size(),
                    samples.get(samples.size() / 2) / 1e6,
                    samples.get(samples.size() * 9 / 10) / 1e6,
                    samples.get(samples.size() - 1) / 1e6,
                    samples.stream().map(s -> String.format("%.0f", s / 1e6)).toList());
        }
    }

    private static Contender contender(
            CoordinationClient client, Role role, String member, AtomicReference<CompletableFuture<Long>> grantedAt) {
        return new Contender(client, role, MemberId.of(member), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                grantedAt.get().complete(System.nanoTime());
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
    }
}
