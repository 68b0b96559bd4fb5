package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCluster.LostCommit;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One member's in-memory transport with what a simulation injects into it: describes
 * that fail for a while, transactions that fail before anything was sent (transiently,
 * retried; or as a timeout, reported), and a commit that lost its answer
 * ({@link InMemoryCluster#loseNextCommit}) reported as the Kafka transport may report it:
 * with where its sends were appended, and with a challenger's InitProducerId landing
 * before the holder looks at the coordinator. And, for the control tests only, lies about
 * a transaction's outcome. Every call runs at once: nothing here sleeps.
 */
final class FlakyTransport {

    /** What a control test makes the producer report falsely. */
    enum Lie {
        NONE,
        /** A transaction with records that committed is reported as fenced. */
        COMMITTED_AS_FENCED,
        /** A transaction that was fenced is reported as committed (a renewal too, so the holder goes on writing). */
        FENCED_AS_RETURNED
    }

    private final InMemoryCluster cluster;
    private final CoordinationRuntime runtime;
    private final InMemoryCoordinationTransport memory;
    private final InMemoryCoordinationTransport challenger;
    private final SplittableRandom random;
    private final Consumer<Role> lostCommit;
    private final String name;
    private final CoordinationTransport transport;
    /** Per role, when a transaction of it last committed. */
    final Map<Role, Long> lastCommit = new ConcurrentHashMap<>();
    /** Until when (the runtime's nanos) describes fail. */
    volatile long describesFailUntil;
    /** How many of the next transactions fail before anything was sent. */
    volatile int transactionsToFail;
    /** Whether those fail transiently (a write retries them) rather than as a timeout. */
    volatile boolean failuresRetriable;

    volatile Lie lie = Lie.NONE;
    /** How many writes (transactions with records) were lied about. */
    volatile int lies;

    /**
     * @param random decides, per lost commit, whether its sends were acknowledged and whether a
     *     challenger's InitProducerId follows it; called on the runtime's threads only
     * @param lostCommit told the role of each commit that lost its answer
     */
    FlakyTransport(
            String name,
            InMemoryCluster cluster,
            CoordinationRuntime runtime,
            InMemoryCoordinationTransport memory,
            InMemoryCoordinationTransport challenger,
            SplittableRandom random,
            Consumer<Role> lostCommit) {
        this.name = name;
        this.cluster = cluster;
        this.runtime = runtime;
        this.memory = memory;
        this.challenger = challenger;
        this.random = random;
        this.lostCommit = lostCommit;
        this.transport = proxy(CoordinationTransport.class, (method, args) -> {
            if (method.getName().equals("describeEpoch") && runtime.nanoTime() < describesFailUntil) {
                throw new CoordinationTimeoutException("injected: a describe of " + name + " got no answer");
            }
            Object result = call(memory, method, args);
            return method.getName().equals("initEpoch") ? flaky((RoleEpoch) result) : result;
        });
    }

    CoordinationTransport transport() {
        return transport;
    }

    InMemoryCoordinationTransport memory() {
        return memory;
    }

    private RoleEpoch flaky(RoleEpoch epoch) {
        return proxy(RoleEpoch.class, (method, args) -> {
            if (!method.getName().equals("transact") || args.length < 2) {
                return call(epoch, method, args);
            }
            if (transactionsToFail > 0) {
                transactionsToFail--;
                // Before anything was sent: nothing of it is written.
                throw failuresRetriable
                        ? new RetriableCoordinationException("injected: a transaction of " + name + " failed", null)
                        : new CoordinationTimeoutException("injected: a transaction of " + name + " timed out");
            }
            @SuppressWarnings("unchecked")
            List<ProducerRecord<byte[], byte[]>> batch = (List<ProducerRecord<byte[], byte[]>>) args[0];
            Object written;
            try {
                written = call(epoch, method, args);
            } catch (CommitOutcomeUnknownException lost) {
                lostCommit.accept(epoch.role());
                CommitOutcomeUnknownException answer = random.nextBoolean() ? acknowledged(lost, batch) : lost;
                if (random.nextInt(3) == 0) {
                    // A challenger's InitProducerId lands before the holder looks at the coordinator.
                    challenger.initEpoch(epoch.role());
                }
                throw answer;
            } catch (FencedException fenced) {
                if (lie == Lie.FENCED_AS_RETURNED) {
                    lies += batch.size() > 1 ? 1 : 0;
                    return batch.stream()
                            .map(r -> new RecordMetadata(new TopicPartition(r.topic(), 0), -1, 0, 0, -1, -1))
                            .toList();
                }
                throw fenced;
            }
            lastCommit.put(epoch.role(), runtime.nanoTime());
            if (lie == Lie.COMMITTED_AS_FENCED && batch.size() > 1) {
                lies++;
                throw new FencedException("control: a committed transaction reported as fenced");
            }
            return written;
        });
    }

    /**
     * {@code lost} with where its records were appended, as the Kafka transport reports a
     * lost commit whose sends were all acknowledged: for an applied commit, where they are;
     * for an aborted one, past the log's end (the in-memory cluster appends nothing for it,
     * and no other record can carry its lease's bytes). Unchanged for a pending one (Kafka's
     * open transaction would hold readers back before it) and a release's tombstone (anyone's).
     */
    private CommitOutcomeUnknownException acknowledged(
            CommitOutcomeUnknownException lost, List<ProducerRecord<byte[], byte[]>> batch) {
        boolean applied = lost.getMessage().contains("(" + LostCommit.APPLIED + ")");
        boolean aborted = lost.getMessage().contains("(" + LostCommit.ABORTED + ")");
        if (!(applied || aborted) || batch.get(0).value() == null) {
            return lost;
        }
        List<RecordMetadata> appended = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : batch) {
            // The lease names its partition; a command goes where its key hashes, so look in each.
            List<Integer> candidates = record.partition() != null
                    ? List.of(record.partition())
                    : IntStream.range(0, cluster.partitionsFor(record.topic()).size())
                            .boxed()
                            .toList();
            RecordMetadata at = null;
            for (int p : candidates) {
                if (at != null) {
                    break;
                }
                TopicPartition partition = new TopicPartition(record.topic(), p);
                List<RawRecord> log = cluster.records(partition);
                if (aborted) {
                    at = new RecordMetadata(
                            partition,
                            log.isEmpty() ? 0 : log.get(log.size() - 1).offset() + 1,
                            0,
                            -1,
                            -1,
                            -1);
                    continue;
                }
                for (RawRecord raw : log) {
                    if (Arrays.equals(raw.key(), record.key()) && Arrays.equals(raw.value(), record.value())) {
                        at = new RecordMetadata(partition, raw.offset(), 0, raw.timestamp(), -1, -1);
                    }
                }
            }
            if (at == null) {
                throw new IllegalStateException("an applied commit's record is not in the log: " + record);
            }
            appended.add(at);
        }
        return new CommitOutcomeUnknownException(
                lost.getMessage() + " (every send acknowledged)", lost.getCause(), appended);
    }
}
