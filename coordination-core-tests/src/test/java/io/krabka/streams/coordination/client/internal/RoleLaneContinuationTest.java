package io.krabka.streams.coordination.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * RoleLane.runThen decides where the continuation runs by the identity of the thread that
 * runs the event: "here" when it is the asking thread. That is only true while the asking
 * call still waits. When the asking thread's event is left queued by the runner and the
 * asking thread itself drains it later, in another call, the continuation is written into
 * the array of a call that already returned: it never runs. For PassLoop that is a pass
 * (inPass stays true: no pass ever again) or a leave (awaitStopped never completes).
 *
 * <p>The runner can leave an event queued in two ways: it lets the lane go between the
 * asking thread's enqueue and its own second look at the queue, and is descheduled there
 * while the asking thread posts again (a window of nanoseconds, not reproducible here); or
 * its failure handler throws (an Error while handling an Error, a StackOverflowError
 * logged near the top of the stack), which also strands every queued event until the next
 * post: "the lane goes on with the next" does not hold then. The second forces it here.
 */
class RoleLaneContinuationTest {

    @Test
    void aContinuationReturnedByAnEventAlwaysRuns() throws Exception {
        AtomicBoolean failHandling = new AtomicBoolean(true);
        RoleLane lane = new RoleLane(failure -> {
            if (failHandling.getAndSet(false)) {
                throw new StackOverflowError("while handling " + failure);
            }
        });
        CountDownLatch runnerIn = new CountDownLatch(1);
        CountDownLatch asked = new CountDownLatch(1);
        Thread runner = new Thread(
                () -> lane.run(() -> {
                    runnerIn.countDown();
                    try {
                        asked.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    throw new IllegalStateException("an event that fails");
                }),
                "runner");
        Throwable[] runnerEscaped = {null};
        runner.setUncaughtExceptionHandler((t, e) -> runnerEscaped[0] = e);
        runner.start();
        assertThat(runnerIn.await(10, TimeUnit.SECONDS)).isTrue();

        AtomicInteger eventsRun = new AtomicInteger();
        AtomicInteger continuationsRun = new AtomicInteger();
        AtomicInteger dispatchedElsewhere = new AtomicInteger();
        // The asking thread (this one): the lane is busy, so its event is queued and it goes on.
        lane.runThen(
                () -> {
                    eventsRun.incrementAndGet();
                    return continuationsRun::incrementAndGet;
                },
                task -> {
                    dispatchedElsewhere.incrementAndGet();
                    task.run();
                });
        assertThat(eventsRun).hasValue(0);
        asked.countDown();
        runner.join(10_000);

        // The queued event must have run, on the runner, by the time the runner let the lane go.
        assertThat(eventsRun)
                .as("the queued event ran before the runner let the lane go (runner ended with %s)", runnerEscaped[0])
                .hasValue(1);
        assertThat(continuationsRun).as("its continuation ran").hasValue(1);
    }

    @Test
    void aQueuedEventOfTheAskingThreadDrainedByItLaterStillRunsItsContinuation() throws Exception {
        AtomicBoolean failHandling = new AtomicBoolean(true);
        RoleLane lane = new RoleLane(failure -> {
            if (failHandling.getAndSet(false)) {
                throw new StackOverflowError("while handling " + failure);
            }
        });
        CountDownLatch runnerIn = new CountDownLatch(1);
        CountDownLatch asked = new CountDownLatch(1);
        Thread runner = new Thread(
                () -> {
                    try {
                        lane.run(() -> {
                            runnerIn.countDown();
                            try {
                                asked.await(10, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            throw new IllegalStateException("an event that fails");
                        });
                    } catch (StackOverflowError escaped) {
                        // The handler's failure leaves run(), and the lane, with the queue as it is.
                    }
                },
                "runner");
        runner.start();
        assertThat(runnerIn.await(10, TimeUnit.SECONDS)).isTrue();

        AtomicInteger continuationsRun = new AtomicInteger();
        lane.runThen(() -> continuationsRun::incrementAndGet, Runnable::run);
        asked.countDown();
        runner.join(10_000);

        // The asking thread posts again (its next pass's bookkeeping, say): it drains its own earlier event.
        lane.run(() -> {});
        assertThat(continuationsRun)
                .as("the continuation of the event this thread asked for earlier")
                .hasValue(1);
    }
}
