package io.krabka.streams.coordination.runtime;

import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The runtime on real time and threads: the system clock (or the one given),
 * {@link System#nanoTime()}, a timer thread, a few pass threads, a few renewal threads
 * plus one for each renewal that is blocked, and cached pools for callbacks and long
 * tasks, all daemon threads that end once idle.
 */
public final class SystemCoordinationRuntime implements CoordinationRuntime {

    /** How many passes run at once by default; a pass rarely blocks for long. */
    public static final int DEFAULT_PASS_THREADS = 16;
    /** How many renewals run at once by default, not counting blocked ones. */
    public static final int DEFAULT_RENEWAL_THREADS = 16;

    static final SystemCoordinationRuntime SHARED =
            new Builder().name("krabka-coordination").build();

    private final String name;
    private final InstantSource clock;
    private final ThreadPoolExecutor passPool;
    // The pass pool's two doors: in turn, and ahead of every pass queued in turn.
    private final Executor passes;
    private final Executor urgentPasses;
    private final AtomicLong passesHandedIn = new AtomicLong();
    private final ThreadPoolExecutor renewals;
    private final int renewalThreads;
    private final AtomicInteger blockedRenewals = new AtomicInteger();
    private final Executor callbacks;
    private final Executor workers;
    private final ScheduledThreadPoolExecutor timer;
    /** What {@link #close()} shuts down: only what this runtime created. */
    private final List<ExecutorService> owned = new ArrayList<>();

    private SystemCoordinationRuntime(Builder builder) {
        this.name = builder.name;
        this.clock = builder.clock;
        this.renewalThreads = builder.renewalThreads;
        this.passPool = own(pool(builder.passThreads, name + "-pass", new PriorityBlockingQueue<>()));
        this.passes = task -> passPool.execute(new QueuedPass(task, false, passesHandedIn.incrementAndGet()));
        this.urgentPasses = task -> passPool.execute(new QueuedPass(task, true, passesHandedIn.incrementAndGet()));
        this.renewals = own(pool(builder.renewalThreads, name + "-renew", new LinkedBlockingQueue<>()));
        this.callbacks = builder.callbacks != null
                ? builder.callbacks
                : own(Executors.newCachedThreadPool(daemon(name + "-events")));
        this.workers =
                builder.workers != null ? builder.workers : own(Executors.newCachedThreadPool(daemon(name + "-work")));
        ScheduledThreadPoolExecutor created = new ScheduledThreadPoolExecutor(1, daemon(name + "-timer"));
        created.setRemoveOnCancelPolicy(true);
        this.timer = own(created);
    }

    private <T extends ExecutorService> T own(T executor) {
        owned.add(executor);
        return executor;
    }

    @Override
    public InstantSource clock() {
        return clock;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

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
    public Executor callbacks() {
        return callbacks;
    }

    @Override
    public Executor workers() {
        return workers;
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        ScheduledFuture<?> future = timer.schedule(task, Math.max(0, saturatedNanos(delay)), TimeUnit.NANOSECONDS);
        return new Scheduled() {
            @Override
            public void cancel() {
                future.cancel(false);
            }

            @Override
            public boolean isDue() {
                return future.getDelay(TimeUnit.NANOSECONDS) <= 0;
            }
        };
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(Math.max(0, saturatedNanos(duration)));
    }

    @Override
    public void renewalBlocked() {
        // A thread more while it is blocked (the pool starts one for a queued renewal at
        // once); the maximum is unbounded, so only the core size limits the pool.
        renewals.setCorePoolSize(renewalThreads + blockedRenewals.incrementAndGet());
    }

    @Override
    public void renewalUnblocked() {
        renewals.setCorePoolSize(renewalThreads + Math.max(0, blockedRenewals.decrementAndGet()));
    }

    /** How many renewals are blocked now (each has a thread of its own). */
    public int blockedRenewals() {
        return blockedRenewals.get();
    }

    @Override
    public void close() {
        if (this == SHARED) {
            return;
        }
        owned.forEach(ExecutorService::shutdownNow);
    }

    @Override
    public String toString() {
        return "SystemCoordinationRuntime[" + name + "]";
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return duration.isNegative() ? 0 : Long.MAX_VALUE;
        }
    }

    /** A pass in the pass pool's queue: urgent ones first, each kind in the order handed in. */
    private record QueuedPass(Runnable task, boolean urgent, long handedIn)
            implements Runnable, Comparable<QueuedPass> {

        QueuedPass {
            Objects.requireNonNull(task, "task");
        }

        @Override
        public void run() {
            task.run();
        }

        @Override
        public int compareTo(QueuedPass other) {
            return urgent != other.urgent ? (urgent ? -1 : 1) : Long.compare(handedIn, other.handedIn);
        }
    }

    private static ThreadPoolExecutor pool(int threads, String name, BlockingQueue<Runnable> queue) {
        // With an unbounded queue a pool never runs more threads than its core size; the
        // maximum only bounds the core size renewalBlocked() may set.
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(threads, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, queue, daemon(name));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static ThreadFactory daemon(String name) {
        return task -> {
            Thread created = new Thread(task, name);
            created.setDaemon(true);
            return created;
        };
    }

    /** Builds a {@link SystemCoordinationRuntime}. */
    public static final class Builder {
        private String name = "krabka-coordination";
        private InstantSource clock = InstantSource.system();
        private int passThreads = DEFAULT_PASS_THREADS;
        private int renewalThreads = DEFAULT_RENEWAL_THREADS;
        private @Nullable Executor callbacks;
        private @Nullable Executor workers;

        Builder() {}

        /** The prefix of its threads' names. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The wall clock leases are written in; the system clock by default. */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** How many passes run at once ({@value #DEFAULT_PASS_THREADS} by default). */
        public Builder passThreads(int threads) {
            this.passThreads = positive(threads, "pass threads");
            return this;
        }

        /** How many renewals run at once, not counting blocked ones ({@value #DEFAULT_RENEWAL_THREADS} by default). */
        public Builder renewalThreads(int threads) {
            this.renewalThreads = positive(threads, "renewal threads");
            return this;
        }

        /** Where listener callbacks run (they may be virtual threads); a cached daemon pool by default. Not closed by the runtime. */
        public Builder callbacks(Executor callbacks) {
            this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
            return this;
        }

        /** Where long tasks run (they may be virtual threads); a cached daemon pool by default. Not closed by the runtime. */
        public Builder workers(Executor workers) {
            this.workers = Objects.requireNonNull(workers, "workers");
            return this;
        }

        public SystemCoordinationRuntime build() {
            return new SystemCoordinationRuntime(this);
        }

        private static int positive(int value, String what) {
            if (value < 1) {
                throw new IllegalArgumentException("a runtime needs at least one of its " + what + ", not " + value);
            }
            return value;
        }
    }
}
