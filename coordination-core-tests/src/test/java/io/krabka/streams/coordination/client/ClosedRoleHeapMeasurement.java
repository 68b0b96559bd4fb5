package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ContenderState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

/**
 * Not a test: prints the heap a client keeps after 2 000 roles were opened and closed
 * (ClosedRoleStateTest checks the entries). Run it with
 * {@code ./mvnw -q -pl coordination-core,coordination-test,coordination-core-tests test-compile exec:java
 * -Dexec.classpathScope=test -Dexec.mainClass=io.krabka.streams.coordination.client.ClosedRoleHeapMeasurement}.
 * "retained by the client" is the heap freed by dropping the client once the roles are
 * closed (the cluster, which keeps every record, stays).
 */
final class ClosedRoleHeapMeasurement {

    private ClosedRoleHeapMeasurement() {}

    public static void main(String[] args) throws Exception {
        measure("contenders, Balance.NONE", Balance.NONE, false);
        measure("contenders, Balance.SPREAD", Balance.SPREAD, false);
        measure("tryAcquire + close", Balance.NONE, true);
    }

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(10), Duration.ofSeconds(3), Duration.ofMillis(500));
    private static final int ROLES = 2_000;

    private static void measure(String what, Balance balance, boolean tryAcquire) throws Exception {
        try (ManualRuntime runtime = ManualRuntime.builder()
                .clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
                .build()) {
            InMemoryCluster cluster = new InMemoryCluster(runtime);
            InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(7));
            CoordinationClient client = new CoordinationClient(transport, CONFIG, runtime).balance(balance);
            // Warm-up: classes loaded, code compiled, the runtime's queues grown.
            openAndClose(runtime, client, "warm-", 200, tryAcquire);
            long before = usedAfterGc();
            openAndClose(runtime, client, "role-", ROLES, tryAcquire);
            long after = usedAfterGc();
            String entries = client.roleEntries().toString();
            client = null;
            long withoutClient = usedAfterGc();
            System.out.printf(
                    "HEAP %s: %d roles opened and closed; heap grew %d KB; retained by the client %d KB"
                            + " (%.1f KB per role); entries %s%n",
                    what,
                    ROLES,
                    (after - before) / 1024,
                    (after - withoutClient) / 1024,
                    (after - withoutClient) / 1024.0 / (ROLES + 200),
                    entries);
            assertThat(cluster).isNotNull();
            assertThat(transport).isNotNull();
        }
    }

    private static void openAndClose(
            ManualRuntime runtime, CoordinationClient client, String prefix, int count, boolean tryAcquire) {
        List<Role> roles =
                IntStream.range(0, count).mapToObj(i -> Role.of(prefix + i)).toList();
        MemberId me = MemberId.of("a");
        if (tryAcquire) {
            roles.forEach(role -> client.tryAcquire(role, me).orElseThrow().close());
            return;
        }
        AtomicInteger granted = new AtomicInteger();
        List<Contender> contenders = roles.stream()
                .map(role -> new Contender(client, role, me, new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        granted.incrementAndGet();
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
                }))
                .toList();
        contenders.forEach(Contender::start);
        assertThat(runtime.advanceUntil(() -> granted.get() == count, Duration.ofSeconds(60)))
                .isTrue();
        // A few renewals and balancer ticks while held.
        runtime.advance(CONFIG.renewInterval().multipliedBy(2));
        contenders.forEach(Contender::stop);
        assertThat(runtime.advanceUntil(
                        () -> contenders.stream().allMatch(c -> c.state() instanceof ContenderState.Stopped),
                        Duration.ofSeconds(60)))
                .isTrue();
        runtime.advance(Duration.ofSeconds(5));
    }

    private static long usedAfterGc() throws InterruptedException {
        Runtime jvm = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 6; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, jvm.totalMemory() - jvm.freeMemory());
        }
        return used;
    }
}
