package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.LeadershipStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The cluster's view of this member's roles, for the endpoint: the last one read and at
 * most one read under way. {@link #now()} never waits for the cluster: it answers with
 * what is there, and when the last read began {@code maxAge} or more ago and none is under
 * way it starts one on {@code executor}. So however many requests come, one read at a
 * time runs and a new one starts at most once per {@code maxAge}; a read that has not
 * returned within {@code budget} is reported as a problem, and no other starts until it
 * returns (the transport's operation timeout bounds it). A view that nothing asked for during
 * more than twice {@code maxAge} plus {@code budget} after it was read is reported as a
 * problem too, until the read the next request starts returns.
 */
final class ClusterView {

    /**
     * A read that returned.
     *
     * @param asOf when it began on the wall clock: everything it shows was so at or after that
     * @param startedNanos when it began on the ticker, for its age
     * @param tookNanos how long it took
     */
    record Snapshot(Map<Role, LeadershipStatus> statuses, Instant asOf, long startedNanos, long tookNanos) {

        /** When it returned, on the ticker. */
        long endedNanos() {
            return startedNanos + tookNanos;
        }
    }

    /**
     * What a request sees.
     *
     * @param snapshot the last read that returned, if any
     * @param reading whether a read is under way
     * @param problem why the view may be out of date: the last read failed, or the one under
     *     way has not returned within the budget; null otherwise
     * @param nowNanos when it was seen, on the ticker
     */
    record Seen(
            @Nullable Snapshot snapshot,
            boolean reading,
            @Nullable String problem,
            long nowNanos) {

        @Nullable
        Long ageMillis() {
            return snapshot == null
                    ? null
                    : Math.max(
                            0,
                            Duration.ofNanos(nowNanos - snapshot.startedNanos()).toMillis());
        }
    }

    /**
     * Everything at once, so one compare-and-set decides whether a request starts a read.
     *
     * @param failure why the last read failed; null once one returned
     * @param startedNanos when the newest read began (under way or not); meaningless before the first
     */
    private record State(
            @Nullable Snapshot snapshot,
            @Nullable String failure,
            boolean reading,
            boolean everStarted,
            long startedNanos) {}

    private final Supplier<Map<Role, LeadershipStatus>> read;
    private final Executor executor;
    private final LongSupplier ticker;
    private final InstantSource clock;
    private final long maxAgeNanos;
    private final Duration budget;
    private final AtomicReference<State> state = new AtomicReference<>(new State(null, null, false, false, 0));

    ClusterView(
            Supplier<Map<Role, LeadershipStatus>> read,
            Executor executor,
            LongSupplier ticker,
            InstantSource clock,
            Duration maxAge,
            Duration budget) {
        this.read = read;
        this.executor = executor;
        this.ticker = ticker;
        this.clock = clock;
        this.maxAgeNanos = maxAge.toNanos();
        this.budget = budget;
    }

    /** The view as it is, after starting a read if it is due; never waits for one. */
    Seen now() {
        long now = ticker.getAsLong();
        State seen = state.get();
        if (!seen.reading() && (!seen.everStarted() || now - seen.startedNanos() >= maxAgeNanos)) {
            State reading = new State(seen.snapshot(), seen.failure(), true, true, now);
            if (state.compareAndSet(seen, reading)) {
                start(now);
            }
            seen = state.get();
        }
        String problem = seen.failure();
        if (seen.reading() && now - seen.startedNanos() >= budget.toNanos()) {
            problem = "the cluster did not answer within " + budget.toSeconds() + " s";
        } else if (problem == null
                && seen.snapshot() != null
                && seen.startedNanos() - seen.snapshot().endedNanos() > quietNanos()) {
            // Requests that come at least every maxAge start a read at most maxAge plus their
            // interval after the one before returned, however long that read took. A longer gap
            // is a quiet spell, which the request that ended it finds: a failover may have happened
            // meanwhile, so the view is not the whole truth until the read that request started
            // returns. (A slow read is not one: a read under way past the budget says so above.)
            problem = "the cluster's view is "
                    + Duration.ofNanos(now - seen.snapshot().startedNanos()).toMillis()
                    + " ms old (nothing asked for it lately); a new read is under way: ask again shortly";
        }
        return new Seen(seen.snapshot(), seen.reading(), problem, now);
    }

    /** The gap between a read's return and the next read's start that only a spell without requests leaves. */
    private long quietNanos() {
        return 2 * maxAgeNanos + budget.toNanos();
    }

    private void start(long startedNanos) {
        Instant asOf = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        try {
            executor.execute(() -> {
                try {
                    Map<Role, LeadershipStatus> statuses = read.get();
                    finish(new Snapshot(statuses, asOf, startedNanos, ticker.getAsLong() - startedNanos), null);
                } catch (Throwable failure) {
                    finish(null, failure.getMessage() != null ? failure.getMessage() : failure.toString());
                }
            });
        } catch (RejectedExecutionException closed) {
            finish(null, "the endpoint is closed");
        }
    }

    private void finish(@Nullable Snapshot snapshot, @Nullable String failure) {
        state.updateAndGet(current -> new State(
                snapshot != null ? snapshot : current.snapshot(), failure, false, true, current.startedNanos()));
    }
}
