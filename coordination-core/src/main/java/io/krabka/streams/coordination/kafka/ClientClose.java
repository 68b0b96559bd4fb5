package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Closes Kafka clients side by side, so a shutdown waits for the slowest close, not their sum. */
final class ClientClose {

    private ClientClose() {}

    /**
     * Runs every close on a thread of its own and waits up to {@code bound} for all of
     * them; a close still running then is left to end on its daemon thread.
     *
     * @return the first close that failed, wrapped; null when none did
     */
    static @Nullable CoordinationException inParallel(Map<String, Runnable> closes, Duration bound) {
        List<RuntimeException> failures = Collections.synchronizedList(new ArrayList<>());
        List<Thread> closing = new ArrayList<>();
        closes.forEach((name, close) -> {
            Thread thread = new Thread(
                    () -> {
                        try {
                            close.run();
                        } catch (RuntimeException e) {
                            failures.add(e);
                        }
                    },
                    "krabka-coordination-close-" + name);
            thread.setDaemon(true);
            thread.start();
            closing.add(thread);
        });
        long deadline = System.nanoTime() + bound.toNanos();
        try {
            for (Thread thread : closing) {
                thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (failures) {
            return failures.isEmpty()
                    ? null
                    : new CoordinationException("closing the transport failed", failures.get(0));
        }
    }
}
