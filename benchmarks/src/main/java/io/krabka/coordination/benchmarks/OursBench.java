package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.fencing.TokenHeaders;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** This library on one in-process KRaft broker (the core's KafkaTestCluster). */
final class OursBench implements AutoCloseable {

    static final String SYSTEM = "krabka (Kafka)";

    /** Lease 2 s, renew every 0.6 s, stagger 0.5 s per rank. */
    static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(600), Duration.ofMillis(500));

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger ROLES = new AtomicInteger();

    private final KafkaTestCluster cluster;
    private final Map<String, List<Long>> handoverSteps = new java.util.concurrent.ConcurrentHashMap<>();
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
        try (KafkaCoordinationTransport ta = cluster.transport();
                KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient a = client(ta);
                CoordinationClient b = client(tb)) {
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
        try (KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient b = client(tb)) {
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
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = client(transport)) {
            Role role = newRole("describe");
            Leadership held = client.acquire(role, MemberId.of("a"), WAIT);
            for (int i = 0; i < runs + 20; i++) {
                long t0 = System.nanoTime();
                client.describe(role);
                long t1 = System.nanoTime();
                cluster.admin()
                        .describeTransactions(List.of(role.name()))
                        .description(role.name())
                        .get(10, TimeUnit.SECONDS);
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
            try (KafkaCoordinationTransport transport = cluster.transport();
                    CoordinationClient client = client(transport)) {
                Leadership held = client.acquire(role, MemberId.of("cold"), WAIT);
                long elapsed = System.nanoTime() - start;
                held.close();
                return elapsed;
            }
        });
    }

    /** A contender whose listener completes the current future with the grant's (nanoTime, wall clock). */
    private static Contender contender(
            CoordinationClient client, Role role, String member, AtomicReference<CompletableFuture<long[]>> grantedAt) {
        return new Contender(client, role, MemberId.of(member), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                long nanos = System.nanoTime();
                Instant wall = Instant.now();
                grantedAt.get().complete(new long[] {nanos, wall.getEpochSecond() * 1_000_000_000L + wall.getNano()});
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
    }

    /**
     * Graceful handover the way users run it: two {@link Contender}s (two members, each its own transport and client),
     * holder {@code release()} -> the standby contender's {@code Listener.granted}. One role per sample.
     */
    List<Long> handoverContender(int warmups, int runs) throws Exception {
        HandoverTimeline timeline = new HandoverTimeline();
        handoverSteps.clear();
        AtomicInteger sample = new AtomicInteger();
        try (KafkaCoordinationTransport ta = cluster.transport();
                KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient a = new CoordinationClient(timeline.wrap(ta, "a"), LEASE, InstantSource.system());
                CoordinationClient b = new CoordinationClient(timeline.wrap(tb, "b"), LEASE, InstantSource.system())) {
            return Timing.measure("krabka handover (Contender)", warmups, runs, () -> {
                Role role = newRole("handover-c");
                AtomicReference<CompletableFuture<long[]>> grantedAt = new AtomicReference<>(new CompletableFuture<>());
                try (Contender first = contender(a, role, "a", grantedAt);
                        Contender second = contender(b, role, "b", grantedAt)) {
                    first.start();
                    grantedAt.get().get(30, TimeUnit.SECONDS);
                    grantedAt.set(new CompletableFuture<>());
                    second.start();
                    Thread.sleep(
                            300); // the standby registers and settles into its wait, as in the other systems' samples
                    boolean firstHolds = first.leadership().isPresent();
                    Contender holder = firstHolds ? first : second;
                    timeline.start();
                    long start = System.nanoTime();
                    holder.release();
                    long granted = grantedAt.get().get(30, TimeUnit.SECONDS)[0];
                    List<HandoverTimeline.Call> calls = timeline.stop();
                    if (sample.getAndIncrement() >= warmups) {
                        HandoverTimeline.steps(calls, firstHolds ? "a" : "b", firstHolds ? "b" : "a", start, granted)
                                .forEach((step, took) -> handoverSteps
                                        .computeIfAbsent(step, k -> new ArrayList<>())
                                        .add(took));
                    }
                    return granted - start;
                }
            });
        }
    }

    /**
     * The steps of the last {@link #handoverContender} run's recorded handovers ({@link HandoverTimeline#STEPS}, in
     * that order), in nanoseconds; a step has fewer samples than handovers when some went without it.
     */
    Map<String, List<Long>> handoverSteps() {
        Map<String, List<Long>> ordered = new java.util.LinkedHashMap<>();
        for (String step : HandoverTimeline.STEPS) {
            if (handoverSteps.containsKey(step)) {
                ordered.put(step, List.copyOf(handoverSteps.get(step)));
            }
        }
        return ordered;
    }

    /**
     * Crash with a {@link Contender} standby: the holder (acquire, no renewal) has its transport closed with no
     * release; the standby contender's grant is timed. Returns [overshoot past the holder's deadline, kill -> grant].
     */
    List<long[]> crashContender(int warmups, int runs) throws Exception {
        List<long[]> out = new ArrayList<>();
        try (KafkaCoordinationTransport tb = cluster.transport();
                CoordinationClient b = client(tb)) {
            Timing.measure("krabka crash failover (Contender standby)", warmups, runs, () -> {
                Role role = newRole("failover-c");
                KafkaCoordinationTransport ta = cluster.transport();
                CoordinationClient a = client(ta);
                Leadership held = a.acquire(role, MemberId.of("a"), WAIT);
                AtomicReference<CompletableFuture<long[]>> grantedAt = new AtomicReference<>(new CompletableFuture<>());
                try (Contender standby = contender(b, role, "b", grantedAt)) {
                    standby.start(); // registers: rank 0 among the standbys
                    Thread.sleep(300);
                    Instant deadline = held.deadline();
                    long killed = System.nanoTime();
                    ta.close(); // a dies: no release, no tombstone
                    long[] granted = grantedAt.get().get(30, TimeUnit.SECONDS);
                    long deadlineNanos = deadline.getEpochSecond() * 1_000_000_000L + deadline.getNano();
                    long overshoot = granted[1] - deadlineNanos; // both on the wall clock, as the lease is
                    out.add(new long[] {overshoot, granted[0] - killed});
                    return overshoot;
                }
            });
        }
        return out.subList(warmups, out.size());
    }

    /** What a run of asynchronous guarded sends saw. */
    record SendRun(
            String label,
            double offeredPerSecond,
            double committedPerSecond,
            List<Long> latencies,
            long sent,
            long failed,
            int threads) {}

    /**
     * Asynchronous guarded sends ({@link Leadership#send}, group commit with the client's default {@code SendBatching})
     * offered at a fixed rate by {@code threads} threads for {@code seconds} (after one second of warm-up that is not
     * recorded). Latency per send: the scheduled send time -> the future completed (the transaction committed), so a
     * send that fell behind its schedule counts its delay. {@code rate} 0: closed loop, as fast as it goes with at most
     * {@code window} sends outstanding.
     */
    SendRun send(double rate, int threads, int seconds, int window) throws Exception {
        String topic = "bench-send-" + ROLES.incrementAndGet();
        cluster.createTopic(topic, 1);
        byte[] key = "controller".getBytes();
        byte[] value = new byte[200];
        List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong failed = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicLong measuredSent = new AtomicLong();
        AtomicLong done = new AtomicLong();
        AtomicLong committed = new AtomicLong();
        AtomicLong lastCommit = new AtomicLong();
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = client(transport)) {
            Leadership held = client.acquire(newRole("sender"), MemberId.of("s"), WAIT);
            long begin = System.nanoTime() + 50_000_000L;
            long measureFrom = begin + 1_000_000_000L;
            long end = measureFrom + seconds * 1_000_000_000L;
            Semaphore outstanding = new Semaphore(window);
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread sender = new Thread(
                        () -> {
                            long k = 0;
                            while (true) {
                                long scheduled;
                                if (rate > 0) {
                                    scheduled = begin + (long) ((k * threads + me) * (1e9 / rate));
                                    if (scheduled >= end) {
                                        return;
                                    }
                                    long wait = scheduled - System.nanoTime();
                                    if (wait > 0) {
                                        LockSupport.parkNanos(wait);
                                    }
                                } else {
                                    if (System.nanoTime() >= end) {
                                        return;
                                    }
                                    outstanding.acquireUninterruptibly();
                                    scheduled = System.nanoTime();
                                }
                                k++;
                                long at = scheduled;
                                CompletableFuture<RecordMetadata> f =
                                        held.send(new ProducerRecord<>(topic, key, value));
                                sent.incrementAndGet();
                                if (at >= measureFrom) {
                                    measuredSent.incrementAndGet();
                                }
                                f.whenComplete((m, e) -> {
                                    long now = System.nanoTime();
                                    if (at >= measureFrom) {
                                        done.incrementAndGet();
                                    }
                                    if (rate <= 0) {
                                        outstanding.release();
                                    }
                                    if (e != null) {
                                        failed.incrementAndGet();
                                    } else if (at >= measureFrom) {
                                        latencies.add(now - at);
                                        committed.incrementAndGet();
                                        lastCommit.accumulateAndGet(now, Math::max);
                                    }
                                });
                            }
                        },
                        "bench-sender-" + t);
                sender.setDaemon(true);
                senders.add(sender);
                sender.start();
            }
            for (Thread sender : senders) {
                sender.join();
            }
            long waitUntil = System.nanoTime() + 30_000_000_000L;
            while (done.get() < measuredSent.get() && System.nanoTime() < waitUntil) {
                Thread.sleep(5);
            }
            Thread.sleep(100);
            double span = (Math.max(end, lastCommit.get()) - measureFrom) / 1e9;
            held.close();
            System.err.printf(
                    "  done: guarded send %s (%d sent, %d committed in the window, %d failed)%n",
                    rate > 0 ? String.format(Locale.ROOT, "at %.0f/s", rate) : "closed loop",
                    sent.get(),
                    committed.get(),
                    failed.get());
            return new SendRun(
                    rate > 0 ? "fixed rate" : "closed loop",
                    rate,
                    committed.get() / span,
                    new ArrayList<>(latencies),
                    sent.get(),
                    failed.get(),
                    threads);
        }
    }

    /**
     * Guarded vs plain at equal batching, with the guarded write's floors beside them: per round, records per second
     * and the per-transaction latencies of each side. {@code plusOne} is a plain transaction of the same records plus
     * one small record on another partition: what a guarded transaction is (its lease record), without the library.
     * {@code stamped} is that with the four token headers a guarded write puts on every record ({@code TokenHeaders}):
     * every byte a guarded transaction writes, without the library.
     */
    record Batched(
            int recordsPerTx,
            List<Double> guardedPerSecond,
            List<Double> plainPerSecond,
            List<Double> plusOnePerSecond,
            List<Double> stampedPerSecond,
            List<Long> guardedTx,
            List<Long> plainTx,
            List<Long> plusOneTx,
            List<Long> stampedTx,
            List<Long> guardedRoundP50,
            List<Long> plainRoundP50,
            List<Long> plusOneRoundP50,
            List<Long> stampedRoundP50) {
        List<Double> ratios() {
            List<Double> r = new ArrayList<>();
            for (int i = 0; i < guardedPerSecond.size(); i++) {
                r.add(guardedPerSecond.get(i) / plainPerSecond.get(i));
            }
            return r;
        }
    }

    private enum Side {
        PLAIN,
        PLUS_ONE,
        STAMPED,
        GUARDED
    }

    /**
     * The same {@code recordsPerTx} records per transaction on three sides: a guarded {@code write(List)} (plus the
     * lease record the library adds), a plain transactional KafkaProducer (begin, the records, commit), and the same
     * plain transaction with one more record of a lease's size on a partition of another topic, and that with every
     * record stamped as a guarded write stamps it. Each round writes
     * {@code txPerRound} transactions per side; the side that goes first rotates from round to round.
     */
    Batched batched(int rounds, int txPerRound, int recordsPerTx) throws Exception {
        String topic = "bench-batched-" + ROLES.incrementAndGet();
        String extraTopic = topic + "-extra";
        cluster.createTopic(topic, 1);
        cluster.createTopic(extraTopic, 1);
        byte[] key = "controller".getBytes();
        byte[] value = new byte[200];
        List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>();
        for (int i = 0; i < recordsPerTx; i++) {
            batch.add(new ProducerRecord<>(topic, key, value));
        }
        // About a lease record's size: its key names the role, its value the member, producer id, epoch and times.
        ProducerRecord<byte[], byte[]> extra = new ProducerRecord<>(extraTopic, 0, new byte[16], new byte[48]);
        // A token of the size a member's has: a term, a producer id and an epoch of a few digits each.
        FencingToken token = new FencingToken(12_345, 1_234, (short) 12);
        List<ProducerRecord<byte[], byte[]>> stamped = batch.stream()
                .map(r -> TokenHeaders.stamp(r, Role.of("controller"), token))
                .toList();
        Map<Side, List<Double>> rates = new EnumMap<>(Side.class);
        Map<Side, List<Long>> latencies = new EnumMap<>(Side.class);
        Map<Side, List<Long>> roundP50 = new EnumMap<>(Side.class);
        for (Side side : Side.values()) {
            rates.put(side, new ArrayList<>());
            latencies.put(side, new ArrayList<>());
            roundP50.put(side, new ArrayList<>());
        }
        Map<String, Object> settings = new HashMap<>(cluster.connection());
        settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-plain-" + ROLES.incrementAndGet());
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = client(transport);
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            Leadership held = client.acquire(newRole("batched"), MemberId.of("w"), WAIT);
            Side[] sides = Side.values();
            for (int round = -1; round < rounds; round++) { // round -1: warm-up of every side
                for (int turn = 0; turn < sides.length; turn++) {
                    Side side = sides[Math.floorMod(round + turn, sides.length)];
                    List<Long> tx = new ArrayList<>();
                    long r0 = System.nanoTime();
                    for (int i = 0; i < txPerRound; i++) {
                        long t0 = System.nanoTime();
                        if (side == Side.GUARDED) {
                            held.write(batch);
                        } else {
                            producer.beginTransaction();
                            for (ProducerRecord<byte[], byte[]> r : side == Side.STAMPED ? stamped : batch) {
                                producer.send(r);
                            }
                            if (side != Side.PLAIN) {
                                producer.send(extra);
                            }
                            producer.commitTransaction();
                        }
                        tx.add(System.nanoTime() - t0);
                    }
                    double perSecond = (double) txPerRound * recordsPerTx / ((System.nanoTime() - r0) / 1e9);
                    if (round >= 0) {
                        rates.get(side).add(perSecond);
                        latencies.get(side).addAll(tx);
                        roundP50.get(side).add(new Samples("", "", tx).percentile(50));
                    }
                }
                if (held.renewDue()) {
                    held.renew();
                }
            }
            held.close();
        }
        System.err.printf(
                "  done: %d records per transaction, guarded vs plain vs plain with one more partition, unstamped and stamped"
                        + " (%d rounds x %d transactions)%n",
                recordsPerTx, rounds, txPerRound);
        return new Batched(
                recordsPerTx,
                rates.get(Side.GUARDED),
                rates.get(Side.PLAIN),
                rates.get(Side.PLUS_ONE),
                rates.get(Side.STAMPED),
                latencies.get(Side.GUARDED),
                latencies.get(Side.PLAIN),
                latencies.get(Side.PLUS_ONE),
                latencies.get(Side.STAMPED),
                roundP50.get(Side.GUARDED),
                roundP50.get(Side.PLAIN),
                roundP50.get(Side.PLUS_ONE),
                roundP50.get(Side.STAMPED));
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
        try (KafkaCoordinationTransport transport = cluster.transport();
                CoordinationClient client = client(transport);
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer())) {
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
            try (KafkaProducer<byte[], byte[]> p = producer(
                    "bench-init-" + ROLES.incrementAndGet(), Map.of(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10))) {
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
