package io.krabka.streams.coordination.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The test kit's timers fire once the lease clock passes them, once, and never after a cancel. */
class ClockTimersRuntimeTest {

    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    // One worker thread: what the clock fired runs in the order it was handed in.
    private final ExecutorService worker = Executors.newSingleThreadExecutor();
    private final ClockTimersRuntime runtime = new ClockTimersRuntime(
            CoordinationRuntime.builder()
                    .name("clock-timers-test")
                    .workers(worker)
                    .clock(clock)
                    .build(),
            clock);

    @AfterEach
    void close() {
        runtime.close();
        worker.shutdownNow();
    }

    @Test
    void aTimerFiresOnceWhenTheClockPassesItsDueTimeLongBeforeItsRealTimeDelay() {
        AtomicInteger runs = new AtomicInteger();
        CoordinationRuntime.Scheduled timer = runtime.schedule(runs::incrementAndGet, Duration.ofHours(1));

        moveAndSettle(Duration.ofMinutes(59));
        assertThat(runs).as("before its due time on the clock").hasValue(0);
        assertThat(timer.isDue()).isFalse();

        moveAndSettle(Duration.ofMinutes(1));
        assertThat(runs).hasValue(1);
        assertThat(timer.isDue()).isTrue();

        moveAndSettle(Duration.ofHours(1));
        assertThat(runs).as("fired once").hasValue(1);
    }

    @Test
    void aCancelledTimerNeverFires() {
        AtomicInteger runs = new AtomicInteger();
        runtime.schedule(runs::incrementAndGet, Duration.ofHours(1)).cancel();

        moveAndSettle(Duration.ofHours(2));
        assertThat(runs).hasValue(0);
    }

    /**
     * A pass reads the clock, the test moves it on (firing what was due), then the pass arms
     * its next timer: that timer counts from what the pass read, so it is due already.
     */
    @Test
    void aTimerArmedAfterTheClockMovedCountsFromTheInstantItsTaskRead() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch read = new CountDownLatch(1);
        CountDownLatch moved = new CountDownLatch(1);
        runtime.renewals().execute(() -> {
            runtime.clock().instant();
            read.countDown();
            try {
                moved.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            runtime.schedule(runs::incrementAndGet, Duration.ofMinutes(1));
        });
        read.await();
        clock.advance(Duration.ofMinutes(1));
        runtime.clockMoved();
        moved.countDown();

        // Its real-time delay is a minute: only the lease clock fires it this soon.
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
    }

    /**
     * Moves the clock, tells the runtime, and waits for a marker handed to the one worker
     * thread after that: whatever the look at the clock fired has run before it.
     */
    private void moveAndSettle(Duration by) {
        clock.advance(by);
        runtime.clockMoved();
        AtomicInteger marker = new AtomicInteger();
        runtime.workers().execute(marker::incrementAndGet);
        await().atMost(Duration.ofSeconds(10)).until(() -> marker.get() == 1);
    }
}
