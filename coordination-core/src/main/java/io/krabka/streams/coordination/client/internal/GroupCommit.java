package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.SendQueueFullException;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * The group commit of {@link Leadership#send}: sends wait in a queue, one flusher at a
 * time writes them a batch per guarded transaction, and a bound on records accepted and
 * not yet written holds senders back while transactions are slow.
 */
final class GroupCommit {

    /** One send, waiting for its transaction. */
    private record QueuedSend(
            ProducerRecord<byte[], byte[]> record, CompletableFuture<RecordMetadata> result, long queuedAtNanos) {}

    private final CoordinationRuntime runtime;
    private final SendBatching batching;
    private final Role role;
    private final LeadershipLifecycle life;
    private final LeaseWriter lease;
    // Sends waiting for a transaction, whether a flush is under way and on which thread,
    // and how many records were accepted and not yet written (the bound of
    // SendBatching.maxQueuedRecords). Guarded by lock, always the innermost lock.
    private final Object lock = new Object();
    private final ArrayDeque<QueuedSend> queued = new ArrayDeque<>();
    private boolean flushing;
    private @Nullable Thread flusher;
    private int unwritten;

    GroupCommit(
            CoordinationRuntime runtime,
            SendBatching batching,
            Role role,
            LeadershipLifecycle life,
            LeaseWriter lease) {
        this.runtime = runtime;
        this.batching = batching;
        this.role = role;
        this.life = life;
        this.lease = lease;
    }

    private SendBatching batching() {
        return batching;
    }

    private long nanoTime() {
        return runtime.nanoTime();
    }

    /** Queues {@code record} for the next batch, waiting for room as {@link Leadership#send} says. */
    CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
        SendBatching batching = batching();
        boolean start;
        synchronized (lock) {
            long blockedSince = 0;
            boolean blocked = false;
            while (true) {
                if (!life.active()) {
                    result.completeExceptionally(life.refusal());
                    return result;
                }
                if (unwritten < batching.maxQueuedRecords()) {
                    break;
                }
                long now = nanoTime();
                if (!blocked) {
                    blocked = true;
                    blockedSince = now;
                }
                // The flusher makes room; when it is the caller (a completion callback), waiting cannot help.
                long left = Thread.currentThread() == flusher ? 0 : nanos(batching.maxBlock()) - (now - blockedSince);
                if (left <= 0) {
                    result.completeExceptionally(queueFull(batching, null));
                    return result;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    result.completeExceptionally(queueFull(batching, e));
                    return result;
                }
            }
            queued.add(new QueuedSend(record, result, nanoTime()));
            unwritten++;
            start = !flushing;
            flushing = true;
            if (queued.size() >= batching.maxRecords()) {
                lock.notifyAll();
            }
        }
        if (start) {
            runtime.workers().execute(this::flushQueued);
        }
        return result;
    }

    private SendQueueFullException queueFull(SendBatching batching, @Nullable InterruptedException interrupted) {
        return new SendQueueFullException(
                (interrupted != null ? "interrupted while waiting: " : "")
                        + batching.maxQueuedRecords() + " records of role " + role + " wait for their transactions"
                        + (interrupted != null
                                ? ""
                                : (Thread.currentThread() == flusher
                                        ? " and a send from a completion callback does not wait for room"
                                        : " and none was written within " + batching.maxBlock()))
                        + "; this record was not written",
                interrupted);
    }

    /** A duration in nanoseconds, saturated: a bound of centuries is no bound. */
    private static long nanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** The leadership ended or began its release: sends blocked for room, and a lingering flush, go on now. */
    void wakeAll() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    /** Writes queued sends, a batch per transaction, until none wait. */
    private void flushQueued() {
        synchronized (lock) {
            flusher = Thread.currentThread();
        }
        while (true) {
            List<QueuedSend> batch = nextBatch(true);
            if (batch.isEmpty()) {
                return;
            }
            writeBatch(batch);
        }
    }

    /**
     * The next batch, once it is full or its oldest send lingered long enough; empty when
     * none wait, and then, with {@code endFlush}, the flush is over.
     */
    private List<QueuedSend> nextBatch(boolean endFlush) {
        int max = batching().maxRecords();
        long linger = batching().linger().toNanos();
        synchronized (lock) {
            while (!queued.isEmpty() && queued.size() < max && !life.releasing()) {
                long left = queued.peek().queuedAtNanos() + linger - nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    // A pool thread is interrupted only when the JVM shuts the pool down: flush now.
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            List<QueuedSend> batch = new ArrayList<>(Math.min(max, queued.size()));
            while (!queued.isEmpty() && batch.size() < max) {
                batch.add(queued.poll());
            }
            if (batch.isEmpty() && endFlush) {
                flushing = false;
                flusher = null;
                lock.notifyAll();
            }
            return batch;
        }
    }

    /** Writes one batch in one guarded transaction and completes its futures. */
    private void writeBatch(List<QueuedSend> batch) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(batch.size());
        batch.forEach(send -> records.add(send.record()));
        List<RecordMetadata> written;
        try {
            // Sends accepted before a release began are still written, also during the release.
            written = lease.write(records, ConsumedOffsets.NONE, true);
        } catch (RuntimeException failed) {
            madeRoom(batch.size());
            batch.forEach(send -> send.result().completeExceptionally(failed));
            return;
        }
        // Room first: a completion callback may send again.
        madeRoom(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).result().complete(written.get(i));
        }
    }

    private void madeRoom(int records) {
        synchronized (lock) {
            unwritten -= records;
            lock.notifyAll();
        }
    }

    /**
     * Waits until every send accepted before the release is written (or failed). Called
     * on the flushing thread itself (from a send's completion callback), it writes them
     * here: nobody else would, and waiting for the flush to end would wait for itself.
     */
    void awaitWritten() {
        synchronized (lock) {
            // No more lingering: the flusher writes what is queued at once.
            lock.notifyAll();
            if (Thread.currentThread() != flusher) {
                while (flushing) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        // The sends still complete on the flusher; those it writes after the tombstone fail as
                        // released.
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                return;
            }
        }
        // Releasing, so nothing new is queued; the flush loop this callback returns to finds the queue empty.
        while (true) {
            List<QueuedSend> batch = nextBatch(false);
            if (batch.isEmpty()) {
                return;
            }
            writeBatch(batch);
        }
    }
}
