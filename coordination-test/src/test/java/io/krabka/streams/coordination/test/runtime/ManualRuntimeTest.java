package io.krabka.streams.coordination.test.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ManualRuntimeTest {

    private final List<ManualRuntime> opened = new ArrayList<>();
    private final List<String> trace = new ArrayList<>();

    @AfterEach
    void closeRuntimes() {
        opened.forEach(ManualRuntime::close);
    }

    private ManualRuntime open(ManualRuntime runtime) {
        opened.add(runtime);
        return runtime;
    }

    private ManualRuntime runtime() {
        return open(new ManualRuntime());
    }

    /** Records "what@milliseconds since the start" on the runtime's ticker. */
    private void mark(ManualRuntime runtime, String what) {
        trace.add(what + "@" + runtime.elapsed().toMillis());
    }

    @Test
    void runsEventsByDueTimeThenBySubmission() {
        ManualRuntime runtime = runtime();
        runtime.schedule(() -> mark(runtime, "late"), Duration.ofSeconds(2));
        runtime.schedule(() -> mark(runtime, "early"), Duration.ofSeconds(1));
        runtime.passes().execute(() -> mark(runtime, "pass"));
        runtime.workers().execute(() -> mark(runtime, "work"));
        runtime.schedule(() -> mark(runtime, "early-too"), Duration.ofSeconds(1));
        runtime.callbacks().execute(() -> mark(runtime, "callback"));

        runtime.advance(Duration.ofSeconds(3));

        assertThat(trace)
                .containsExactly("pass@0", "work@0", "callback@0", "early@1000", "early-too@1000", "late@2000");
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void aTaskAwaitingAFutureResumesWhenAnotherTaskCompletesItOrAtItsTimeout() {
        ManualRuntime runtime = runtime();
        java.util.concurrent.CompletableFuture<Void> stopped = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.CompletableFuture<Void> never = new java.util.concurrent.CompletableFuture<>();
        runtime.workers().execute(() -> {
            try {
                mark(runtime, "stopped " + runtime.await(stopped, Duration.ofSeconds(30)));
                mark(runtime, "never " + runtime.await(never, Duration.ofSeconds(2)));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        runtime.schedule(() -> stopped.complete(null), Duration.ofMillis(1234));

        runtime.advance(Duration.ofSeconds(10));

        assertThat(trace).containsExactly("stopped true@1234", "never false@3234");
    }

    @Test
    void theTestsThreadAwaitingAFutureRunsTheSimulationUntilItCompletes() throws InterruptedException {
        ManualRuntime runtime = runtime();
        java.util.concurrent.CompletableFuture<Void> stopped = new java.util.concurrent.CompletableFuture<>();
        runtime.schedule(() -> runtime.callbacks().execute(() -> stopped.complete(null)), Duration.ofSeconds(7));

        assertThat(runtime.await(stopped, Duration.ofSeconds(5))).isFalse();
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(5));
        assertThat(runtime.await(stopped, Duration.ofSeconds(5))).isTrue();
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void advanceRunsOnlyWhatIsDueAndMovesBothClocks() {
        ManualRuntime runtime = runtime();
        Instant wallAtStart = runtime.clock().instant();
        long tickerAtStart = runtime.nanoTime();
        AtomicReference<Instant> wallWhenRun = new AtomicReference<>();
        CoordinationRuntime.Scheduled timer = runtime.schedule(
                () -> {
                    wallWhenRun.set(runtime.clock().instant());
                    runtime.renewals().execute(() -> mark(runtime, "renewal from the timer"));
                },
                Duration.ofMillis(1500));

        runtime.advance(Duration.ofSeconds(1));
        assertThat(trace).isEmpty();
        assertThat(timer.isDue()).isFalse();

        runtime.advance(Duration.ofSeconds(1));
        assertThat(trace).containsExactly("renewal from the timer@1500");
        assertThat(wallWhenRun.get()).isEqualTo(wallAtStart.plusMillis(1500));
        assertThat(timer.isDue()).isTrue();
        assertThat(runtime.nanoTime() - tickerAtStart)
                .isEqualTo(Duration.ofSeconds(2).toNanos());
        assertThat(runtime.clock().instant()).isEqualTo(wallAtStart.plusSeconds(2));
    }

    @Test
    void aCancelledTimerNeverRuns() {
        ManualRuntime runtime = runtime();
        CoordinationRuntime.Scheduled timer = runtime.schedule(() -> mark(runtime, "cancelled"), Duration.ofSeconds(1));
        runtime.schedule(() -> mark(runtime, "kept"), Duration.ofSeconds(1));
        timer.cancel();

        runtime.advance(Duration.ofSeconds(2));

        assertThat(trace).containsExactly("kept@1000");
        assertThat(runtime.pending()).isZero();
    }

    @Test
    void runDueRunsWhatTasksSubmitForNow() {
        ManualRuntime runtime = runtime();
        runtime.passes()
                .execute(() -> runtime.callbacks()
                        .execute(() -> runtime.schedule(() -> mark(runtime, "chained"), Duration.ZERO)));

        runtime.runDue();

        assertThat(trace).containsExactly("chained@0");
    }

    @Test
    void aSignalWakesItsWaitersAtTheInstantItIsSignalled() {
        ManualRuntime runtime = runtime();
        ManualRuntime.Signal signal = runtime.newSignal();
        for (String name : List.of("first", "second")) {
            runtime.workers().execute(() -> {
                try {
                    mark(runtime, name + (signal.await(Duration.ofSeconds(10)) ? " signalled" : " timed out"));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
        }
        runtime.schedule(signal::signalAll, Duration.ofSeconds(3));
        runtime.advance(Duration.ofSeconds(4));
        runtime.workers().execute(() -> {
            try {
                mark(runtime, "late" + (signal.await(Duration.ofSeconds(10)) ? " signalled" : " timed out"));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        runtime.advance(Duration.ofSeconds(20));

        assertThat(trace).containsExactly("first signalled@3000", "second signalled@3000", "late timed out@14000");
    }

    @Test
    void theSeventeenthPassWaitsForAWorker() {
        ManualRuntime runtime = runtime();
        for (int i = 1; i <= 17; i++) {
            String name = "pass" + i;
            runtime.passes().execute(() -> {
                mark(runtime, name);
                sleep(runtime, Duration.ofSeconds(1));
            });
        }

        runtime.advance(Duration.ZERO);
        assertThat(trace).hasSize(16).doesNotContain("pass17@0");
        assertThat(runtime.busy(runtime.passes())).isEqualTo(16);
        assertThat(runtime.waiting(runtime.passes())).isEqualTo(1);

        runtime.advance(Duration.ofSeconds(2));
        assertThat(trace).hasSize(17).last().isEqualTo("pass17@1000");
        assertThat(runtime.busy(runtime.passes())).isZero();
    }

    @Test
    void aBlockedRenewalGivesTheRenewalsAWorkerMore() {
        ManualRuntime runtime = open(ManualRuntime.builder().renewalThreads(1).build());
        runtime.renewals().execute(() -> {
            mark(runtime, "stuck");
            runtime.renewalBlocked();
            sleep(runtime, Duration.ofSeconds(10));
            runtime.renewalUnblocked();
        });
        runtime.renewals().execute(() -> mark(runtime, "next"));
        runtime.renewals().execute(() -> mark(runtime, "after"));

        runtime.advance(Duration.ofSeconds(1));
        assertThat(trace).containsExactly("stuck@0", "next@0", "after@0");
        assertThat(runtime.renewalLimit()).isEqualTo(2);

        runtime.advance(Duration.ofSeconds(10));
        assertThat(runtime.renewalLimit()).isEqualTo(1);
        // An unmatched unblock never takes the base worker away.
        runtime.renewalUnblocked();
        assertThat(runtime.renewalLimit()).isEqualTo(1);
    }

    @Test
    void withoutTheHintRenewalsQueueBehindOneThatSleeps() {
        ManualRuntime runtime = open(ManualRuntime.builder().renewalThreads(1).build());
        runtime.renewals().execute(() -> sleep(runtime, Duration.ofSeconds(10)));
        runtime.renewals().execute(() -> mark(runtime, "next"));

        runtime.advance(Duration.ofSeconds(11));

        assertThat(trace).containsExactly("next@10000");
    }

    @Test
    void aSleepingTaskLetsOthersRunMeanwhile() {
        ManualRuntime runtime = runtime();
        runtime.workers().execute(() -> {
            mark(runtime, "sleeps");
            sleep(runtime, Duration.ofSeconds(5));
            mark(runtime, "woke");
            sleep(runtime, Duration.ofSeconds(1));
            mark(runtime, "woke again");
        });
        runtime.schedule(() -> mark(runtime, "timer"), Duration.ofSeconds(1));
        runtime.passes().execute(() -> {
            sleep(runtime, Duration.ofSeconds(3));
            mark(runtime, "other sleeper");
        });

        runtime.advance(Duration.ofSeconds(10));

        assertThat(trace)
                .containsExactly("sleeps@0", "timer@1000", "other sleeper@3000", "woke@5000", "woke again@6000");
    }

    @Test
    void sleepOnTheTestsThreadAdvances() throws InterruptedException {
        ManualRuntime runtime = runtime();
        runtime.schedule(() -> mark(runtime, "timer"), Duration.ofSeconds(1));

        runtime.sleep(Duration.ofSeconds(2));

        assertThat(trace).containsExactly("timer@1000");
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void anInterruptFromTheTestEndsASleepAtTheInstantItIsSeen() {
        ManualRuntime runtime = runtime();
        AtomicReference<Thread> sleeper = new AtomicReference<>();
        runtime.workers().execute(() -> {
            sleeper.set(Thread.currentThread());
            try {
                runtime.sleep(Duration.ofSeconds(10));
                mark(runtime, "slept");
            } catch (InterruptedException e) {
                mark(runtime, "interrupted, flag " + Thread.currentThread().isInterrupted());
            }
        });
        runtime.advance(Duration.ofSeconds(2));

        sleeper.get().interrupt();
        runtime.advance(Duration.ofSeconds(1));

        assertThat(trace).containsExactly("interrupted, flag false@2000");
    }

    @Test
    void anInterruptFromAnotherTaskEndsASleepThen() {
        ManualRuntime runtime = runtime();
        AtomicReference<Thread> sleeper = new AtomicReference<>();
        runtime.workers().execute(() -> {
            sleeper.set(Thread.currentThread());
            try {
                runtime.sleep(Duration.ofSeconds(10));
                mark(runtime, "slept");
            } catch (InterruptedException e) {
                mark(runtime, "interrupted");
            }
        });
        runtime.schedule(
                () -> {
                    sleeper.get().interrupt();
                    mark(runtime, "interrupter");
                },
                Duration.ofSeconds(3));
        runtime.schedule(() -> mark(runtime, "later"), Duration.ofSeconds(4));

        runtime.advance(Duration.ofSeconds(20));

        assertThat(trace).containsExactly("interrupter@3000", "interrupted@3000", "later@4000");
    }

    @Test
    void aTaskBlockedOnARealLockIsReportedWithItsStack() throws InterruptedException {
        ManualRuntime runtime =
                open(ManualRuntime.builder().hangTimeout(Duration.ofMillis(300)).build());
        ReentrantLock lock = new ReentrantLock();
        lock.lock();
        try {
            runtime.passes().execute(() -> {
                lock.lock();
                lock.unlock();
            });

            assertThatThrownBy(() -> runtime.advance(Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("manual-runtime-carrier-0")
                    .hasMessageContaining("blocked outside the runtime")
                    .satisfies(hang -> assertThat(hang.getStackTrace())
                            .anySatisfy(
                                    frame -> assertThat(frame.getClassName()).contains("ReentrantLock")));
            assertThatThrownBy(() -> runtime.advance(Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("broken");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void aTaskThatThrowsFailsTheAdvanceAfterTheStep() {
        ManualRuntime runtime = runtime();
        runtime.passes().execute(new Runnable() {
            @Override
            public void run() {
                throw new IllegalArgumentException("boom");
            }

            @Override
            public String toString() {
                return "the exploding pass";
            }
        });
        runtime.schedule(() -> mark(runtime, "after"), Duration.ofSeconds(1));

        assertThatThrownBy(() -> runtime.advance(Duration.ofSeconds(2)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("the exploding pass")
                .hasMessageContaining("passes")
                .hasRootCauseMessage("boom");
        assertThat(trace).containsExactly("after@1000");
        // Reported once.
        runtime.advance(Duration.ofSeconds(1));
    }

    @Test
    void aHandlerTakesTaskFailuresInstead() {
        ManualRuntime runtime = runtime();
        List<Throwable> handled = new ArrayList<>();
        runtime.onTaskFailure((task, failure) -> handled.add(failure));
        runtime.workers().execute(() -> {
            throw new IllegalStateException("handled");
        });

        runtime.advance(Duration.ofSeconds(1));

        assertThat(handled).singleElement().extracting(Throwable::getMessage).isEqualTo("handled");
    }

    @Test
    void endlessWorkAtOneInstantIsALivelock() {
        ManualRuntime runtime =
                open(ManualRuntime.builder().maxEventsPerInstant(1000).build());
        runtime.passes().execute(new Runnable() {
            @Override
            public void run() {
                runtime.passes().execute(this);
            }
        });

        assertThatThrownBy(() -> runtime.advance(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("livelock")
                .hasMessageContaining("1000");
    }

    @Test
    void settingTheWallClockBackMovesNoTicker() {
        ManualRuntime runtime = runtime();
        long ticker = runtime.nanoTime();
        Instant stepped = runtime.wallClock().instant().minus(Duration.ofHours(1));
        runtime.wallClock().set(stepped);
        assertThat(runtime.nanoTime()).isEqualTo(ticker);

        AtomicReference<Instant> wallWhenRun = new AtomicReference<>();
        runtime.schedule(() -> wallWhenRun.set(runtime.clock().instant()), Duration.ofSeconds(1));
        runtime.advance(Duration.ofSeconds(2));

        assertThat(wallWhenRun.get()).isEqualTo(stepped.plusSeconds(1));
        assertThat(runtime.clock().instant()).isEqualTo(stepped.plusSeconds(2));
        assertThat(runtime.nanoTime() - ticker).isEqualTo(Duration.ofSeconds(2).toNanos());
    }

    @Test
    void withClockKeepsTheExecutorsAndTheTicker() {
        ManualRuntime runtime = runtime();
        ManualClock skewed = new ManualClock(Instant.parse("2030-01-01T00:00:00Z"));
        CoordinationRuntime member = runtime.withClock(skewed);

        assertThat(member.clock()).isSameAs(skewed);
        assertThat(member.passes()).isSameAs(runtime.passes());
        assertThat(member.renewals()).isSameAs(runtime.renewals());
        member.workers().execute(() -> mark(runtime, "via the member"));
        member.schedule(() -> mark(runtime, "timer via the member"), Duration.ofSeconds(1));
        member.close();

        runtime.advance(Duration.ofSeconds(1));

        assertThat(trace).containsExactly("via the member@0", "timer via the member@1000");
        assertThat(member.nanoTime()).isEqualTo(runtime.nanoTime());
    }

    @Test
    void advanceUntilStopsAtTheEventThatMakesTheConditionHold() {
        ManualRuntime runtime = runtime();
        AtomicInteger ticks = new AtomicInteger();
        for (int i = 1; i <= 10; i++) {
            runtime.schedule(ticks::incrementAndGet, Duration.ofSeconds(i));
        }

        assertThat(runtime.advanceUntil(() -> ticks.get() == 3, Duration.ofSeconds(60)))
                .isTrue();
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(3));
        assertThat(ticks).hasValue(3);

        assertThat(runtime.advanceUntil(() -> ticks.get() == 100, Duration.ofSeconds(60)))
                .isFalse();
        assertThat(runtime.elapsed()).isEqualTo(Duration.ofSeconds(63));
        assertThat(ticks).hasValue(10);
    }

    @Test
    void closeEndsSleepingTasksAndIsIdempotent() {
        ManualRuntime runtime = runtime();
        AtomicBoolean finished = new AtomicBoolean();
        runtime.workers().execute(() -> {
            sleep(runtime, Duration.ofSeconds(10));
            finished.set(true);
        });
        runtime.advance(Duration.ofSeconds(1));

        runtime.close();
        runtime.close();

        assertThat(finished).isFalse();
        assertThatThrownBy(() -> runtime.passes().execute(() -> {}))
                .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
    }

    @Test
    void aSeededWorkloadRunsTheSameTwice() {
        List<String> first = randomWorkload(42);
        List<String> second = randomWorkload(42);

        assertThat(first).hasSizeGreaterThan(1000);
        assertThat(second).isEqualTo(first);
        assertThat(randomWorkload(43)).isNotEqualTo(first);
    }

    /** Tasks that sleep, submit to random executors, schedule and interrupt each other, as the seed says. */
    private List<String> randomWorkload(long seed) {
        List<String> events = new ArrayList<>();
        ManualRuntime runtime =
                open(ManualRuntime.builder().passThreads(3).renewalThreads(2).build());
        Random random = new Random(seed);
        Executor[] executors = {runtime.passes(), runtime.renewals(), runtime.callbacks(), runtime.workers()};
        List<Thread> threads = new ArrayList<>();
        AtomicInteger names = new AtomicInteger();
        class Step implements Runnable {
            final String name = "t" + names.incrementAndGet();
            int left = 1 + random.nextInt(4);

            @Override
            public void run() {
                events.add(name + " start @" + runtime.elapsed().toMillis());
                threads.add(Thread.currentThread());
                while (left-- > 0) {
                    switch (random.nextInt(5)) {
                        case 0, 1 -> {
                            try {
                                runtime.sleep(Duration.ofMillis(random.nextInt(500)));
                            } catch (InterruptedException e) {
                                events.add(name + " interrupted @"
                                        + runtime.elapsed().toMillis());
                            }
                        }
                        case 2 -> {
                            if (names.get() < 3000) {
                                executors[random.nextInt(executors.length)].execute(new Step());
                            }
                        }
                        case 3 -> {
                            if (names.get() < 3000) {
                                runtime.schedule(new Step(), Duration.ofMillis(random.nextInt(300)));
                            }
                        }
                        default -> threads.get(random.nextInt(threads.size())).interrupt();
                    }
                    events.add(name + " step @" + runtime.elapsed().toMillis());
                }
            }
        }
        for (int i = 0; i < 20; i++) {
            executors[i % executors.length].execute(new Step());
        }
        runtime.advance(Duration.ofMinutes(10));
        return events;
    }

    @Test
    void throughput() {
        ManualRuntime runtime = runtime();
        int tasks = 1_000_000;
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < tasks; i++) {
            runtime.schedule(ran::incrementAndGet, Duration.ofNanos(i));
        }
        long started = System.nanoTime();
        runtime.advance(Duration.ofSeconds(1));
        long inline = System.nanoTime() - started;
        assertThat(ran).hasValue(tasks);

        int sleepers = 50;
        int resumes = 2_000;
        for (int s = 0; s < sleepers; s++) {
            runtime.workers().execute(() -> {
                for (int r = 0; r < resumes; r++) {
                    sleep(runtime, Duration.ofMillis(1));
                    ran.incrementAndGet();
                }
            });
        }
        started = System.nanoTime();
        runtime.advance(Duration.ofSeconds(10));
        long switching = System.nanoTime() - started;
        assertThat(ran).hasValue(tasks + sleepers * resumes);

        System.out.printf(
                "ManualRuntime: %,d inline events/s, %,d resumes/s%n",
                tasks * 1_000_000_000L / inline, sleepers * (long) resumes * 1_000_000_000L / switching);
    }

    private static void sleep(ManualRuntime runtime, Duration duration) {
        try {
            runtime.sleep(duration);
        } catch (InterruptedException e) {
            throw new AssertionError("interrupted", e);
        }
    }
}
