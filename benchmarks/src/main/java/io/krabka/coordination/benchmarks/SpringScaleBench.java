package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.CoordinationObserver;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * One member holding many roles through the Spring Boot starter. A Spring Boot application context
 * (no web server) with the starter's auto-configuration and {@code krabka.coordination.roles} = N roles, on a warmed
 * broker in a JVM of its own ({@link BrokerJvm}), as users run one; waits until the member holds every role, holds them for a while, and counts the JVM's live threads
 * before the context and while it holds them all, by name prefix. Renewals after their deadline are found two ways: a
 * {@link CoordinationObserver} compares each renewal's completion with the deadline the leadership had before it, and a
 * sampler checks every 50 ms whether a held leadership's deadline has passed (a lapse without renewal). EXPIRED ends are
 * counted from the observer.
 */
final class SpringScaleBench {

    /** The lease and renew interval of the run (Bench's defaults: the starter's own, 30 s and 10 s). */
    static Duration LEASE = Duration.ofSeconds(6);

    static Duration RENEW = Duration.ofSeconds(2);

    /**
     * acquireAllNanos is -1 when the member never held every role at once; heldMax says how many it held at most. Heap:
     * used after a GC. The standby's times (from its context's start: every roster names it, it prepared a producer for
     * every role) are -1 when not reached within 90 s.
     */
    record Result(
            int roles,
            int heldMax,
            long acquireAllNanos,
            int threadsBefore,
            int threadsHeld,
            Map<String, Integer> newByPrefix,
            List<Long> renewTook,
            int renewals,
            int lateRenewals,
            int lapsedSeen,
            int renewFailures,
            Map<String, Integer> ends,
            double holdSeconds,
            long worstLateNanos,
            long heapBefore,
            long heapHeld,
            long standbyRosterNanos,
            long standbyPreparedNanos,
            CpuSplit.Split startCpu,
            CpuSplit.Split standbyCpu) {
        int memberThreads() {
            return threadsHeld - threadsBefore;
        }
    }

    /** Watches renewals and ends for the bench; the loop is set once the context is up. */
    static final class Watch implements CoordinationObserver {
        volatile LeadershipLoop loop;
        final Map<Role, Instant> deadlines = new ConcurrentHashMap<>();
        final List<Long> renewTook = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger renewals = new AtomicInteger();
        final AtomicInteger late = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicLong worstLate = new AtomicLong(Long.MIN_VALUE);
        final Map<String, AtomicInteger> ends = new ConcurrentHashMap<>();

        private Instant deadlineOf(Role role) {
            LeadershipLoop l = loop;
            return l == null
                    ? null
                    : l.leadership(role).map(Leadership::deadline).orElse(null);
        }

        @Override
        public void granted(Role role, Duration took) {
            Instant d = deadlineOf(role);
            if (d != null) {
                deadlines.put(role, d);
            }
        }

        @Override
        public void renewed(Role role, Duration took) {
            Instant now = Instant.now();
            Instant before = deadlines.get(role);
            renewals.incrementAndGet();
            renewTook.add(took.toNanos());
            if (before != null) {
                long lateNanos = Duration.between(before, now).toNanos();
                worstLate.accumulateAndGet(lateNanos, Math::max);
                if (lateNanos > 0) {
                    late.incrementAndGet();
                }
            }
            Instant d = deadlineOf(role);
            if (d != null) {
                deadlines.put(role, d);
            }
        }

        @Override
        public void renewFailed(Role role) {
            failures.incrementAndGet();
        }

        @Override
        public void ended(Role role, LeadershipEndCause cause) {
            ends.computeIfAbsent(cause.name(), k -> new AtomicInteger()).incrementAndGet();
        }
    }

    private static volatile Watch WATCH = new Watch();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        static Watch benchWatch() {
            return WATCH;
        }
    }

    /** {@code brokerPid}: the broker JVM, whose CPU the report shows beside the member's (-1: in this JVM). */
    static Result run(
            KafkaTestCluster cluster, long brokerPid, int roles, Duration hold, Duration lease, Duration renew)
            throws Exception {
        LEASE = lease;
        RENEW = renew;
        WATCH = new Watch();
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        Map<String, Object> props = new HashMap<>();
        props.put("spring.main.web-application-type", "none");
        props.put("spring.main.banner-mode", "off");
        props.put("spring.kafka.bootstrap-servers", cluster.bootstrapServers());
        props.put("krabka.coordination.member-id", "spring-member");
        props.put("krabka.coordination.lease.duration", LEASE.toMillis() + "ms");
        props.put("krabka.coordination.lease.renew-interval", RENEW.toMillis() + "ms");
        props.put("krabka.coordination.lease.challenge-stagger", Math.min(500, lease.toMillis() / 6) + "ms");
        props.put("krabka.coordination.topic.name", "bench_spring_coordination");
        props.put("krabka.coordination.topic.replication-factor", "1");
        props.put("krabka.coordination.topic.allow-unsafe", "true");
        List<Role> all = new ArrayList<>();
        for (int i = 0; i < roles; i++) {
            props.put("krabka.coordination.roles[" + i + "]", "spring-role-" + i);
            all.add(Role.of("spring-role-" + i));
        }
        // The sampler exists before the first count, so it is not counted as the member's.
        AtomicInteger lapsed = new AtomicInteger();
        Set<String> lapsedSeen = ConcurrentHashMap.newKeySet();
        Thread sampler = new Thread(
                () -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        LeadershipLoop l = WATCH.loop;
                        if (l != null) {
                            Instant now = Instant.now();
                            for (Role r : all) {
                                l.leadership(r).ifPresent(ld -> {
                                    if (ld.isActive()
                                            && now.isAfter(ld.deadline())
                                            && lapsedSeen.add(r.name() + "@" + ld.deadline())) {
                                        lapsed.incrementAndGet();
                                    }
                                });
                            }
                        }
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "bench-spring-lapse-sampler");
        sampler.setDaemon(true);
        sampler.start();
        Map<Long, String> before = threads();
        long heapBefore = heapAfterGc();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        CpuSplit cpu = new CpuSplit(brokerPid);
        long t0 = System.nanoTime();
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(App.class).properties(props).run();
        try {
            LeadershipLoop loop = context.getBean(LeadershipLoop.class);
            WATCH.loop = loop;
            for (Role r : all) { // grants before the loop was known: take their deadlines now
                WATCH.granted(r, Duration.ZERO);
            }
            long waitUntil = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            int held = 0;
            int heldMax = 0;
            while (System.nanoTime() < waitUntil) {
                held = (int) all.stream()
                        .filter(r -> loop.state(r) == MemberRoleState.LEADER)
                        .count();
                heldMax = Math.max(heldMax, held);
                if (held == roles) {
                    break;
                }
                Thread.sleep(20);
            }
            long acquireAll = System.nanoTime() - t0;
            CpuSplit.Split startCpu = cpu.since();
            System.err.printf("  spring starter: holds %d of %d roles after %.1f s%n", held, roles, acquireAll / 1e9);
            long h0 = System.nanoTime();
            Thread.sleep(hold.toMillis());
            double holdSeconds = (System.nanoTime() - h0) / 1e9;
            int threadsHeld = ManagementFactory.getThreadMXBean().getThreadCount();
            long heapHeld = heapAfterGc();
            System.err.printf(
                    "  spring starter: heap used after a GC %d MiB before the context, %d MiB holding every role%n",
                    heapBefore >> 20, heapHeld >> 20);
            Map<Long, String> after = threads();
            Map<String, Integer> byPrefix = new TreeMap<>();
            after.forEach((id, name) -> {
                if (!before.containsKey(id)) {
                    byPrefix.merge(prefix(name), 1, Integer::sum);
                }
            });
            // Threads that ended since the first count (none expected) would make the difference smaller than the sum.
            int gone = (int) before.keySet().stream()
                    .filter(id -> !after.containsKey(id))
                    .count();
            if (gone > 0) {
                byPrefix.put("(threads of before that ended)", -gone);
            }
            int stillHeld = (int) all.stream()
                    .filter(r -> loop.state(r) == MemberRoleState.LEADER)
                    .count();
            StandbyJoin standby = standbyJoins(props, all, context.getBean(CoordinationClient.class), brokerPid);
            System.err.printf(
                    "  spring starter: %d threads before, %d holding (%d roles still held after %.0f s); %d renewals,"
                            + " %d after their deadline, %d lapses seen, ends %s%n",
                    threadsBefore,
                    threadsHeld,
                    stillHeld,
                    holdSeconds,
                    WATCH.renewals.get(),
                    WATCH.late.get(),
                    lapsed.get(),
                    WATCH.ends);
            if (held < roles) {
                System.err.printf("  spring starter: WARNING only %d of %d roles were held%n", held, roles);
            }
            return new Result(
                    roles,
                    heldMax,
                    held == roles ? acquireAll : -1,
                    threadsBefore,
                    threadsHeld,
                    byPrefix,
                    new ArrayList<>(WATCH.renewTook),
                    WATCH.renewals.get(),
                    WATCH.late.get(),
                    lapsed.get(),
                    WATCH.failures.get(),
                    WATCH.ends.entrySet().stream()
                            .collect(Collectors.toMap(
                                    Map.Entry::getKey, e -> e.getValue().get(), (a, b) -> a, TreeMap::new)),
                    holdSeconds,
                    WATCH.worstLate.get(),
                    heapBefore,
                    heapHeld,
                    standby.rosterNanos(),
                    standby.preparedNanos(),
                    startCpu,
                    standby.cpu());
        } finally {
            long c0 = System.nanoTime();
            context.close();
            sampler.interrupt();
            System.err.printf("  spring starter: context closed in %.1f s%n", (System.nanoTime() - c0) / 1e9);
        }
    }

    /** The second member of the bench: the same roles, no observer. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class StandbyApp {}

    /**
     * A standby joins the member that holds every role. Prints
     * when every role's roster names it (read by the holder's describe) and when it has
     * prepared a producer for each role it is next in line for (its producers' I/O threads,
     * named after its client id), then closes it.
     */
    /** When a joining standby was in every roster and had every producer prepared (-1: not within 90 s), and the CPU until then. */
    record StandbyJoin(long rosterNanos, long preparedNanos, CpuSplit.Split cpu) {}

    private static StandbyJoin standbyJoins(
            Map<String, Object> props, List<Role> all, CoordinationClient holder, long brokerPid) {
        Map<String, Object> standby = new HashMap<>(props);
        standby.put("krabka.coordination.member-id", "spring-standby");
        standby.put("spring.kafka.client-id", "bench-standby");
        MemberId member = MemberId.of("spring-standby");
        long s0 = System.nanoTime();
        long registeredAt = -1;
        long preparedAt = -1;
        int registered = 0;
        int prepared = 0;
        CpuSplit.Split cpu = null;
        CpuSplit cpuFromStart = new CpuSplit(brokerPid);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(StandbyApp.class)
                .properties(standby)
                .run();
        try {
            long giveUp = s0 + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < giveUp && (registeredAt < 0 || preparedAt < 0)) {
                if (registeredAt < 0) {
                    registered = (int) holder.describe(all).values().stream()
                            .filter(status -> status.roster().stream()
                                    .anyMatch(ranked -> ranked.member().equals(member)))
                            .count();
                    if (registered == all.size()) {
                        registeredAt = System.nanoTime() - s0;
                    }
                }
                if (preparedAt < 0) {
                    prepared = (int) Thread.getAllStackTraces().keySet().stream()
                            .filter(t -> t.getName()
                                    .startsWith("kafka-producer-network-thread | bench-standby-coordination-role-"))
                            .count();
                    if (prepared >= all.size()) {
                        preparedAt = System.nanoTime() - s0;
                    }
                }
                Thread.sleep(100);
            }
            cpu = cpuFromStart.since();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            long c0 = System.nanoTime();
            context.close();
            System.err.printf(
                    "  spring starter: a standby joining %d held roles: in every roster after %s, producers prepared"
                            + " for %s; %d rosters and %d producers at the end; its context closed in %.1f s%n",
                    all.size(),
                    registeredAt < 0 ? "never (90 s)" : String.format("%.1f s", registeredAt / 1e9),
                    preparedAt < 0 ? "not all (90 s)" : String.format("all after %.1f s", preparedAt / 1e9),
                    registered,
                    prepared,
                    (System.nanoTime() - c0) / 1e9);
        }
        return new StandbyJoin(registeredAt, preparedAt, cpu);
    }

    /** The heap in use after a GC. */
    static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static Map<Long, String> threads() {
        return Thread.getAllStackTraces().keySet().stream()
                .collect(Collectors.toMap(Thread::getId, Thread::getName, (a, b) -> a));
    }

    /** A thread's name without what numbers it: "kafka-producer-network-thread | producer-x" -> "kafka-producer-network-thread". */
    static String prefix(String name) {
        String p = name.contains(" | ") ? name.substring(0, name.indexOf(" | ")) : name;
        String prev;
        do {
            prev = p;
            p = p.replaceAll("[-_ #.]*\\d+$", "");
        } while (!p.equals(prev));
        return p.isEmpty() ? name : p;
    }
}
