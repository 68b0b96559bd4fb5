package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Measures 5 (one member holding many roles) and 6 (election-pass cost as the role's partition grows), for this
 * library only, on the same in-process broker as {@link OursBench}.
 */
final class ScaleBench {

    /** Measure 5's timings: lease 6 s, renew every 2 s. */
    static final LeaseConfig SCALE_LEASE =
            new LeaseConfig(Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofMillis(500));
    /** Threads that renew the held roles in measure 5. */
    static final int RENEW_THREADS = 4;

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger IDS = new AtomicInteger();

    private final KafkaTestCluster cluster;

    ScaleBench(KafkaTestCluster cluster) {
        this.cluster = cluster;
    }

    /** What one scale run saw. Heap in bytes, durations in nanoseconds. */
    record Scale(
            int roles,
            long acquireAllNanos,
            List<Long> acquire,
            List<Long> renew,
            long heapBefore,
            long heapHeld,
            int threadsBefore,
            int threadsHeld,
            int producerThreads,
            int renewals,
            int missed,
            int failed,
            long worstLateNanos,
            double renewSeconds) {}

    /** What one partition size saw: catch-up (a new client's first pass) and incremental passes, nanoseconds. */
    record Fold(int records, List<Long> catchUp, List<Long> passes, long fillNanos) {}

    Scale scale(int roles, Duration renewFor) throws Exception {
        long heapBefore = heapAfterGc();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        int producersBefore = producerThreads();
        String prefix = "scale" + roles + "-" + IDS.incrementAndGet() + "-";
        List<Long> acquire = new ArrayList<>();
        List<Long> renew = Collections.synchronizedList(new ArrayList<>());
        List<Leadership> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = new CoordinationClient(transport, SCALE_LEASE, InstantSource.system())) {
            MemberId me = MemberId.of("m");
            AtomicLong renewUntil = new AtomicLong(Long.MAX_VALUE);

            AtomicInteger renewals = new AtomicInteger();
            AtomicInteger missed = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            AtomicLong worstLate = new AtomicLong();
            long renewStart = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(RENEW_THREADS, r -> {
                Thread t = new Thread(r, "bench-renew");
                t.setDaemon(true);
                return t;
            });
            List<Future<?>> loops = new ArrayList<>();
            for (int k = 0; k < RENEW_THREADS; k++) {
                int slice = k;
                loops.add(pool.submit(() -> {
                    while (System.nanoTime() < renewUntil.get()) {
                        boolean any = false;
                        for (int i = slice; i < held.size(); i += RENEW_THREADS) {
                            Leadership l = held.get(i);
                            if (!l.isActive() || !l.renewDue()) {
                                continue;
                            }
                            any = true;
                            Instant renewAt = l.renewAt();
                            Instant deadline = l.deadline();
                            Instant began = Instant.now();
                            worstLate.accumulateAndGet(
                                    Duration.between(renewAt, began).toNanos(), Math::max);
                            long t0 = System.nanoTime();
                            try {
                                l.renew();
                                renew.add(System.nanoTime() - t0);
                                renewals.incrementAndGet();
                                if (Instant.now().isAfter(deadline)) {
                                    missed.incrementAndGet();
                                }
                            } catch (RuntimeException e) {
                                failed.incrementAndGet();
                            }
                        }
                        if (!any) {
                            Timing.sleep(10);
                        }
                    }
                    return null;
                }));
            }
            // Renewal runs from the first grant on, so that roles acquired early do not lapse while later ones are
            // acquired.
            long start = System.nanoTime();
            for (int i = 0; i < roles; i++) {
                long t0 = System.nanoTime();
                held.add(client.acquire(Role.of(prefix + i), me, WAIT));
                acquire.add(System.nanoTime() - t0);
            }
            long acquireAll = System.nanoTime() - start;
            System.err.printf("  acquired %d roles in %.1f s%n", roles, acquireAll / 1e9);
            renewUntil.set(System.nanoTime() + renewFor.toNanos());
            for (Future<?> f : loops) {
                f.get();
            }
            pool.shutdownNow();
            double renewSeconds = (System.nanoTime() - renewStart) / 1e9;
            int threadsHeld = ManagementFactory.getThreadMXBean().getThreadCount() - RENEW_THREADS;
            int producers = producerThreads() - producersBefore;
            long heapHeld = heapAfterGc();
            System.err.printf(
                    "  done: scale %d roles (%d renewals, %d missed, %d failed)%n",
                    roles, renewals.get(), missed.get(), failed.get());
            return new Scale(
                    roles,
                    acquireAll,
                    acquire,
                    new ArrayList<>(renew),
                    heapBefore,
                    heapHeld,
                    threadsBefore,
                    threadsHeld,
                    producers,
                    renewals.get(),
                    missed.get(),
                    failed.get(),
                    worstLate.get(),
                    renewSeconds);
        }
    }

    /**
     * Fills the role's partition of a fresh coordination topic with {@code records} registrations of other roles, then
     * times a new client's first pass (catch-up) {@code catchUps} times and {@code passes} incremental passes of one
     * client that has folded the partition, while a holder keeps renewing the role.
     */
    Fold fold(int records, int catchUps, int passes) throws Exception {
        String topicName = "bench_fold_" + records + "_" + IDS.incrementAndGet();
        TopicSpec spec =
                TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3).withName(topicName);
        Role role = Role.of("fold-" + records + "-" + IDS.incrementAndGet());
        List<Long> catchUp = new ArrayList<>();
        List<Long> pass = new ArrayList<>();
        long fillNanos;
        AtomicBoolean stop = new AtomicBoolean();
        try (KafkaCoordinationTransport holderTransport = cluster.transport(spec);
                CoordinationClient holder =
                        new CoordinationClient(holderTransport, OursBench.LEASE, InstantSource.system());
                KafkaCoordinationTransport transport = cluster.transport(spec)) {
            Leadership lease = holder.acquire(role, MemberId.of("holder"), WAIT);
            Thread renewer = new Thread(
                    () -> {
                        while (!stop.get()) {
                            if (lease.renewDue()) {
                                try {
                                    lease.renew();
                                } catch (RuntimeException e) {
                                    return;
                                }
                            }
                            Timing.sleep(10);
                        }
                    },
                    "bench-fold-renewer");
            renewer.setDaemon(true);
            renewer.start();

            int partition = RolePartitioner.partitionFor(role, holderTransport.partitionCount());
            Map<String, Object> settings = new HashMap<>(
                    KafkaCoordinationTransport.registrarSettings(cluster.connection(), Duration.ofSeconds(30)));
            settings.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
            long f0 = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> filler =
                    new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer())) {
                long now = System.currentTimeMillis();
                for (int i = 0; i < records; i++) {
                    Role other = Role.of("other-" + i); // another role, pinned here as if it hashed to this partition
                    MemberId member = MemberId.of("member-" + i);
                    filler.send(new ProducerRecord<>(
                            topicName,
                            partition,
                            CoordinationCodec.encodeKey(CoordinationKey.registration(other, member)),
                            CoordinationCodec.encodeValue(new CoordinationRecord.Registration(member, now))));
                }
                filler.flush();
            }
            fillNanos = System.nanoTime() - f0;
            System.err.printf(
                    "  filled partition %d of %s with %d records in %.1f s%n",
                    partition, topicName, records, fillNanos / 1e9);

            CoordinationClient last = null;
            List<CoordinationClient> clients = new ArrayList<>();
            for (int i = 0; i < catchUps; i++) {
                CoordinationClient c = new CoordinationClient(transport, OursBench.LEASE, InstantSource.system());
                clients.add(c);
                long t0 = System.nanoTime();
                Optional<Leadership> won = c.tryAcquire(role, MemberId.of("challenger-" + i));
                catchUp.add(System.nanoTime() - t0);
                if (won.isPresent()) {
                    throw new IllegalStateException("a challenger won a role whose holder is renewing");
                }
                last = c;
            }
            for (int i = 0; i < passes; i++) {
                Timing.sleep(20);
                long t0 = System.nanoTime();
                Optional<Leadership> won = last.tryAcquire(role, MemberId.of("challenger-" + (catchUps - 1)));
                pass.add(System.nanoTime() - t0);
                if (won.isPresent()) {
                    throw new IllegalStateException("a challenger won a role whose holder is renewing");
                }
            }
            stop.set(true);
            renewer.join(5_000);
            for (CoordinationClient c : clients) {
                c.close();
            }
            lease.close();
        }
        cluster.admin().deleteTopics(List.of(topicName)).all().get(30, TimeUnit.SECONDS);
        System.err.printf("  done: fold %d records (%d catch-ups, %d passes)%n", records, catchUps, passes);
        return new Fold(records, catchUp, pass, fillNanos);
    }

    static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Timing.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static int producerThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("kafka-producer-network-thread"))
                .count();
    }
}
