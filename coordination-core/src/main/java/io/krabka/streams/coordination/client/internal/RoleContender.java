package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The machinery of one {@link Contender}: its state, the only place that changes it
 * ({@link #transition}), and the parts that act on it (the pass loop, the holder's and
 * standby's passes, the handover, the ordered callbacks). The public contender delegates
 * every call here; the contract of each is on it.
 */
public final class RoleContender {

    /** The logger of a contender's lines: operators filter, and tests count, by this name. */
    public static final String LOGGER = "io.krabka.streams.coordination.client.Contender";

    private static final Logger log = LoggerFactory.getLogger(LOGGER);

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
    private volatile boolean stopping;
    private final FailureReport failures;
    private final TenureEnd ending;
    // What each pass does, when and where it runs; its bookkeeping runs on the lane, as every state change does.
    private final PassLoop loop;
    // Where this contender stands; changed only under this, by ContenderState's transitions.
    private volatile ContenderState state = ContenderState.STANDBY;
    // The one writer of that state and of the pass loop's bookkeeping.
    private final RoleLane lane;
    private final Handover handover;

    /**
     * A contender whose listener runs on {@code callbacks}, or on the shared callback
     * threads when that is null. The callbacks of one contender run one at a time and in
     * order either way.
     */
    public RoleContender(
            Engine client, Role role, MemberId member, Contender.Listener listener, @Nullable Executor callbacks) {
        this.client = Objects.requireNonNull(client, "client");
        this.runtime = client.runtime();
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        Objects.requireNonNull(listener, "listener");
        this.callbacks = new OrderedCallbacks(role, callbacks != null ? callbacks : runtime.callbacks(), runtime);
        this.failures = new FailureReport(role, member, runtime, client::location, this::isRunning);
        this.lane = new RoleLane(failure -> {
            // Contained: an event that throws (a transition in a state it does not apply to) stops nothing else.
            log.error("An event of the contender of role {} failed", role, failure);
            failures.show(new CoordinationException(
                    "an event of the contender of role " + role + " failed (" + failure + ")", failure));
        });
        ReadFreshness freshness = new ReadFreshness(runtime, role, () -> client.quietSinceRead(role));
        this.ending = new TenureEnd(
                runtime,
                role,
                member,
                listener,
                this.callbacks,
                failures,
                (held, rejoinAtNanos, tell) -> lane.run(() -> {
                    transition(now -> now.ended(held, rejoinAtNanos));
                    tell.run();
                }));
        HolderPass holder = new HolderPass(
                client,
                client,
                role,
                member,
                listener,
                this.callbacks,
                failures,
                freshness,
                ending,
                new HolderPass.Owner() {
                    @Override
                    public void granted(Tenure held, Runnable then) {
                        lane.run(() -> {
                            transition(now -> now.granted(held));
                            then.run();
                        });
                    }

                    @Override
                    public void whileHolding(Tenure held, Runnable action) {
                        lane.run(() -> {
                            if (isRunning() && !held.finished.get() && state.tenure() == held) {
                                action.run();
                            }
                        });
                    }

                    @Override
                    public void passNow() {
                        loop.schedule(Duration.ZERO);
                    }
                });
        this.handover = new Handover(
                client.balancer(),
                client::awaitRoleState,
                runtime,
                role,
                member,
                () -> state.tenure(),
                ending,
                () -> RoleContender.this.loop.schedule(Duration.ZERO),
                holder::renewalBlocked);
        this.loop = new PassLoop(
                this,
                client,
                client.balancer(),
                client,
                failures,
                freshness,
                ending,
                holder,
                new StandbyPass(
                        client::attempt,
                        runtime.clock(),
                        role,
                        member,
                        failures,
                        freshness,
                        holder,
                        () -> state,
                        this::transition),
                handover);
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

    /** As {@link Contender#problem}. */
    public Optional<CoordinationException> problem() {
        return Optional.<CoordinationException>ofNullable(failures.problem())
                .or(() -> client.configurationProblem(role));
    }

    /** As {@link Contender#start}. */
    public void start() {
        client.startContending(role, this);
        client.using(role);
        try {
            loop.start();
        } catch (RuntimeException e) {
            client.doneWith(role, false);
            if (!(e instanceof IllegalStateException) || !loop.started()) {
                client.stoppedContending(role, this);
            }
            throw e;
        }
    }

    /** As {@link Contender#release}. */
    public boolean release() {
        Tenure held = state.tenure();
        return held != null && ending.release(held);
    }

    /** As {@link Contender#handOver}. */
    public HandoverResult handOver(MemberId to) {
        return handover.to(Objects.requireNonNull(to, "to"));
    }

    /** As {@link Contender#relinquish}. */
    public void relinquish(Leadership leadership, @Nullable Throwable failure) {
        Tenure held = state.tenure();
        if (held != null && held.leadership == leadership) {
            ending.relinquish(held, failure);
        }
    }

    /** As {@link Contender#awaitListener}. */
    public boolean awaitListener(Duration timeout) {
        if (callbacks.inCallback()) {
            // Called from this contender's own listener (a close() in granted()): the callbacks
            // issued after this one cannot run before it returns.
            return false;
        }
        long deadline = runtime.nanoTime() + timeout.toNanos();
        // A grant or an end issues its listener call from a lane event, which may still wait
        // in the queue behind another thread's event: first let every event posted so far run.
        CompletableFuture<Void> drained = new CompletableFuture<>();
        lane.run(() -> drained.complete(null));
        try {
            if (!runtime.await(drained, timeout)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return callbacks.await(Duration.ofNanos(Math.max(0, deadline - runtime.nanoTime())));
    }

    /** As {@link Contender#stop}. */
    public void stop() {
        stopping = true;
        loop.stop();
    }

    /** Whether {@link #stop} was called: another contender of the role may start on the client. */
    boolean stopping() {
        return stopping;
    }

    /** As {@link Contender#awaitStopped}. */
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
     * as an event on the contender's lane (the one its pass loop's bookkeeping runs on), so
     * no two changes ever run at once and none holds a lock. From a thread off the lane it
     * runs now when the lane is idle, and otherwise right after the events before it.
     */
    public void transition(UnaryOperator<ContenderState> event) {
        lane.run(() -> {
            boolean before = state instanceof ContenderState.Stopped;
            state = event.apply(state);
            if (!before && state instanceof ContenderState.Stopped) {
                // Released and left: the client may forget the role, unless something else of it uses it.
                client.stoppedContending(role, this);
                client.doneWith(role, true);
            }
        });
    }

    /** The lane every change of this contender runs on. */
    RoleLane lane() {
        return lane;
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
