package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A role's transactional producer after InitProducerId. Transactions run one at a time. */
final class KafkaRoleEpoch implements RoleEpoch {

    private static final Logger log = LoggerFactory.getLogger(KafkaRoleEpoch.class);

    private final Role role;
    private final Producer<byte[], byte[]> producer;
    private final Duration timeout;
    // Lets the transport forget this epoch once it is closed, so the role can be prepared again.
    private final java.util.function.Consumer<KafkaRoleEpoch> onClose;
    private volatile boolean closed;
    // Counted down once close() returned: the producer's sender was force-closed by then.
    private final CountDownLatch closeDone = new CountDownLatch(1);
    private volatile boolean broken;
    // Whether the running transaction's thread was interrupted; guarded by the lock.
    private boolean interrupted;

    KafkaRoleEpoch(
            Role role,
            Producer<byte[], byte[]> producer,
            Duration timeout,
            java.util.function.Consumer<KafkaRoleEpoch> onClose) {
        this.role = role;
        this.producer = producer;
        this.timeout = timeout;
        this.onClose = onClose;
    }

    @Override
    public Role role() {
        return role;
    }

    @Override
    public List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
        return transact(records, consumed, Duration.ZERO);
    }

    /**
     * Runs the transaction to its end even when the calling thread is interrupted on the
     * way (a contender stopping the role's work): Kafka cannot abort a commit that an
     * interrupt cut short, so the producer would be lost, the leadership would end FAILED
     * and no tombstone could follow. The interrupt is kept for the caller.
     */
    @Override
    public synchronized List<RecordMetadata> transact(
            List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, Duration commitRetry) {
        if (closed) {
            throw new CoordinationException("the epoch of role " + role + " is closed");
        }
        String operation = "a transaction of role " + role;
        interrupted = Thread.interrupted();
        List<Future<RecordMetadata>> sent = new ArrayList<>(records.size());
        try {
            producer.beginTransaction();
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
            commit(operation, sent, commitRetry);
            List<RecordMetadata> written = new ArrayList<>(sent.size());
            for (Future<RecordMetadata> future : sent) {
                written.add(completed(future));
            }
            return written;
        } catch (CommitOutcomeUnknownException unknown) {
            // The producer may only retry that commit, and this epoch stopped retrying.
            broken = true;
            throw unknown;
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

    /**
     * Commits, sending the commit again while it times out and {@code commitRetry} lasts
     * (kafka-clients 4.1 refuses to abort a commit that timed out, and a second
     * {@code commitTransaction()} returns the pending result: CommitOutcomeIT). The first
     * attempt fails as Kafka says when a send failed (commitTransaction flushes, and fails
     * then, before it sends EndTxn). Once EndTxn was sent, the outcome is unknown on a fence
     * too: the client resends EndTxn by itself after a disconnect, and a challenger's
     * InitProducerId between a commit that landed and its resend fences the resend. So a
     * fence after every send was acknowledged, and every failure after a timeout, leave the
     * outcome unknown, for the caller to resolve.
     */
    private void commit(String operation, List<Future<RecordMetadata>> sent, Duration commitRetry) {
        long giveUpAt = System.nanoTime() + commitRetry.toNanos();
        TimeoutException timedOut = null;
        for (int attempt = 1; ; attempt++) {
            try {
                uninterruptibly(() -> {
                    producer.commitTransaction();
                    return null;
                });
                if (timedOut != null) {
                    log.info("The commit of {} succeeded on attempt {} after it timed out", operation, attempt);
                }
                return;
            } catch (TimeoutException e) {
                if (timedOut == null) {
                    timedOut = e;
                } else {
                    timedOut.addSuppressed(e);
                }
                if (closed || System.nanoTime() - giveUpAt >= 0) {
                    throw unknown(
                            operation,
                            "got no answer in " + attempt + " attempts until the lease deadline",
                            timedOut,
                            sent);
                }
                log.info(
                        "The commit of {} got no answer in time; sending it again (attempt {})",
                        operation,
                        attempt + 1);
            } catch (RuntimeException e) {
                if (timedOut != null) {
                    e.addSuppressed(timedOut);
                    throw unknown(operation, "timed out, and its retry failed", e, sent);
                }
                if (closed) {
                    if (commitNeverSent(sent)) {
                        throw new CoordinationException(
                                "the commit of " + operation + " was cut short when the epoch closed,"
                                        + " before every record was acknowledged; Kafka's producer sends a commit only once every record"
                                        + " of its transaction was, so nothing of it was written (" + e + ")",
                                e);
                    }
                    // Closed under the commit (the expiry watchdog): the EndTxn may be on its way.
                    throw unknown(operation, "was cut short when the epoch closed", e, sent);
                }
                if (KafkaErrors.translate(operation, e) instanceof FencedException fenced
                        && acknowledged(sent) != null) {
                    // Every send was acknowledged, so the client did send EndTxn, and resends it by
                    // itself after a disconnect: a fence may answer the resend of a commit that landed.
                    throw unknown(operation, "was refused as fenced after every record was acknowledged", fenced, sent);
                }
                throw e;
            }
        }
    }

    /**
     * Whether this closed producer never sent the transaction's commit. Once its close
     * returned, its sender was force-closed: it runs at most the pass it was in (usually
     * the thread is gone; an interrupt of the closing thread can cut the join short), and
     * within a pass it decides on EndTxn before it reads any answer. kafka-clients sends
     * EndTxn only when no batch of the transaction is still in flight
     * ({@code TransactionManager.nextRequest}); a batch that failed puts it in an error
     * state that refuses the commit. So a record not acknowledged by then means the commit
     * was never sent, and the coordinator aborts the transaction. A record acknowledged
     * before the close leaves the outcome open either way.
     */
    private boolean commitNeverSent(List<Future<RecordMetadata>> sent) {
        try {
            if (!closeDone.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            interrupted = true;
            return false;
        }
        return acknowledged(sent) == null;
    }

    private CommitOutcomeUnknownException unknown(
            String operation, String what, Throwable cause, List<Future<RecordMetadata>> sent) {
        return new CommitOutcomeUnknownException(
                "the commit of " + operation + " " + what + ": it may have committed or not (" + cause + ")",
                cause,
                acknowledged(sent));
    }

    /** The metadata of every send, if each partition leader acknowledged it; null otherwise. */
    private @Nullable List<RecordMetadata> acknowledged(List<Future<RecordMetadata>> sent) {
        List<RecordMetadata> metadata = new ArrayList<>(sent.size());
        for (Future<RecordMetadata> future : sent) {
            if (!future.isDone()) {
                return null;
            }
            try {
                metadata.add(future.get());
            } catch (ExecutionException | InterruptedException | RuntimeException notAcknowledged) {
                if (notAcknowledged instanceof InterruptedException) {
                    interrupted = true;
                }
                return null;
            }
        }
        return metadata;
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
    private RecordMetadata completed(Future<RecordMetadata> future)
            throws ExecutionException, java.util.concurrent.TimeoutException {
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
        } finally {
            closeDone.countDown();
            onClose.accept(this);
        }
    }
}
