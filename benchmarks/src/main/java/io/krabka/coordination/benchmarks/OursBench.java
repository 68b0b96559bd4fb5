package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** This library on one in-process KRaft broker (the core's KafkaTestCluster). */
final class OursBench implements AutoCloseable {

    static final String SYSTEM = "krabka (Kafka)";

    /** Lease 2 s, renew every 0.6 s, stagger 0.5 s per rank. */
    static final LeaseConfig LEASE = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(600), Duration.ofMillis(500));

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger ROLES = new AtomicInteger();

    private final KafkaTestCluster cluster;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-ours");
        t.setDaemon(true);
        return t;
    });

    OursBench() {
        this.cluster = KafkaTestCluster.start();
    }

    KafkaTestCluster cluster() {
        return cluster;
    }

    private static Role newRole(String prefix) {
        return Role.of(prefix + "-" + ROLES.incrementAndGet());
    }

    private CoordinationClient client(KafkaCoordinationTransport transport) {
        return new CoordinationClient(transport, LEASE, InstantSource.system());
    }

    /** Holder close() -> standby (registered, waiting in acquire) granted. Two members, one role per sample. */
    List<Long> handover(int warmups, int runs) throws Exception {
        try (KafkaCoordinationTransport ta = cluster.transport(); KafkaCoordinationTransport tb = cluster.transport();
             CoordinationClient a = client(ta); CoordinationClient b = client(tb)) {
            return Timing.measure("krabka handover", warmups, runs, () -> {
                Role role = newRole("handover");
                Leadership held = a.acquire(role, MemberId.of("a"), WAIT);
                b.tryAcquire(role, MemberId.of("b"));
                CompletableFuture<Long> granted = new CompletableFuture<>();
                executor.execute(() -> {
                    try {
                        Leadership next = b.acquire(role, MemberId.of("b"), WAIT);
                        granted.complete(System.nanoTime());
                        next.close();
                    } catch (Throwable e) {
                        granted.completeExceptionally(e);
                    }
                });
                Thread.sleep(300); // let b settle into its wait before the release
                long start = System.nanoTime();
                held.close();
                long elapsed = granted.get(30, TimeUnit.SECONDS) - start;
                Thread.sleep(50); // let b's close finish off the timed path
                return elapsed;
            });
        }
    }

    /** Crash: the holder's transport closes with no release; returns [overshoot past its deadline, kill -> grant]. */
    List<long[]> crash(int warmups, int runs) throws Exception {
        List<long[]> out = new ArrayList<>();
        try (KafkaCoordinationTransport tb = cluster.transport(); CoordinationClient b = client(tb)) {
            Timing.measure("krabka crash failover", warmups, runs, () -> {
                Role role = newRole("failover");
                KafkaCoordinationTransport ta = cluster.transport();
                CoordinationClient a = client(ta);
                Leadership held = a.acquire(role, MemberId.of("a"), WAIT);
                b.tryAcquire(role, MemberId.of("b")); // b registers: rank 0 among the standbys
                Instant deadline = held.deadline();
                long killed = System.nanoTime();
                ta.close(); // a dies: no release, no tombstone
                Leadership next = b.acquire(role, MemberId.of("b"), WAIT);
                long grantedNanos = System.nanoTime();
                Instant granted = Instant.now();
                next.close();
                long overshoot = Duration.between(deadline, granted).toNanos();
                out.add(new long[] {overshoot, grantedNanos - killed});
                return overshoot;
            });
        }
        return out.subList(warmups, out.size());
    }

    /** describe(role) next to one raw Admin.describeTransactions, interleaved; returns [describe, raw]. */
    List<List<Long>> describe(int runs) throws Exception {
        List<Long> ours = new ArrayList<>();
        List<Long> raw = new ArrayList<>();
        try (KafkaCoordinationTransport transport = cluster.transport(); CoordinationClient client = client(transport)) {
            Role role = newRole("describe");
            Leadership held = client.acquire(role, MemberId.of("a"), WAIT);
            for (int i = 0; i < runs + 20; i++) {
                long t0 = System.nanoTime();
                client.describe(role);
                long t1 = System.nanoTime();
                cluster.admin().describeTransactions(List.of(role.name())).description(role.name()).get(10, TimeUnit.SECONDS);
                long t2 = System.nanoTime();
                if (i >= 20) {
                    ours.add(t1 - t0);
                    raw.add(t2 - t1);
                }
                if (held.renewDue()) {
                    held.renew();
                }
            }
            held.close();
        }
        System.err.printf("  done: krabka describe (%d samples)%n", runs);
        return List.of(ours, raw);
    }

    /** One new member (new transport and client) on an empty role: create -> granted. */
    List<Long> coldStart(int warmups, int runs) throws Exception {
        return Timing.measure("krabka cold start", warmups, runs, () -> {
            Role role = newRole("cold");
            long start = System.nanoTime();
            try (KafkaCoordinationTransport transport = cluster.transport(); CoordinationClient client = client(transport)) {
                Leadership held = client.acquire(role, MemberId.of("cold"), WAIT);
                long elapsed = System.nanoTime() - start;
                held.close();
                return elapsed;
            }
        });
    }

    /**
     * Guarded writes (one record per transaction, plus the lease record the library adds) against a plain
     * transactional KafkaProducer committing the same one-record transactions, alternating one of each.
     * Returns per-transaction latencies [guarded, plain] and total nanos [guarded, plain].
     */
    Throughput throughput(int rounds, int perRound) throws Exception {
        String topic = "bench-commands";
        cluster.createTopic(topic, 1);
        byte[] key = "controller".getBytes();
        byte[] value = new byte[200];
        List<Long> guarded = new ArrayList<>();
        List<Long> plain = new ArrayList<>();
        long guardedTotal = 0;
        long plainTotal = 0;
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-plain-" + ROLES.incrementAndGet());
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaCoordinationTransport transport = cluster.transport(); CoordinationClient client = client(transport);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            Leadership held = client.acquire(newRole("writer"), MemberId.of("w"), WAIT);
            // One plain transaction, then one guarded write, alternately, so that drift hits both alike.
            for (int i = -50; i < rounds * perRound; i++) { // the first 50 pairs are the warm-up
                long t0 = System.nanoTime();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, key, value));
                producer.commitTransaction();
                long t1 = System.nanoTime();
                held.write(new ProducerRecord<>(topic, key, value));
                long t2 = System.nanoTime();
                if (i >= 0) {
                    plain.add(t1 - t0);
                    guarded.add(t2 - t1);
                    plainTotal += t1 - t0;
                    guardedTotal += t2 - t1;
                }
            }
            held.close();
        }
        System.err.printf("  done: throughput (%d x %d transactions each)%n", rounds, perRound);
        return new Throughput(guarded, plain, guardedTotal, plainTotal);
    }

    /**
     * The experiment behind the handover's cost: InitProducerId on a brand-new transactional producer (connect,
     * metadata, FindCoordinator, InitProducerId: what a standby pays at its grant) against the same call on a
     * producer created and connected beforehand (metadata fetched), and on a new producer with
     * retry.backoff.ms 10 instead of 100. Returns [fresh, pre-connected, short backoff].
     */
    List<List<Long>> initTransactions(int runs) throws Exception {
        List<Long> fresh = new ArrayList<>();
        List<Long> warm = new ArrayList<>();
        List<Long> shortBackoff = new ArrayList<>();
        cluster.createTopic("bench-warm", 1);
        for (int i = 0; i < runs + 2; i++) {
            long t0 = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> p = producer("bench-init-" + ROLES.incrementAndGet())) {
                p.initTransactions();
                long t1 = System.nanoTime();
                if (i >= 2) {
                    fresh.add(t1 - t0);
                }
            }
            try (KafkaProducer<byte[], byte[]> p = producer("bench-init-" + ROLES.incrementAndGet())) {
                p.partitionsFor("bench-warm"); // connects and fetches metadata, takes no epoch
                long t2 = System.nanoTime();
                p.initTransactions();
                if (i >= 2) {
                    warm.add(System.nanoTime() - t2);
                }
            }
            long t3 = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> p = producer("bench-init-" + ROLES.incrementAndGet(),
                    Map.of(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10))) {
                p.initTransactions();
                if (i >= 2) {
                    shortBackoff.add(System.nanoTime() - t3);
                }
            }
        }
        System.err.printf("  done: initTransactions experiment (%d samples)%n", runs);
        return List.of(fresh, warm, shortBackoff);
    }

    private KafkaProducer<byte[], byte[]> producer(String transactionalId) {
        return producer(transactionalId, Map.of());
    }

    private KafkaProducer<byte[], byte[]> producer(String transactionalId, Map<String, Object> extra) {
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.putAll(extra);
        settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
    }

    record Throughput(List<Long> guarded, List<Long> plain, long guardedNanos, long plainNanos) {
        double guardedPerSecond() {
            return guarded.size() / (guardedNanos / 1e9);
        }

        double plainPerSecond() {
            return plain.size() / (plainNanos / 1e9);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        cluster.close();
    }
}
