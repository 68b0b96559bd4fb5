package io.krabka.streams.coordination.test.runtime;

import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.runtime.SystemCoordinationRuntime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

/**
 * A {@link CoordinationRuntime} on simulated time: nothing happens until a test calls
 * {@link #advance(Duration)}, and then everything due runs, one task at a time, in the
 * order of its due time and, at one instant, of its submission. The same workload always
 * runs in the same order at the same instants, so a test can drive started contenders
 * through hours of leases, renewals and failovers in milliseconds, and reproduce a seed.
 *
 * <h2>Time</h2>
 * A monotonic ticker ({@link #nanoTime()}, starting at {@link #TICKER_START}) and a wall
 * clock ({@link #wallClock()}, a {@link ManualClock}). Both move only inside
 * {@link #advance}, to each event's due time before it runs; a test may
 * {@link ManualClock#set set} the wall clock backwards or forwards to model a clock step,
 * which moves no ticker and runs nothing, and later advances move it on from there.
 *
 * <h2>Executors and the timer</h2>
 * {@link #passes()} and {@link #renewals()} have a worker limit each (16 by default, as
 * {@link SystemCoordinationRuntime}); {@link #renewalBlocked()} raises the renewals'
 * limit by one and {@link #renewalUnblocked()} lowers it. {@link #callbacks()} and
 * {@link #workers()} are unbounded. A task given to an executor starts at the current
 * instant, after what was submitted before it; when all workers are busy it waits, in
 * FIFO order, for one to free. {@link #schedule} runs its task at now + delay.
 *
 * <h2>Threads</h2>
 * Tasks run on real <em>carrier</em> threads, but only one at a time: a baton passes
 * between them and the thread that called {@code advance}. That lets {@link #sleep}
 * suspend a task: it keeps its worker, its resume is queued at now + duration, and other
 * events run meanwhile. A carrier that ends a task runs the next due task itself, so a
 * thread switch is needed only to resume a sleeping task, and once per {@code advance}
 * to return to the test. {@link Thread#interrupt() Interrupting} a sleeping task (from the
 * test or from another task) makes its {@code sleep} throw {@link InterruptedException}
 * at the instant the interrupt was seen. {@code sleep} on a thread that is no carrier and
 * outside any {@code advance} (the test's own thread) is {@code advance(duration)}.
 *
 * <p>Measured on a shared 2-core machine ({@code ManualRuntimeTest.throughput}, six runs):
 * 1.2 to 1.7 million events a second for tasks that run inline (a million timers), and
 * 85 000 to 130 000 a second when every event resumes a sleeping task (a thread switch each).
 *
 * <h2>Failures</h2>
 * A task that throws fails the {@code advance} that ran it, after the step, with an
 * {@link AssertionError} naming the task, unless {@link #onTaskFailure} set a handler.
 * A task that blocks outside the runtime (on a lock or a future a sleeping task holds,
 * {@code Object.wait}, I/O) would hang the simulation; after {@link Builder#hangTimeout}
 * of real time {@code advance} fails with an {@link IllegalStateException} carrying the
 * thread's stack, and the runtime is broken from then on. More than
 * {@link Builder#maxEventsPerInstant} events at one instant (a livelock) fail it too.
 *
 * <p>Only the test's thread may call {@code advance}; tasks may call everything else.
 * Submitting from threads the runtime does not own (a real client's I/O thread) works
 * but is no longer deterministic.
 */
public final class ManualRuntime implements CoordinationRuntime {

    /** Where the ticker starts: far from zero, so no code can take zero for "not set". */
    public static final long TICKER_START = TimeUnit.HOURS.toNanos(1);
    /** How long, in real time, one task may run or block before {@code advance} gives up, by default. */
    public static final Duration DEFAULT_HANG_TIMEOUT = Duration.ofSeconds(10);
    /** How many events may run at one instant before {@code advance} calls it a livelock, by default. */
    public static final long DEFAULT_MAX_EVENTS_PER_INSTANT = 1_000_000;

    private static final int START = 0;
    private static final int TIMER = 1;
    private static final int RESUME = 2;

    private final ManualClock wallClock;
    private final long hangTimeoutNanos;
    private final long maxEventsPerInstant;
    private final int renewalThreads;
    private final boolean growsRenewals;
    private final Lane passes;
    private final Lane renewals;
    private final Lane callbacks;
    private final Lane workers;

    // Guarded by this.
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final ArrayDeque<Carrier> idle = new ArrayDeque<>();
    private final List<Carrier> carriers = new ArrayList<>();
    private final LinkedHashSet<Carrier> sleepers = new LinkedHashSet<>();
    private final List<AssertionError> failures = new ArrayList<>();
    private BiConsumer<String, Throwable> failureHandler;
    private long sequence;
    private long instantOfCount = Long.MIN_VALUE;
    private long eventsThisInstant;
    private long eventsRun;
    private volatile boolean closed;

    // Set by the advancing thread before it hands the baton on, read by the holder.
    private volatile long now = TICKER_START;
    private volatile long target;
    private volatile BooleanSupplier stop;
    private volatile boolean stopped;
    private volatile Thread driver;
    private volatile RuntimeException fatal;
    private volatile boolean broken;
    /** The only thread that may run; null while no advance runs. */
    private volatile Thread holder;
    /** Counts events, so the watchdog sees whether the holder is stuck in one. */
    private volatile long progress;

    /** A runtime with the defaults: 16 pass and 16 renewal workers, a 10 s hang timeout. */
    public ManualRuntime() {
        this(builder());
    }

    private ManualRuntime(Builder builder) {
        this.wallClock = builder.clock;
        this.hangTimeoutNanos = builder.hangTimeout.toNanos();
        this.maxEventsPerInstant = builder.maxEventsPerInstant;
        this.renewalThreads = builder.renewalThreads;
        this.growsRenewals = builder.growsRenewals;
        this.passes = new Lane("passes", builder.passThreads);
        this.renewals = new Lane("renewals", builder.renewalThreads);
        this.callbacks = new Lane("callbacks", Integer.MAX_VALUE);
        this.workers = new Lane("workers", Integer.MAX_VALUE);
    }

    /** Builds a {@link ManualRuntime} with other limits. */
    public static Builder builder() {
        return new Builder();
    }

    /** The wall clock, which a test may also {@link ManualClock#set set} to model a clock step. */
    public ManualClock wallClock() {
        return wallClock;
    }

    @Override
    public ManualClock clock() {
        return wallClock;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    /** How far the ticker has moved since this runtime was made. */
    public Duration elapsed() {
        return Duration.ofNanos(now - TICKER_START);
    }

    @Override
    public Executor passes() {
        return passes;
    }

    /** Hands a pass to {@link #passes()}'s workers ahead of the passes waiting there, as {@link SystemCoordinationRuntime} does. */
    @Override
    public Executor urgentPasses() {
        return passes::executeFirst;
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
        Objects.requireNonNull(task, "task");
        Event event;
        synchronized (this) {
            requireOpen();
            event = enqueue(TIMER, saturatedAdd(now, delay), task, null, null);
        }
        return new Scheduled() {
            @Override
            public void cancel() {
                synchronized (ManualRuntime.this) {
                    event.cancelled = true;
                }
            }

            @Override
            public boolean isDue() {
                return now >= event.due;
            }

            @Override
            public String toString() {
                return "timer " + task + " due at +" + Duration.ofNanos(event.due - TICKER_START);
            }
        };
    }

    @Override
    public synchronized void renewalBlocked() {
        if (!growsRenewals) {
            return;
        }
        renewals.limit++;
        renewals.pump();
    }

    @Override
    public synchronized void renewalUnblocked() {
        if (!growsRenewals) {
            return;
        }
        // Never below the base, as a system runtime never runs renewals on fewer threads than it started with.
        renewals.limit = Math.max(renewalThreads, renewals.limit - 1);
    }

    /** How many renewals may run at once now (the base plus one per blocked renewal). */
    public synchronized int renewalLimit() {
        return renewals.limit;
    }

    /** How many tasks of {@code executor} (one of this runtime's) hold a worker, sleeping ones included. */
    public synchronized int busy(Executor executor) {
        return lane(executor).busy;
    }

    /** How many tasks of {@code executor} (one of this runtime's) wait for a worker. */
    public synchronized int waiting(Executor executor) {
        Lane lane = lane(executor);
        return lane.first.size() + lane.waiting.size();
    }

    /** How many events (task starts, timers, resumes) are queued, cancelled ones excluded. */
    public synchronized int pending() {
        int count = 0;
        for (Event event : queue) {
            if (!event.cancelled) {
                count++;
            }
        }
        return count;
    }

    /** How many events have run since this runtime was made. */
    public synchronized long eventsRun() {
        return eventsRun;
    }

    /**
     * Hands every later task failure to {@code handler} (the task's description and what it
     * threw) instead of failing {@code advance}; {@code null} restores the default.
     */
    public synchronized void onTaskFailure(BiConsumer<String, Throwable> handler) {
        this.failureHandler = handler;
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        Carrier self = carrierOf(Thread.currentThread());
        if (self == null) {
            if (driver != null) {
                throw new IllegalStateException(
                        Thread.currentThread() + " is no thread of this runtime: it cannot sleep"
                                + " on simulated time while the simulation runs");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            advance(duration);
            return;
        }
        self.sleep(duration);
    }

    /**
     * In a task, suspends it (as {@link #sleep}) until {@code future} completes or
     * {@code timeout} passes in simulated time; on the test's thread outside any advance,
     * advances until one of them happens, so a test that stops a contender or a Spring
     * context from its own thread runs what the stop waits for. On any other thread while
     * the simulation runs it waits in real time.
     */
    @Override
    public boolean await(Future<?> future, Duration timeout) throws InterruptedException {
        Carrier self = carrierOf(Thread.currentThread());
        if (self == null) {
            boolean driven;
            synchronized (this) {
                driven = driver != null;
            }
            if (driven) {
                return CoordinationRuntime.super.await(future, timeout);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return advanceUntil(future::isDone, timeout);
        }
        Signal completed = new Signal();
        if (future instanceof CompletableFuture<?> completable) {
            completable.whenComplete((value, failure) -> completed.signalAll());
        }
        long deadline = saturatedAdd(now, timeout);
        while (!future.isDone()) {
            long left = deadline - now;
            if (left <= 0) {
                return false;
            }
            // Bounded, for a future that completes on a thread outside the simulation (no signal).
            completed.await(Duration.ofNanos(Math.min(left, AWAIT_RECHECK.toNanos())));
        }
        return true;
    }

    /** How often a task awaiting a future looks again, for one that another thread completes without a signal. */
    private static final Duration AWAIT_RECHECK = Duration.ofMillis(100);

    /** A new {@link Signal} on this runtime. */
    public Signal newSignal() {
        return new Signal();
    }

    /**
     * A wake-up in simulated time, as {@link Object#wait}/{@link Object#notifyAll} without a
     * lock: a task {@link #await awaits} it (suspended, as in {@link ManualRuntime#sleep})
     * until another task {@link #signalAll signals} it or the timeout passes. For models
     * (the in-memory cluster's waiting reads) that must wait for news without polling.
     */
    public final class Signal {
        // Guarded by the runtime.
        private final List<Carrier> waiters = new ArrayList<>();
        private long signals;

        private Signal() {}

        /**
         * Waits until {@link #signalAll} or until {@code timeout} passed. On the test's
         * thread outside any advance, this advances until one of them happens.
         *
         * @return whether it was signalled
         */
        public boolean await(Duration timeout) throws InterruptedException {
            Carrier self = carrierOf(Thread.currentThread());
            if (self != null) {
                return self.suspend(timeout, this);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long before;
            synchronized (ManualRuntime.this) {
                before = signals;
            }
            return advanceUntil(
                    () -> {
                        synchronized (ManualRuntime.this) {
                            return signals != before;
                        }
                    },
                    timeout);
        }

        /** Wakes every task awaiting this signal, at the current instant, in the order they began to wait. */
        public void signalAll() {
            synchronized (ManualRuntime.this) {
                signals++;
                for (Carrier waiter : waiters) {
                    if (waiter.resume != null && !waiter.resume.cancelled && !waiter.signalled) {
                        waiter.resume.cancelled = true;
                        waiter.signalled = true;
                        waiter.resume = enqueue(RESUME, now, null, null, waiter);
                    }
                }
                waiters.clear();
            }
        }
    }

    /** Runs everything due now, including what those tasks submit for now. */
    public void runDue() {
        advance(Duration.ZERO);
    }

    /**
     * Runs every event due up to now + {@code duration} in order, moving the ticker and the
     * wall clock to each one's due time before it runs, and leaves both at now + {@code duration}.
     *
     * @throws AssertionError when a task threw (and no handler was set)
     * @throws IllegalStateException when a task blocked outside the runtime, or events livelocked
     */
    public void advance(Duration duration) {
        run(saturatedAdd(now, duration), null);
    }

    /**
     * Runs events one by one until {@code condition} holds (checked first, and after every
     * event), or until {@code limit} has passed; the clocks stay at the instant the condition
     * came to hold.
     *
     * @return whether the condition holds
     */
    public boolean advanceUntil(BooleanSupplier condition, Duration limit) {
        Objects.requireNonNull(condition, "condition");
        if (condition.getAsBoolean()) {
            return true;
        }
        return run(saturatedAdd(now, limit), condition);
    }

    private boolean run(long until, BooleanSupplier condition) {
        Thread me = Thread.currentThread();
        synchronized (this) {
            if (carrierOf(me) != null) {
                throw new IllegalStateException("a task of the simulation cannot advance it");
            }
            if (driver != null) {
                throw new IllegalStateException(driver + " is advancing this runtime already");
            }
            if (broken) {
                throw new IllegalStateException("this runtime is broken by an earlier hang");
            }
            requireOpen();
            driver = me;
            target = until;
            stop = condition;
            stopped = false;
            fatal = null;
            holder = me;
        }
        boolean interrupted = false;
        try {
            for (; ; ) {
                Event event = next();
                if (event == null) {
                    break;
                }
                handOn(event, null);
                interrupted |= awaitReturn(me);
            }
        } finally {
            synchronized (this) {
                driver = null;
                stop = null;
                if (holder == me) {
                    holder = null;
                }
            }
            if (interrupted) {
                me.interrupt();
            }
        }
        if (fatal != null) {
            throw fatal;
        }
        if (!stopped) {
            moveTo(until);
        }
        throwFailures();
        return stopped || condition != null && condition.getAsBoolean();
    }

    private void throwFailures() {
        AssertionError first;
        synchronized (this) {
            if (failures.isEmpty()) {
                return;
            }
            first = failures.get(0);
            for (int i = 1; i < failures.size(); i++) {
                first.addSuppressed(failures.get(i));
            }
            failures.clear();
        }
        throw first;
    }

    /**
     * The next event to run, with the clocks moved to it, or null when the holder must
     * give the baton back to the advancing thread. Only the baton's holder calls it.
     */
    private Event next() {
        if (fatal != null || broken) {
            return null;
        }
        BooleanSupplier condition = stop;
        if (condition != null) {
            boolean holds;
            try {
                holds = condition.getAsBoolean();
            } catch (RuntimeException | Error e) {
                fatal = new IllegalStateException("the condition of advanceUntil threw", e);
                return null;
            }
            if (holds) {
                stopped = true;
                return null;
            }
        }
        synchronized (this) {
            if (closed) {
                return null;
            }
            seeInterrupts();
            Event event;
            do {
                event = queue.peek();
                if (event == null || event.due > target) {
                    return null;
                }
                queue.poll();
            } while (event.cancelled);
            moveTo(event.due);
            if (event.due != instantOfCount) {
                instantOfCount = event.due;
                eventsThisInstant = 0;
            }
            if (++eventsThisInstant > maxEventsPerInstant) {
                fatal = new IllegalStateException("livelock: more than " + maxEventsPerInstant + " events at +"
                        + Duration.ofNanos(event.due - TICKER_START) + "; the last one was " + event);
                return null;
            }
            eventsRun++;
            progress++;
            if (event.kind == RESUME) {
                sleepers.remove(event.carrier);
                event.carrier.resume = null;
            }
            return event;
        }
    }

    /** Moves a sleeping task whose thread was interrupted to now: its sleep throws there. Holds this. */
    private void seeInterrupts() {
        if (sleepers.isEmpty()) {
            return;
        }
        for (Iterator<Carrier> it = sleepers.iterator(); it.hasNext(); ) {
            Carrier sleeper = it.next();
            if (sleeper.interruptPending || sleeper.thread.isInterrupted()) {
                sleeper.resume.cancelled = true;
                sleeper.interruptedInSleep = true;
                sleeper.resume = enqueue(RESUME, now, null, null, sleeper);
                // Stays among the sleepers until its resume runs, but is seen only once.
                it.remove();
            }
        }
    }

    /** Gives the baton to the thread that runs {@code event}; {@code self} is the carrier handing on, if any. */
    private void handOn(Event event, Carrier self) {
        Carrier runner;
        if (event.kind == RESUME) {
            runner = event.carrier;
        } else {
            synchronized (this) {
                runner = idle.poll();
                if (runner == null) {
                    runner = new Carrier(carriers.size());
                    carriers.add(runner);
                }
            }
            runner.assignment = event;
            if (!runner.thread.isAlive()) {
                holder = runner.thread;
                runner.thread.start();
                return;
            }
        }
        handTo(runner.thread);
    }

    private void handTo(Thread next) {
        holder = next;
        LockSupport.unpark(next);
    }

    /** Waits until the baton is back, watching that the holder makes progress. Returns whether the thread was interrupted. */
    private boolean awaitReturn(Thread me) {
        boolean interrupted = false;
        long seen = progress;
        long since = System.nanoTime();
        while (holder != me) {
            LockSupport.parkNanos(this, Math.min(hangTimeoutNanos, TimeUnit.MILLISECONDS.toNanos(50)));
            if (Thread.interrupted()) {
                interrupted = true;
            }
            if (holder == me) {
                break;
            }
            if (progress != seen) {
                seen = progress;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > hangTimeoutNanos) {
                broken = true;
                Thread stuck = holder;
                IllegalStateException hang = new IllegalStateException("the simulation hangs: " + stuck
                        + " has run one task for more than " + Duration.ofNanos(hangTimeoutNanos) + " of real time,"
                        + " blocked outside the runtime (a lock or future a sleeping task holds, Object.wait, I/O?)"
                        + " at +" + Duration.ofNanos(now - TICKER_START) + "; its stack is this exception's");
                if (stuck != null) {
                    hang.setStackTrace(stuck.getStackTrace());
                }
                fatal = hang;
                return interrupted;
            }
        }
        return interrupted;
    }

    private void moveTo(long instant) {
        long step = instant - now;
        if (step > 0) {
            wallClock.advance(Duration.ofNanos(step));
            now = instant;
        }
    }

    /** Holds this. */
    private Event enqueue(int kind, long due, Runnable task, Lane lane, Carrier carrier) {
        Event event = new Event(kind, due, sequence++, task, lane, carrier);
        queue.add(event);
        return event;
    }

    private void requireOpen() {
        if (closed) {
            throw new RejectedExecutionException("the manual runtime is closed");
        }
    }

    private Carrier carrierOf(Thread thread) {
        return thread instanceof CarrierThread carrier && carrier.runtime() == this ? carrier.carrier : null;
    }

    private Lane lane(Executor executor) {
        if (executor instanceof Lane lane
                && (lane == passes || lane == renewals || lane == callbacks || lane == workers)) {
            return lane;
        }
        throw new IllegalArgumentException(executor + " is no executor of this runtime");
    }

    private synchronized void failed(Event event, Throwable failure) {
        String task = event.toString();
        if (failureHandler != null) {
            try {
                failureHandler.accept(task, failure);
                return;
            } catch (RuntimeException | Error handlerFailed) {
                handlerFailed.addSuppressed(failure);
                failure = handlerFailed;
            }
        }
        failures.add(new AssertionError(
                task + " threw at +" + Duration.ofNanos(now - TICKER_START) + ": " + failure, failure));
    }

    /** Stops the carriers; sleeping tasks end where they sleep. Idempotent. */
    @Override
    public void close() {
        List<Carrier> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = List.copyOf(carriers);
        }
        for (Carrier carrier : all) {
            carrier.thread.interrupt();
        }
    }

    @Override
    public String toString() {
        return "ManualRuntime[+" + Duration.ofNanos(now - TICKER_START) + "]";
    }

    private static long saturatedAdd(long instant, Duration delay) {
        if (delay.isNegative() || delay.isZero()) {
            return instant;
        }
        long nanos;
        try {
            nanos = delay.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
        long sum = instant + nanos;
        return sum < instant ? Long.MAX_VALUE : sum;
    }

    /** One of the runtime's executors: a worker limit and a FIFO queue of tasks waiting for a worker. */
    private final class Lane implements Executor {
        final String name;
        int limit;
        int busy;
        final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
        // Tasks handed in ahead of those waiting (urgent passes), in their own order.
        final ArrayDeque<Runnable> first = new ArrayDeque<>();

        Lane(String name, int limit) {
            this.name = name;
            this.limit = limit;
        }

        @Override
        public void execute(Runnable task) {
            handIn(task, waiting);
        }

        void executeFirst(Runnable task) {
            handIn(task, first);
        }

        private void handIn(Runnable task, ArrayDeque<Runnable> queue) {
            Objects.requireNonNull(task, "task");
            synchronized (ManualRuntime.this) {
                requireOpen();
                queue.add(task);
                pump();
            }
        }

        /** Starts waiting tasks, those handed in first before the others, while workers are free. Holds the runtime. */
        void pump() {
            while (busy < limit && !(first.isEmpty() && waiting.isEmpty())) {
                busy++;
                enqueue(START, now, first.isEmpty() ? waiting.poll() : first.poll(), this, null);
            }
        }

        void release() {
            synchronized (ManualRuntime.this) {
                busy--;
                pump();
            }
        }

        @Override
        public String toString() {
            return "ManualRuntime." + name + "()";
        }
    }

    /** A task start, a timer, or a sleeping task's resume. Ordered by due time, then by submission. */
    private static final class Event implements Comparable<Event> {
        final int kind;
        final long due;
        final long seq;
        final Runnable task;
        final Lane lane;
        final Carrier carrier;
        boolean cancelled;

        Event(int kind, long due, long seq, Runnable task, Lane lane, Carrier carrier) {
            this.kind = kind;
            this.due = due;
            this.seq = seq;
            this.task = task;
            this.lane = lane;
            this.carrier = carrier;
        }

        @Override
        public int compareTo(Event other) {
            int byDue = Long.compare(due, other.due);
            return byDue != 0 ? byDue : Long.compare(seq, other.seq);
        }

        @Override
        public String toString() {
            return switch (kind) {
                case START -> "task " + task + " on " + lane;
                case TIMER -> "timer task " + task;
                default -> "the resume of " + carrier.thread.getName();
            };
        }
    }

    private static final class CarrierThread extends Thread {
        final Carrier carrier;

        CarrierThread(Carrier carrier, String name) {
            super(carrier, name);
            this.carrier = carrier;
            setDaemon(true);
        }

        ManualRuntime runtime() {
            return carrier.runtime();
        }
    }

    /** Thrown into a task that sleeps when the runtime closes: the task ends there. */
    private static final class Closed extends Error {
        private static final long serialVersionUID = 1L;

        Closed() {
            super("the manual runtime closed while this task slept", null, false, false);
        }
    }

    /** A pooled thread that runs tasks when it holds the baton. */
    private final class Carrier implements Runnable {
        final CarrierThread thread;
        /** The event to run, set by the holder that hands this carrier the baton. */
        Event assignment;
        /** Its resume event while it sleeps. Guarded by the runtime. */
        Event resume;
        /** Its resume was moved to now because its thread was interrupted. Guarded by the runtime. */
        boolean interruptedInSleep;
        /** Its resume was moved to now by a {@link Signal}. Guarded by the runtime. */
        boolean signalled;
        /** Its thread was interrupted while it waited for the baton (the flag is cleared so park waits again). */
        volatile boolean interruptPending;

        Carrier(int index) {
            this.thread = new CarrierThread(this, "manual-runtime-carrier-" + index);
        }

        ManualRuntime runtime() {
            return ManualRuntime.this;
        }

        @Override
        public void run() {
            try {
                for (; ; ) {
                    awaitBaton(false);
                    Event event = assignment;
                    assignment = null;
                    for (; ; ) {
                        runTask(event);
                        event = next();
                        if (event == null || event.kind == RESUME) {
                            break;
                        }
                    }
                    // Back in the pool before the baton goes on: the next holder may take it at once.
                    synchronized (ManualRuntime.this) {
                        idle.push(this);
                    }
                    if (event == null) {
                        handTo(driver);
                    } else {
                        handOn(event, this);
                    }
                }
            } catch (Closed closing) {
                // The runtime is closed: the thread ends.
            }
        }

        private void runTask(Event event) {
            // Interrupts meant for an earlier task do not reach this one, as in a thread pool.
            Thread.interrupted();
            interruptPending = false;
            try {
                event.task.run();
            } catch (Closed closing) {
                throw closing;
            } catch (Throwable failure) {
                failed(event, failure);
            } finally {
                if (event.lane != null) {
                    event.lane.release();
                }
            }
        }

        void sleep(Duration duration) throws InterruptedException {
            suspend(duration, null);
        }

        /** Suspends this task until {@code duration} passed or {@code signal} (if any) was signalled; returns whether it was. */
        boolean suspend(Duration duration, Signal signal) throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted before sleeping on " + ManualRuntime.this);
            }
            if (duration.isNegative() || duration.isZero()) {
                return false;
            }
            synchronized (ManualRuntime.this) {
                interruptedInSleep = false;
                signalled = false;
                resume = enqueue(RESUME, saturatedAdd(now, duration), null, null, this);
                sleepers.add(this);
                if (signal != null) {
                    signal.waiters.add(this);
                }
            }
            // Hand the baton on; the event that comes up may be this carrier's own resume already.
            Event event = next();
            if (event == null) {
                handTo(driver);
                awaitBaton(true);
            } else if (event.carrier != this) {
                handOn(event, this);
                awaitBaton(true);
            }
            boolean byInterrupt;
            boolean bySignal;
            synchronized (ManualRuntime.this) {
                byInterrupt = interruptedInSleep;
                interruptedInSleep = false;
                bySignal = signalled;
                signalled = false;
                if (signal != null) {
                    signal.waiters.remove(this);
                }
            }
            boolean pending = interruptPending;
            interruptPending = false;
            if (byInterrupt) {
                Thread.interrupted();
                throw new InterruptedException("interrupted while sleeping on " + ManualRuntime.this);
            }
            if (pending) {
                // Interrupted after its time had come: it wakes as usual, with the flag set, as Thread.sleep would.
                thread.interrupt();
            }
            return bySignal;
        }

        /** Parks until this carrier holds the baton. */
        private void awaitBaton(boolean sleeping) {
            while (holder != thread) {
                if (closed) {
                    throw new Closed();
                }
                LockSupport.park(ManualRuntime.this);
                if (thread.isInterrupted()) {
                    // Recorded before the flag is cleared, so the holder's scan sees one or the other.
                    if (sleeping) {
                        interruptPending = true;
                    }
                    Thread.interrupted();
                }
            }
        }
    }

    /** Builds a {@link ManualRuntime}. */
    public static final class Builder {
        private ManualClock clock = new ManualClock();
        private int passThreads = SystemCoordinationRuntime.DEFAULT_PASS_THREADS;
        private int renewalThreads = SystemCoordinationRuntime.DEFAULT_RENEWAL_THREADS;
        private Duration hangTimeout = DEFAULT_HANG_TIMEOUT;
        private long maxEventsPerInstant = DEFAULT_MAX_EVENTS_PER_INSTANT;
        private boolean growsRenewals = true;

        Builder() {}

        /** The wall clock; a new {@link ManualClock} by default. */
        public Builder clock(ManualClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** How many passes run at once (16 by default). */
        public Builder passThreads(int threads) {
            this.passThreads = positive(threads, "pass threads");
            return this;
        }

        /** How many renewals run at once, not counting blocked ones (16 by default). */
        public Builder renewalThreads(int threads) {
            this.renewalThreads = positive(threads, "renewal threads");
            return this;
        }

        /**
         * Keeps the renewals at their base count even while renewals are blocked (a thread
         * pool that does not grow): shows what {@link #renewalBlocked()} buys.
         */
        public Builder fixedRenewalThreads() {
            this.growsRenewals = false;
            return this;
        }

        /** How long, in real time, one task may run or block before {@code advance} fails (10 s by default). */
        public Builder hangTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("a hang timeout must be positive, not " + timeout);
            }
            this.hangTimeout = timeout;
            return this;
        }

        /** How many events may run at one instant before {@code advance} calls it a livelock (1 000 000 by default). */
        public Builder maxEventsPerInstant(long events) {
            if (events < 1) {
                throw new IllegalArgumentException("at least one event per instant, not " + events);
            }
            this.maxEventsPerInstant = events;
            return this;
        }

        public ManualRuntime build() {
            return new ManualRuntime(this);
        }

        private static int positive(int value, String what) {
            if (value < 1) {
                throw new IllegalArgumentException("a runtime needs at least one of its " + what + ", not " + value);
            }
            return value;
        }
    }
}
