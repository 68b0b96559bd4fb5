package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;

/**
 * The machinery of one {@link Contender}: its state, the only place that changes it
 * ({@link #transition}), and the parts that act on it (the pass loop, the holder's and
 * standby's passes, the handover, the ordered callbacks). The public contender delegates
 * every call here; the contract of each is on it.
 */
public final class RoleContender {

    /** The logger of a contender's lines: operators filter, and tests count, by this name. */
    public static final String LOGGER = "io.krabka.streams.coordination.client.Contender";

    /** The shortest wait between passes, so a lost race never becomes a busy loop. */
    public static final Duration MIN_WAIT = Duration.ofMillis(20);
    /** The pause after a failed operation, and before rejoining after the work failed. */
    public static final Duration ERROR_BACKOFF = Duration.ofSeconds(1);
    /** The pause after the cluster's ACLs refused this member: that does not heal by itself. */
    public static final Duration DENIAL_BACKOFF = Duration.ofSeconds(10);
    /** A cluster that keeps failing is reported at WARN at most this often per role. */
    public static final Duration WARN_INTERVAL = Duration.ofMinutes(1);
    /** How long {@link #close()} waits for the release and the listener, by default. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final Engine client;
    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId member;
    private final OrderedCallbacks callbacks;
    private final FailureReport failures;
    private final TenureEnd ending;
    // What each pass does, when and where it runs; it takes this contender's lock, the one of its state.
    private final PassLoop loop;
    // Where this contender stands; changed only under this, by ContenderState's transitions.
    private volatile ContenderState state = ContenderState.STANDBY;
    private final Handover handover;

    /**
     * A contender whose listener runs on {@code callbacks}, or on the shared callback
     * threads when that is null. The callbacks of one contender run one at a time and in
     * order either way.
     */
    public RoleContender(Engine client, Role role, MemberId member, Contender.Listener listener, Executor callbacks) {
        this.client = Objects.requireNonNull(client, "client");
        this.runtime = client.runtime();
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        Objects.requireNonNull(listener, "listener");
        this.callbacks = new OrderedCallbacks(role, callbacks != null ? callbacks : runtime.callbacks(), runtime);
        this.failures = new FailureReport(role, member, runtime, client::location, this::isRunning);
        ReadFreshness freshness = new ReadFreshness(runtime, role, () -> client.quietSinceRead(role));
        this.ending = new TenureEnd(runtime, role, member, listener, this.callbacks, failures,
                (held, rejoinAtNanos) -> transition(now -> now.ended(held, rejoinAtNanos)));
        HolderPass holder = new HolderPass(client, role, member, listener, this.callbacks, failures, freshness, ending,
                new HolderPass.Owner() {
                    @Override
                    public void granted(Tenure held) {
                        transition(now -> now.granted(held));
                    }

                    @Override
                    public void whileHolding(Tenure held, Runnable action) {
                        synchronized (RoleContender.this) {
                            if (isRunning() && !held.finished.get() && state.tenure() == held) {
                                action.run();
                            }
                        }
                    }

                    @Override
                    public void passNow() {
                        loop.schedule(Duration.ZERO);
                    }
                });
        this.handover = new Handover(client, role, member, () -> state.tenure(), ending,
                () -> RoleContender.this.loop.schedule(Duration.ZERO), holder::renewalBlocked);
        this.loop = new PassLoop(this, client, failures, freshness, ending, holder,
                new StandbyPass(client::attempt, runtime.clock(), role, member, failures, freshness, holder,
                        () -> state, this::transition), handover);
    }

    public Role role() {
        return role;
    }

    public MemberId member() {
        return member;
    }

    /** The time and threads it runs on: its client's. */
    public CoordinationRuntime runtime() {
        return runtime;
    }

    /** Whether {@link #start()} was called and {@link #close()} not yet. */
    public boolean isRunning() {
        return loop.started() && state.contending();
    }

    /** The leadership this member holds now, if any: granted, and not ended. */
    public Optional<Leadership> leadership() {
        Tenure held = state.tenure();
        return held == null || held.finished.get() ? Optional.empty() : Optional.of(held.leadership);
    }

    /**
     * The failure of this contender's last cluster operation, while operations fail:
     * a {@link CoordinationAuthorizationException} when the ACLs refuse this member the
     * role, a {@link io.krabka.streams.coordination.CoordinationTimeoutException} when the
     * cluster does not answer. Empty once an operation succeeds again. Between failures, a
     * standing misconfiguration: members that disagree on the lease, members of the role
     * on another coordination topic (someone else moves the role's epoch), or a topic
     * altered to break the guarantees
     * ({@link io.krabka.streams.coordination.transport.CoordinationTransport#topicProblem}).
     */
    public Optional<CoordinationException> problem() {
        return Optional.<CoordinationException>ofNullable(failures.problem())
                .or(() -> client.configurationProblem(role));
    }

    /**
     * Starts contending: passes run on the shared pass threads, woken early when a record
     * of the role is committed.
     */
    public void start() {
        client.using(role);
        try {
            loop.start();
        } catch (RuntimeException e) {
            client.doneWith(role, false);
            throw e;
        }
    }

    /**
     * Releases the role if this member holds it: no new guarded write starts, the one in
     * flight completes, a lease tombstone lets the next standby take over at once, and
     * the listener hears {@link LeadershipEndCause#RELEASED}. The member keeps contending,
     * from the tail of the roster.
     *
     * @return whether a held leadership was released
     */
    public boolean release() {
        Tenure held = state.tenure();
        return held != null && ending.finish(held, LeadershipEndCause.RELEASED, null);
    }

    /**
     * Hands the held role to {@code to}, a live standby of it: makes it next in line, then
     * releases ({@link Handover}). Blocks up to about 5 s for {@code to} to show it is
     * alive, up to 10 s more for this member's pass to begin the release, then while the
     * release writes. A renewal of the role blocked on the cluster holds that pass up: the
     * member then keeps the role and this answers {@link HandoverResult#BUSY}, at once if
     * the renewal was blocked already (leaving {@code to} where it stood in line).
     */
    public HandoverResult handOver(MemberId to) {
        return handover.to(Objects.requireNonNull(to, "to"));
    }

    /**
     * Gives {@code leadership} up because the work it was taken for ended: released
     * with a tombstone when {@code failure} is null (the listener hears RELEASED), ended
     * as FAILED otherwise. A leadership that already ended is reported as it ended; one
     * that is not this contender's current leadership is left alone.
     *
     * @param failure what the work threw, or null when it returned
     */
    public void relinquish(Leadership leadership, Throwable failure) {
        Tenure held = state.tenure();
        if (held != null && held.leadership == leadership) {
            ending.relinquish(held, failure);
        }
    }

    /**
     * Waits until the listener ran every callback issued so far.
     *
     * @return whether it did within {@code timeout}
     */
    public boolean awaitListener(Duration timeout) {
        return callbacks.await(timeout);
    }

    /**
     * Asks the contender to stop, without waiting: it releases a held role, leaves the
     * roster, and stops passing. {@link #awaitStopped} waits for that; stopping many
     * contenders this way takes as long as the slowest, not their sum.
     */
    public void stop() {
        loop.stop();
    }

    /**
     * Waits up to {@code timeout} for a stopped contender to release, leave the roster and
     * tell the listener. Past it, a held leadership is abandoned without a tombstone (the
     * cluster did not answer: standbys wait for its deadline) and the thread is left to end
     * with the transport.
     *
     * @return whether everything finished within {@code timeout}
     */
    public boolean awaitStopped(Duration timeout) {
        long deadline = runtime.nanoTime() + timeout.toNanos();
        boolean done = loop.awaitStopped(deadline);
        if (!done) {
            Tenure held = state.tenure();
            if (held != null) {
                ending.abandon(held, timeout);
            }
            loop.interruptPass();
        }
        boolean told = awaitListener(Duration.ofNanos(Math.max(0, deadline - runtime.nanoTime())));
        return done && told;
    }

    /** Stops, releasing a held role, and waits up to 30 s for that. */
    public void close() {
        stop();
        awaitStopped(DEFAULT_CLOSE_TIMEOUT);
    }

    /**
     * Applies {@code event} to the state: every change of {@link #state} goes through here,
     * atomically, under this contender's lock (the one lock its pass loop takes as well).
     */
    public void transition(UnaryOperator<ContenderState> event) {
        boolean stoppedNow;
        synchronized (this) {
            boolean before = state instanceof ContenderState.Stopped;
            state = event.apply(state);
            stoppedNow = !before && state instanceof ContenderState.Stopped;
        }
        if (stoppedNow) {
            // Released and left: the client may forget the role, unless something else of it uses it.
            client.doneWith(role, true);
        }
    }

    /** Where this contender stands now. */
    public ContenderState state() {
        return state;
    }

    /**
     * One pass of the state machine at the clock's current instant, never waiting for
     * the topic: the pass threads call it when the timer or news says, a simulation calls
     * it directly.
     *
     * @return how long to wait for news before the next pass
     */
    public Duration step() {
        return loop.step(true);
    }

    public static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    public static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    @Override
    public String toString() {
        return "Contender[" + member + " for " + role + (leadership().isPresent() ? ", holding" : "") + "]";
    }
}
