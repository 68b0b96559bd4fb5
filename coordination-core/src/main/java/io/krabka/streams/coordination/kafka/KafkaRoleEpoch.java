package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InterruptException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A role's transactional producer after InitProducerId. Transactions run one at a time. */
final class KafkaRoleEpoch implements RoleEpoch {

    private static final Logger log = LoggerFactory.getLogger(KafkaRoleEpoch.class);

    private final Role role;
    private final Producer<byte[], byte[]> producer;
    private final Duration timeout;
    private volatile boolean closed;
    private volatile boolean broken;
    // Whether the running transaction's thread was interrupted; guarded by the lock.
    private boolean interrupted;

    KafkaRoleEpoch(Role role, Producer<byte[], byte[]> producer, Duration timeout) {
        this.role = role;
        this.producer = producer;
        this.timeout = timeout;
    }

    @Override
    public Role role() {
        return role;
    }

    /**
     * Runs the transaction to its end even when the calling thread is interrupted on the
     * way (a contender stopping the role's work): Kafka cannot abort a commit that an
     * interrupt cut short, so the producer would be lost, the leadership would end FAILED
     * and no tombstone could follow. The interrupt is kept for the caller.
     */
    @Override
    public synchronized List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
        if (closed) {
            throw new CoordinationException("the epoch of role " + role + " is closed");
        }
        String operation = "a transaction of role " + role;
        interrupted = Thread.interrupted();
        try {
            producer.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
            for (ProducerRecord<byte[], byte[]> record : records) {
                // An interrupted send never reached the accumulator: sending again is safe.
                sent.add(uninterruptibly(() -> producer.send(record)));
            }
            if (!consumed.isEmpty()) {
                uninterruptibly(() -> {
                    producer.sendOffsetsToTransaction(consumed.offsets(), consumed.group());
                    return null;
                });
            }
            // commitTransaction flushes and fails if any send failed; after an interrupt it may be retried.
            uninterruptibly(() -> {
                producer.commitTransaction();
                return null;
            });
            List<RecordMetadata> written = new ArrayList<>(sent.size());
            for (Future<RecordMetadata> future : sent) {
                written.add(completed(future));
            }
            return written;
        } catch (Exception e) {
            CoordinationException failure = KafkaErrors.translate(operation, e);
            if (!(failure instanceof FencedException)) {
                failure = abort(operation, failure);
            }
            throw failure;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private <T> T uninterruptibly(Supplier<T> call) {
        while (true) {
            try {
                return call.get();
            } catch (InterruptException e) {
                // Kafka's InterruptException sets the flag again; clear it and remember.
                Thread.interrupted();
                interrupted = true;
            }
        }
    }

    /** The metadata of a send whose transaction committed, so the future is already complete. */
    private RecordMetadata completed(Future<RecordMetadata> future) throws ExecutionException, TimeoutException {
        while (true) {
            try {
                return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
    }

    /** Aborts after a non-fenced failure; a fence found while aborting wins. */
    private CoordinationException abort(String operation, CoordinationException failure) {
        try {
            uninterruptibly(() -> {
                producer.abortTransaction();
                return null;
            });
            return failure;
        } catch (Exception abortError) {
            CoordinationException translated = KafkaErrors.translate("aborting " + operation, abortError);
            if (translated instanceof FencedException) {
                return translated;
            }
            // A producer that cannot abort is in a fatal state: no later transaction can run.
            broken = true;
            failure.addSuppressed(abortError);
            return failure;
        }
    }

    @Override
    public boolean usable() {
        return !closed && !broken;
    }

    @Override
    public long featureGeneration() {
        // A producer re-reads the finalized features (and so its transaction version)
        // only from the ApiVersions response of a new connection.
        double connections = 0;
        for (var entry : producer.metrics().entrySet()) {
            if (entry.getKey().name().equals("connection-creation-total")
                    && entry.getKey().group().equals("producer-metrics")
                    && entry.getValue().metricValue() instanceof Double value) {
                connections += value;
            }
        }
        return (long) connections;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            // Every transaction has committed or failed by now, so nothing is pending; a
            // fenced producer could otherwise keep close() waiting for the whole timeout.
            producer.close(Duration.ZERO);
        } catch (RuntimeException e) {
            log.warn("Closing the producer of role {} failed", role, e);
        }
    }
}
