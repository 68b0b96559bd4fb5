package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Contends for one role on behalf of one member for as long as it runs: registers, waits
 * for its turn, challenges, holds and renews, steps down, rejoins after every end, and
 * releases on {@link #close()}. The counterpart of Curator's {@code LeaderSelector}; the
 * succession rules decide every move, this class only carries them out.
 *
 * <pre>{@code
 * Contender contender = new Contender(client, Role.of("controller"), MemberId.of("node-1"),
 *         new Contender.Listener() {
 *             public void granted(Leadership leadership) { dispatcher.start(leadership); }
 *             public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) { dispatcher.stop(); }
 *         });
 * contender.start();
 * ...
 * contender.close();   // stops, releases the role with a tombstone, leaves the roster
 * }</pre>
 *
 * <h2>Threads and callbacks</h2>
 * No thread per contender: everything runs on the client's {@link CoordinationRuntime}.
 * The passes of its contenders run on the runtime's few pass threads, each when its timer
 * says (the next renewal, the instant to challenge, at most a second away) or at once
 * when the transport reports a committed record of the role (one watcher thread and
 * consumer per transport), so a release or a newer lease is acted on as soon as it is
 * committed. A holder's passes (its renewals) run apart, on the runtime's renewal threads,
 * and never read the topic there; a renewal blocked longer than {@link #STUCK_RENEWAL} is
 * reported to the runtime, which runs the next role's renewal beside it: a stuck commit or
 * a slow read holds up no other role's renewal. Listener callbacks run one at a time per
 * contender, in order, on the runtime's callback threads: a listener that blocks never
 * delays a renewal. A timer at each lease's deadline ends a leadership whose renewal still
 * blocks on an unresponsive cluster, so {@link Listener#ended} comes at the deadline, not
 * when the blocked call returns.
 *
 * <h2>The work ends, the leadership ends</h2>
 * A leadership never outlives the reason it was taken for. When the role's work is
 * done or failed, its owner calls {@link #relinquish}; when {@link Listener#granted}
 * throws, the contender does it itself. Either way the leadership is released with a
 * lease tombstone (a standby takes over at once), the listener hears
 * {@link LeadershipEndCause#RELEASED} (the work returned) or
 * {@link LeadershipEndCause#FAILED} (it threw), and the member contends again from the
 * tail of the roster after a one-second pause (so work that ends at once is not granted
 * again at once, over and over). Like Curator's {@code LeaderSelector}, returning from
 * the work gives the leadership up.
 *
 * <p>Thread-safe.
 */
public final class Contender implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Contender.class);

    /** The longest a holder waits on the topic before it looks at its lease again. */
    static final Duration MAX_HOLD_WAIT = Duration.ofSeconds(1);
    /** The longest a standby waits on the topic in one pass. */
    static final Duration MAX_STANDBY_WAIT = Duration.ofSeconds(1);
    /** The shortest wait between passes, so a lost race never becomes a busy loop. */
    static final Duration MIN_WAIT = Duration.ofMillis(20);
    /** The pause after a failed operation, and before rejoining after the work failed. */
    static final Duration ERROR_BACKOFF = Duration.ofSeconds(1);
    /** The pause after the cluster's ACLs refused this member: that does not heal by itself. */
    static final Duration DENIAL_BACKOFF = Duration.ofSeconds(10);
    /** How long a holder waits after a failed renewal before the next attempt. */
    static final Duration RENEW_RETRY = Duration.ofMillis(250);
    /** A cluster that keeps failing is reported at WARN at most this often per role. */
    static final Duration WARN_INTERVAL = Duration.ofMinutes(1);
    /** How long {@link #close()} waits for the release and the listener, by default. */
    static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * What a contender tells its owner. Callbacks of one contender run one at a time and
     * in order, never on a pass thread: a grant is always reported before its end.
     */
    public interface Listener {

        /**
         * The role was granted. Start the role's work here (without blocking for long:
         * the next end waits for this to return). Throwing ends the leadership as
         * {@link LeadershipEndCause#FAILED}.
         */
        void granted(Leadership leadership) throws Exception;

        /**
         * The leadership ended; stop the role's work. Its guarded writes already fail
         * with {@link FencedException}.
         *
         * @param leadership the leadership that ended; its token is the last one it had
         * @param cause how it ended
         * @param failure what ended it, when something failed or was refused; null otherwise
         */
        void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure);

        /** A renewal succeeded after {@code took}. Runs on a pass thread: must not block. */
        default void renewed(Leadership leadership, Duration took) {
        }

        /** A renewal failed without ending the leadership. Runs on a pass thread: must not block. */
        default void renewFailed(Leadership leadership, CoordinationException failure) {
        }
    }

    /** A renewal that has not returned after this long is blocked: the runtime may run other roles' renewals beside it. */
    static final Duration STUCK_RENEWAL = Duration.ofMillis(500);
    /**
     * With news from the transport, a standby's pass reads the topic only after news for
     * its role, when it must decide on time (a challenge), or at least this often in case
     * a wake-up was missed; a holder's only after another member's lease or a tombstone (a
     * missed one costs nothing but time: its next renewal is fenced). A member with many
     * roles would otherwise read every role every second through its one consumer, and its
     * holders would wait for those reads.
     */
    static final Duration QUIET_READ = Duration.ofSeconds(5);
    /** A holder's fallback read: a missed wake-up, and the topic's identity check, which rides on reads. */
    static final Duration QUIET_HOLD_READ = Duration.ofSeconds(10);
    private final CoordinationClient client;
    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId member;
    private final Listener listener;
    private final OrderedCallbacks callbacks;
    private final FailureReport failures;
    private final HolderPass holder;
    // Where this contender stands; changed only under this, by ContenderState's transitions.
    private volatile ContenderState state = ContenderState.STANDBY;
    // The pass machinery, guarded by this: whether start() ran, the next pass's timer,
    // whether a pass runs now and whether news came during it, and the news subscription.
    private volatile boolean started;
    private CoordinationRuntime.Scheduled nextPass;
    private boolean inPass;
    private boolean newsDuringPass;
    private AutoCloseable news;
    private volatile Thread passThread;
    // Whether a pass must read the topic, and what the last read decided.
    private final ReadFreshness freshness;
    private Decision lastDecision;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    /** A contender whose listener runs on the shared callback threads, one callback at a time. */
    public Contender(CoordinationClient client, Role role, MemberId member, Listener listener) {
        this(client, role, member, listener, null);
    }

    /**
     * A contender whose listener runs on {@code callbacks}, or on the shared callback
     * threads when that is null. The callbacks of one contender run one at a time and in
     * order either way.
     */
    public Contender(CoordinationClient client, Role role, MemberId member, Listener listener, Executor callbacks) {
        this.client = Objects.requireNonNull(client, "client");
        this.runtime = client.runtime();
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.callbacks = new OrderedCallbacks(role, callbacks != null ? callbacks : runtime.callbacks(), runtime);
        this.failures = new FailureReport(role, member, runtime, client::location, this::isRunning);
        this.freshness = new ReadFreshness(client, role);
        this.holder = new HolderPass(client, role, member, this.listener, this.callbacks, failures, freshness,
                new HolderPass.Owner() {
                    @Override
                    public void ended(Tenure held, long rejoinAtNanos) {
                        transition(now -> now.ended(held, rejoinAtNanos));
                    }

                    @Override
                    public void granted(Tenure held) {
                        transition(now -> now.granted(held));
                    }

                    @Override
                    public void whileHolding(Tenure held, Runnable action) {
                        synchronized (Contender.this) {
                            if (isRunning() && !held.finished.get() && state.tenure() == held) {
                                action.run();
                            }
                        }
                    }

                    @Override
                    public void passNow() {
                        schedule(Duration.ZERO);
                    }
                });
    }

    /**
     * A contender that runs {@code work} itself for each leadership, on the client
     * runtime's workers, on a thread named {@code krabka-work-<role>} while it runs
     * (Curator's {@code takeLeadership}): the work's return releases the role, its
     * exception ends the leadership as FAILED, and the leadership's end interrupts it (the
     * end waits up to 30 s for it to return).
     */
    public static Contender running(CoordinationClient client, Role role, MemberId member, LeaderWork work) {
        return running(client, role, member, work, null);
    }

    /**
     * The same, also telling {@code events} of each grant and end (after the work started,
     * and after it stopped); null for none.
     */
    public static Contender running(CoordinationClient client, Role role, MemberId member, LeaderWork work, Listener events) {
        WorkListener listener = new WorkListener(new LeaderWorkRunner("krabka-work-" + role, work), events);
        return listener.bind(new Contender(client, role, member, listener));
    }

    /** The role. */
    public Role role() {
        return role;
    }

    /** The member this contender acts for. */
    public MemberId member() {
        return member;
    }

    /** The time and threads it runs on: its client's. */
    CoordinationRuntime runtime() {
        return runtime;
    }

    /** Whether {@link #start()} was called and {@link #close()} not yet. */
    public boolean isRunning() {
        return started && state.contending();
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
     * cluster does not answer. Empty once an operation succeeds again.
     */
    public Optional<CoordinationException> problem() {
        return Optional.ofNullable(failures.problem());
    }

    /**
     * Starts contending: passes run on the shared pass threads, woken early when a record
     * of the role is committed.
     */
    public synchronized void start() {
        if (started) {
            throw new IllegalStateException("the contender for role " + role + " was already started");
        }
        started = true;
        try {
            news = client.watch(role, this::wake);
            freshness.watching(news != null);
        } catch (RuntimeException e) {
            // Only a wake-up: the periodic passes find the news anyway.
            log.debug("Role {} is not watched for news: {}", role, e.toString());
        }
        schedule(Duration.ZERO);
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
        return held != null && finish(held, LeadershipEndCause.RELEASED, null);
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
        if (held == null || held.leadership != leadership) {
            return;
        }
        if (held.finished.get() || !held.leadership.isActive()) {
            // Ended already (fenced, expired, released): the work stopped because of that.
            finish(held, null, failure);
            return;
        }
        if (failure == null) {
            log.info("The work of role {} returned, so {} gives the role up", role, member);
        } else {
            log.error("The work of role {} failed, so {} gives the role up", role, member, failure);
        }
        // Work that ends at once would otherwise be granted again at once, over and over.
        held.rejoinAtNanos = runtime.nanoTime() + ERROR_BACKOFF.toNanos();
        finish(held, failure == null ? LeadershipEndCause.RELEASED : LeadershipEndCause.FAILED, failure);
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
        boolean leaveNow;
        synchronized (this) {
            if (!started) {
                leaveNow = false;
            } else if (!state.contending()) {
                leaveNow = !inPass && state instanceof ContenderState.Leaving leaving && !leaving.begun();
            } else {
                transition(ContenderState::stopping);
                // A pass under way leaves when it ends; otherwise leave now, on a pass thread.
                leaveNow = !inPass;
                if (nextPass != null) {
                    nextPass.cancel();
                }
            }
        }
        synchronized (this) {
            holder.cancelExpiryCheck();
        }
        closeNews();
        if (leaveNow) {
            runtime.passes().execute(this::leaveOnce);
        } else if (!started) {
            stopped.complete(null);
        }
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
        boolean done = await(stopped, deadline);
        if (!done) {
            Tenure held = state.tenure();
            if (held != null) {
                log.warn("Releasing role {} did not finish within {}; {} abandons it without a tombstone", role, timeout, member);
                held.leadership.abandon();
                finish(held, LeadershipEndCause.RELEASED, null);
            }
            synchronized (this) {
                // Only while this contender's pass runs on it: a pool thread runs other roles' passes too.
                Thread stuck = passThread;
                if (stuck != null) {
                    stuck.interrupt();
                }
            }
        }
        boolean told = awaitListener(Duration.ofNanos(Math.max(0, deadline - runtime.nanoTime())));
        return done && told;
    }

    /** Stops, releasing a held role, and waits up to 30 s for that. */
    @Override
    public void close() {
        stop();
        awaitStopped(DEFAULT_CLOSE_TIMEOUT);
    }

    /** Arms the timer for the next pass; a pass that is due runs on the shared pass threads. */
    private synchronized void schedule(Duration wait) {
        if (!isRunning()) {
            return;
        }
        if (nextPass != null) {
            nextPass.cancel();
        }
        // A holder's pass (its renewal) never waits behind the passes of contending roles.
        Executor passes = state.tenure() != null ? runtime.renewals() : runtime.passes();
        nextPass = runtime.schedule(() -> passes.execute(this::pass), wait);
    }

    /**
     * A record of the role was committed: pass now rather than when the timer says. A
     * holder ignores its own leases and every registration: only another member's lease,
     * or a tombstone, can say it was deposed, and its renewals would otherwise make it read
     * the topic after each one.
     */
    private void wake(RoleNews news) {
        if (state.tenure() != null && (!news.lease() || member.equals(news.member()))) {
            return;
        }
        freshness.news();
        synchronized (this) {
            if (!isRunning()) {
                return;
            }
            if (inPass) {
                newsDuringPass = true;
                return;
            }
            if (nextPass != null && nextPass.isDue()) {
                return;
            }
        }
        schedule(Duration.ZERO);
    }

    /** One pass, then the timer for the next; the pass after a stop leaves the roster. */
    private void pass() {
        synchronized (this) {
            if (!isRunning() || inPass) {
                return;
            }
            inPass = true;
            newsDuringPass = false;
        }
        passThread = Thread.currentThread();
        Duration wait;
        try {
            wait = step(false);
        } catch (RuntimeException unexpected) {
            log.error("The contender of role {} failed unexpectedly; trying again in {}", role, ERROR_BACKOFF, unexpected);
            wait = ERROR_BACKOFF;
        } finally {
            releasePassThread();
        }
        boolean leaveNow;
        synchronized (this) {
            inPass = false;
            leaveNow = !isRunning();
            if (!leaveNow && newsDuringPass && state instanceof ContenderState.Standby) {
                // News came while this pass read: look again soon, but never spin.
                wait = min(wait, MIN_WAIT);
            }
        }
        if (leaveNow) {
            leaveOnce();
        } else {
            schedule(wait);
        }
    }

    private void leaveOnce() {
        synchronized (this) {
            if (!(state instanceof ContenderState.Leaving leaving) || leaving.begun()) {
                return;
            }
            transition(now -> leaving.leaveBegun());
        }
        passThread = Thread.currentThread();
        try {
            leave();
        } finally {
            releasePassThread();
            transition(now -> new ContenderState.Stopped());
            stopped.complete(null);
        }
    }

    /** Applies {@code event} to the state: every change of {@link #state} goes through here, atomically. */
    private synchronized void transition(UnaryOperator<ContenderState> event) {
        state = event.apply(state);
    }

    /** The pass is over: {@link #awaitStopped} may no longer interrupt this thread, and an interrupt it sent stays here. */
    private synchronized void releasePassThread() {
        passThread = null;
        Thread.interrupted();
    }

    private void closeNews() {
        AutoCloseable subscription;
        synchronized (this) {
            subscription = news;
            news = null;
        }
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception e) {
                log.debug("Closing the news of role {} failed: {}", role, e.toString());
            }
        }
    }

    /**
     * One pass of the state machine at the clock's current instant, never waiting for
     * the topic: the pass threads call it when the timer or news says, a simulation calls
     * it directly.
     *
     * @return how long to wait for news before the next pass
     */
    Duration step() {
        return step(true);
    }

    /**
     * @param readInline whether a holder's read runs in this pass (a simulation's step) or
     *     on the pass threads (a renewal thread never waits for the member's one consumer)
     */
    private Duration step(boolean readInline) {
        ContenderState now = state;
        Tenure held = now.tenure();
        if (held != null) {
            return held.finished.get() ? MIN_WAIT : holder.hold(held, readInline);
        }
        if (now instanceof ContenderState.Paused paused) {
            long nowNanos = runtime.nanoTime();
            if (nowNanos - paused.rejoinAtNanos() < 0) {
                return Duration.ofNanos(paused.rejoinAtNanos() - nowNanos);
            }
            transition(current -> current.rejoined(nowNanos));
        }
        return contend();
    }

    private Duration contend() {
        if (freshness.standbyMaySkip() && lastDecision instanceof Decision.Wait waiting && client.now().isBefore(waiting.challengeAt())) {
            // Nothing new for this role, and not yet its turn: the last pass's decision stands.
            return max(MIN_WAIT, min(MAX_STANDBY_WAIT, Duration.between(client.now(), waiting.challengeAt())));
        }
        CoordinationClient.Attempt attempt;
        try {
            freshness.reading();
            attempt = client.attempt(role, member, false);
            lastDecision = attempt.decision();
            failures.reachable();
        } catch (CoordinationAuthorizationException | CoordinationConfigurationException refusedForGood) {
            // Neither heals by itself: say it once, look again now and then.
            failures.refused(refusedForGood);
            return DENIAL_BACKOFF;
        } catch (CoordinationException failed) {
            failures.unreachable("contend for", failed);
            return ERROR_BACKOFF;
        }
        if (attempt.leadership() != null) {
            lastDecision = null;
            holder.grant(attempt.leadership());
            return Duration.ZERO;
        }
        Duration wait = MAX_STANDBY_WAIT;
        if (attempt.decision() instanceof Decision.Wait pending) {
            wait = min(wait, Duration.between(client.now(), pending.challengeAt()));
        }
        return max(MIN_WAIT, wait);
    }

    /** Ends {@code held} once; see {@link HolderPass#finish}. */
    private boolean finish(Tenure held, LeadershipEndCause endAs, Throwable failure) {
        return holder.finish(held, endAs, failure, false);
    }

    private void leave() {
        Tenure held = state.tenure();
        if (held != null) {
            // Releasing leaves the roster too; a leadership that had already ended does not.
            finish(held, LeadershipEndCause.RELEASED, null);
        }
        CoordinationException problem = failures.problem();
        if (problem instanceof CoordinationTimeoutException || problem instanceof CoordinationConfigurationException) {
            // Leaving would only wait for the cluster to time out again, or write into a
            // topic that is not the one this member joined; the next member to win the
            // role removes this registration as silent.
            log.info("Member {} does not leave the roster of role {}: {}", member, role, problem.getMessage());
            return;
        }
        try {
            client.leave(role, member);
        } catch (RuntimeException e) {
            log.warn("Member {} could not leave the roster of role {}: {}", member, role, e.toString());
        }
    }

    /** Waits for {@code future} until {@code deadlineNanos}; whether it completed. */
    private boolean await(CompletableFuture<?> future, long deadlineNanos) {
        try {
            return runtime.await(future, Duration.ofNanos(Math.max(0, deadlineNanos - runtime.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return future.isDone();
        }
    }

    static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    @Override
    public String toString() {
        return "Contender[" + member + " for " + role + (leadership().isPresent() ? ", holding" : "") + "]";
    }
}
