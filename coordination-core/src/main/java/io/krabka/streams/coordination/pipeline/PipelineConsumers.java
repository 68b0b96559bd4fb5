package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.FutureTask;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's consumers: one kept between runs (connected, unassigned), so a new leader
 * pays only for the assignment and the committed offsets; new ones from the supplier; and
 * every close on the runtime's workers, away from the interrupts that end runs.
 */
final class PipelineConsumers implements AutoCloseable {

    // The pipeline's logger: operators filter its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(LeaderPipeline.class);

    private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

    private final Supplier<Consumer<byte[], byte[]>> consumers;
    private final CoordinationRuntime runtime;
    // A consumer between runs (connected, unassigned), and whether close() was called; guarded by this.
    private @Nullable Consumer<byte[], byte[]> idle;
    private boolean closed;

    PipelineConsumers(Supplier<Consumer<byte[], byte[]>> consumers, CoordinationRuntime runtime) {
        this.consumers = consumers;
        this.runtime = runtime;
    }

    /** The consumer kept from an earlier run or {@link LeaderPipeline#prepare()}, or a new one. */
    Consumer<byte[], byte[]> take() {
        synchronized (this) {
            Consumer<byte[], byte[]> kept = idle;
            idle = null;
            if (kept != null) {
                return kept;
            }
        }
        return consumers.get();
    }

    /** Keeps {@code consumer} for the next run, or closes it when it cannot be kept. */
    void giveBack(Consumer<byte[], byte[]> consumer) {
        if (!keep(consumer)) {
            discard(consumer);
        }
    }

    /** Keeps a consumer for the next run, unassigned; false when one is kept already or the pipeline is closed. */
    private boolean keep(Consumer<byte[], byte[]> consumer) {
        boolean interrupted = Thread.interrupted();
        try {
            consumer.assign(List.of());
        } catch (RuntimeException e) {
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (idle != null || closed) {
                return false;
            }
            idle = consumer;
            return true;
        }
    }

    /**
     * Closes the consumer on a thread of its own and waits for that: the interrupt that
     * ends a run (one may also arrive while it closes) must not reach a closing consumer,
     * which would then wait its whole timeout and log an error. The interrupt is kept.
     */
    void discard(Consumer<byte[], byte[]> consumer) {
        FutureTask<Void> closing = new FutureTask<>(
                () -> {
                    try {
                        consumer.close();
                    } catch (RuntimeException e) {
                        log.warn("Closing a pipeline consumer failed", e);
                    }
                },
                null);
        runtime.workers().execute(closing);
        boolean interrupted = false;
        long giveUpAt = runtime.nanoTime() + CLOSE_WAIT.toNanos();
        while (true) {
            try {
                runtime.await(closing, Duration.ofNanos(Math.max(0, giveUpAt - runtime.nanoTime())));
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes the consumer kept between runs; none is kept after. */
    @Override
    public void close() {
        Consumer<byte[], byte[]> kept;
        synchronized (this) {
            kept = idle;
            idle = null;
            closed = true;
        }
        if (kept != null) {
            discard(kept);
        }
    }
}
