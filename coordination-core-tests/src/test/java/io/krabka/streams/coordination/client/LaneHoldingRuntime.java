package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.runtime.ForwardingCoordinationRuntime;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real runtime (its own threads, the system clock) with two hooks a test uses to keep a
 * contender's lane busy on one thread of its choosing: a {@link Gate} armed for a thread
 * blocks that thread in the next {@link #schedule} or {@code passes().execute} it makes
 * (after handing the task on), which the engine makes from inside a lane event. It also
 * counts the tasks of {@code passes()} and {@code workers()} that have finished.
 */
final class LaneHoldingRuntime extends ForwardingCoordinationRuntime {

    /** Blocks the thread it is armed for (null: the first to get there), once, at the hook named, until opened. */
    static final class Gate {
        enum Hook {
            SCHEDULE,
            PASSES,
            RENEWALS
        }

        private final Thread thread;
        private final Hook hook;
        private volatile Thread enteredBy;
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch open = new CountDownLatch(1);
        private final CountDownLatch scheduledRan = new CountDownLatch(1);

        Gate(Thread thread, Hook hook) {
            this.thread = thread;
            this.hook = hook;
        }

        boolean awaitEntered(Duration timeout) throws InterruptedException {
            return entered.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        /**
         * Waits until the task that the held thread scheduled, at a {@link Hook#SCHEDULE} gate,
         * has run on the timer (for a pass: handed it to its executor).
         */
        boolean awaitScheduledRan(Duration timeout) throws InterruptedException {
            return scheduledRan.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        private boolean holds(Hook at) {
            return hook == at && (thread == null || thread == Thread.currentThread());
        }

        /** The thread the gate holds, once one entered. */
        Thread enteredBy() {
            return enteredBy;
        }

        void open() {
            open.countDown();
        }

        private void pass() {
            enteredBy = Thread.currentThread();
            entered.countDown();
            try {
                if (!open.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the gate was never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final AtomicReference<Gate> gate = new AtomicReference<>();
    final AtomicInteger passesDone = new AtomicInteger();
    final AtomicInteger workersDone = new AtomicInteger();
    /** The threads that handed a task to {@code passes()} (not the urgent ones), in order. */
    final java.util.List<Thread> handedInBy = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The threads that handed a task to {@code urgentPasses()}, in order. */
    final java.util.List<Thread> urgentHandedInBy = new java.util.concurrent.CopyOnWriteArrayList<>();

    LaneHoldingRuntime() {
        this(2);
    }

    LaneHoldingRuntime(int passThreads) {
        super(CoordinationRuntime.builder()
                .name("lane-holding")
                .passThreads(passThreads)
                .build());
    }

    /** Arms {@code next}: the thread it names blocks at its hook the next time it gets there. */
    Gate arm(Thread thread, Gate.Hook hook) {
        Gate next = new Gate(thread, hook);
        gate.set(next);
        return next;
    }

    private void maybeBlock(Gate.Hook at) {
        Gate armed = gate.get();
        if (armed != null && armed.holds(at) && gate.compareAndSet(armed, null)) {
            armed.pass();
        }
    }

    private final Executor passes = task -> {
        handedInBy.add(Thread.currentThread());
        delegate().passes().execute(() -> {
            try {
                task.run();
            } finally {
                passesDone.incrementAndGet();
            }
        });
        maybeBlock(Gate.Hook.PASSES);
    };

    private final Executor urgentPasses = task -> {
        urgentHandedInBy.add(Thread.currentThread());
        delegate().urgentPasses().execute(() -> {
            try {
                task.run();
            } finally {
                passesDone.incrementAndGet();
            }
        });
    };

    /** How many tasks handed to {@code renewals()} by each thread have finished. */
    final java.util.Map<Thread, AtomicInteger> renewalsDoneHandedInBy = new java.util.concurrent.ConcurrentHashMap<>();

    private final Executor renewals = task -> {
        AtomicInteger done = renewalsDoneHandedInBy.computeIfAbsent(Thread.currentThread(), t -> new AtomicInteger());
        delegate().renewals().execute(() -> {
            try {
                task.run();
            } finally {
                done.incrementAndGet();
            }
        });
        maybeBlock(Gate.Hook.RENEWALS);
    };

    private final Executor workers = task -> delegate().workers().execute(() -> {
        try {
            task.run();
        } finally {
            workersDone.incrementAndGet();
        }
    });

    @Override
    public Executor passes() {
        return passes;
    }

    @Override
    public Executor urgentPasses() {
        return urgentPasses;
    }

    @Override
    public Executor renewals() {
        return renewals;
    }

    @Override
    public Executor workers() {
        return workers;
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        Gate armed = gate.get();
        Runnable timed = task;
        if (armed != null && armed.holds(Gate.Hook.SCHEDULE)) {
            timed = () -> {
                try {
                    task.run();
                } finally {
                    armed.scheduledRan.countDown();
                }
            };
        }
        Scheduled scheduled = delegate().schedule(timed, delay);
        maybeBlock(Gate.Hook.SCHEDULE);
        return scheduled;
    }
}
