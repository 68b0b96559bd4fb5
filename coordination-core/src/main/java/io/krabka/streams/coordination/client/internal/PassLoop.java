package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The passes of a {@link Contender}: what one does for the state it is in (the holder's
 * side renews, a paused member waits, a standby contends), when the next runs (its timer,
 * or at once on news of the role), on which threads, one at a time, and after a stop the
 * leave, once, on a pass thread.
 *
 * <p>Its fields change only in events on the contender's {@link RoleLane}, the one its
 * state transitions run on: a pass's bookkeeping and the contender's state never change
 * concurrently, and no lock is held while a pass waits on the cluster, which it does off
 * the lane, on the runtime's pass or renewal threads. Logs as the contender does.
 *
 * <p>Size: one class, since the pass, its timer, the news that wakes it and the leave
 * after a stop share the loop's state on that one lane.
 */
final class PassLoop {

    // The contender's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    private final RoleContender contender;
    private final RoleLane lane;
    private final TermHost host;
    private final Balancer balancer;
    private final RoleMembership membership;
    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId member;
    private final FailureReport failures;
    private final ReadFreshness freshness;
    private final TenureEnd ending;
    private final HolderPass holder;
    private final StandbyPass standby;
    private final Handover handover;
    // Changed on the lane: whether start() ran, the next pass's timer, whether a pass
    // runs now and whether news came during it, and the news subscription.
    private final AtomicBoolean started = new AtomicBoolean();
    private CoordinationRuntime.@Nullable Scheduled nextPass;
    private boolean inPass;
    private boolean newsDuringPass;
    // Whether that news may let this standby take the role now (StandbyPass.mayTakeRoleOn).
    private boolean urgentNewsDuringPass;
    private @Nullable AutoCloseable news;
    // The thread running this contender's pass or leave now, under its own small lock: an
    // interrupt meant for a stuck pass must never reach the pool thread's next task.
    private final Object passThreadLock = new Object();
    private @Nullable Thread passThread;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    PassLoop(
            RoleContender contender,
            TermHost host,
            Balancer balancer,
            RoleMembership membership,
            FailureReport failures,
            ReadFreshness freshness,
            TenureEnd ending,
            HolderPass holder,
            StandbyPass standby,
            Handover handover) {
        this.contender = contender;
        this.lane = contender.lane();
        this.host = host;
        this.balancer = balancer;
        this.membership = membership;
        this.runtime = host.runtime();
        this.role = contender.role();
        this.member = contender.member();
        this.failures = failures;
        this.freshness = freshness;
        this.ending = ending;
        this.holder = holder;
        this.standby = standby;
        this.handover = handover;
    }

    /** Whether {@link #start()} ran. */
    boolean started() {
        return started.get();
    }

    /** Subscribes to the role's news and runs the first pass. */
    void start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("the contender for role " + role + " was already started");
        }
        RuntimeException[] failed = {null};
        lane.run(() -> {
            try {
                enlistAndSchedule();
            } catch (RuntimeException e) {
                failed[0] = e;
            }
        });
        if (failed[0] != null) {
            // The first pass could not be scheduled (a closed runtime): the caller hears it, as before the lane.
            started.set(false);
            balancer.delist(contender);
            closeNews();
            throw failed[0];
        }
    }

    /** Enlists the contender with the balancer, subscribes to the role's news and schedules the first pass; on the lane. */
    private void enlistAndSchedule() {
        balancer.enlist(contender);
        try {
            news = membership.watch(role, this::wake);
            freshness.watching(news != null);
        } catch (RuntimeException e) {
            // Only a wake-up: the periodic passes find the news anyway.
            log.debug("Role {} is not watched for news: {}", role, e.toString());
        }
        schedule(Duration.ZERO);
    }

    /**
     * Stops the passes without waiting: no next pass, no expiry check, no news; the leave
     * runs on a pass thread now, or when the pass under way ends.
     */
    void stop() {
        lane.run(() -> {
            ContenderState now = contender.state();
            boolean leaveNow;
            if (!started.get()) {
                leaveNow = false;
            } else if (!now.contending()) {
                leaveNow = !inPass && now instanceof ContenderState.Leaving leaving && !leaving.begun();
            } else {
                contender.transition(ContenderState::stopping);
                // A pass under way leaves when it ends; otherwise leave now, on a pass thread.
                leaveNow = !inPass;
                if (nextPass != null) {
                    nextPass.cancel();
                }
            }
            holder.cancelExpiryCheck();
            closeNews();
            if (leaveNow) {
                try {
                    executeLeave(this::leaveOnce);
                } catch (RejectedExecutionException closed) {
                    // The runtime was closed under the contender: nothing will release or leave, so say so and stop
                    // waiting.
                    log.warn(
                            "Member {} cannot leave role {}: its runtime refused the leave ({})",
                            member,
                            role,
                            closed.toString());
                    stopped.complete(null);
                }
            } else if (!started.get()) {
                stopped.complete(null);
            }
        });
    }

    /** Waits until {@code deadlineNanos} at most for the stop to finish: the leave ran, or nothing had started; whether it did. */
    boolean awaitStopped(long deadlineNanos) {
        try {
            return runtime.await(stopped, Duration.ofNanos(Math.max(0, deadlineNanos - runtime.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return stopped.isDone();
        }
    }

    /** Interrupts this contender's pass, if one runs now: it is stuck past the stop's timeout. */
    void interruptPass() {
        synchronized (passThreadLock) {
            // Only while this contender's pass runs on it: a pool thread runs other roles' passes too.
            if (passThread != null) {
                passThread.interrupt();
            }
        }
    }

    /** Arms the timer for the next pass; a pass that is due runs on the shared pass threads. */
    void schedule(Duration wait) {
        schedule(wait, false);
    }

    /** {@link #schedule(Duration)}, ahead of the other roles' queued passes when {@code urgent} and standing by. */
    private void schedule(Duration wait, boolean urgent) {
        lane.run(() -> {
            if (!contender.isRunning()) {
                return;
            }
            if (nextPass != null) {
                nextPass.cancel();
            }
            Executor passes = executorForPass(urgent);
            nextPass = runtime.schedule(() -> passes.execute(() -> pass(passes)), wait);
        });
    }

    /**
     * A record of the role was committed: pass now rather than when the timer says. A
     * holder ignores its own leases and every registration: only another member's lease,
     * or a tombstone, can say it was deposed, and its renewals would otherwise make it read
     * the topic after each one. A standby takes a renewal of the leadership it knows from
     * the news itself (its turn moves later, {@link StandbyPass}) and does not read: every
     * standby of every role reading its partition at every renewal queued a handover's
     * challenge for seconds at a few hundred roles per member.
     */
    private void wake(RoleNews news) {
        boolean holding = contender.state().tenure() != null;
        if (holding && (!news.lease() || member.equals(news.member()))) {
            return;
        }
        boolean urgent = false;
        if (!holding) {
            // Believed at most one lease from now, as a lease read from the topic.
            long bound = host.now().toEpochMilli() + host.config().duration().toMillis();
            membership.renewedInNews(role, news, bound);
            if (standby.renewedInNews(news, bound)) {
                return;
            }
            // A release or a handover's probe: this pass goes ahead of other roles' queued passes.
            urgent = standby.mayTakeRoleOn(news);
        }
        freshness.news();
        boolean urgentNews = urgent;
        lane.run(() -> {
            if (!contender.isRunning()) {
                return;
            }
            if (inPass) {
                newsDuringPass = true;
                urgentNewsDuringPass |= urgentNews;
                return;
            }
            // A pass already due waits in the queue in turn; an urgent one goes ahead of it
            // (the later of the two finds nothing new, at the cost of one read).
            if (nextPass != null && nextPass.isDue() && !urgentNews) {
                return;
            }
            schedule(Duration.ZERO, urgentNews);
        });
    }

    /** One pass, then the timer for the next; the pass after a stop leaves the roster. */
    /** A pass the timer started on {@code passes}: when its lane is busy, it goes on there, in its queue and place. */
    private void pass(Executor passes) {
        lane.runThen(
                () -> {
                    if (!contender.isRunning() || inPass) {
                        return null;
                    }
                    inPass = true;
                    newsDuringPass = false;
                    urgentNewsDuringPass = false;
                    return this::passOffLane;
                },
                passes);
    }

    /** The pass itself, off the lane: it may wait on the cluster; then its bookkeeping on the lane. */
    private void passOffLane() {
        holdPassThread();
        Duration wait;
        try {
            wait = step(false);
        } catch (Throwable unexpected) {
            // Any throwable, an Error from a listener included: a pass that ends without
            // clearing inPass would stop this member renewing and contending for good.
            log.error(
                    "The contender of role {} failed unexpectedly; trying again in {}",
                    role,
                    DurationText.of(RoleContender.ERROR_BACKOFF),
                    unexpected);
            failures.show(new CoordinationException(
                    "the contender of role " + role + " failed unexpectedly (" + unexpected + "); it tries again in "
                            + DurationText.of(RoleContender.ERROR_BACKOFF),
                    unexpected));
            wait = RoleContender.ERROR_BACKOFF;
        } finally {
            releasePassThread();
        }
        Duration waited = wait;
        lane.runThen(
                () -> {
                    inPass = false;
                    if (!contender.isRunning()) {
                        return this::leaveOnce;
                    }
                    Duration next = waited;
                    boolean urgent = false;
                    if (newsDuringPass && contender.state() instanceof ContenderState.Standby) {
                        // News came while this pass read: look again soon, but never spin.
                        next = RoleContender.min(next, RoleContender.MIN_WAIT);
                        urgent = urgentNewsDuringPass;
                    }
                    schedule(next, urgent);
                    return null;
                },
                this::executeLeave);
    }

    /** Where a pass of the state now runs: a holder's (its renewal) never waits behind the passes of contending roles. */
    private Executor executorForPass(boolean urgent) {
        return contender.state().tenure() != null
                ? runtime.renewals()
                : urgent ? runtime.urgentPasses() : runtime.passes();
    }

    /**
     * One pass of the state machine at the clock's current instant, never waiting for
     * the topic (see {@link Contender#step()}): the holder's side renews, a paused member
     * waits out its pause, a standby contends.
     *
     * @param readInline whether a holder's read runs in this pass (a simulation's step) or
     *     on the pass threads (a renewal thread never waits for the member's one consumer)
     * @return how long to wait for news before the next pass
     */
    Duration step(boolean readInline) {
        ContenderState now = contender.state();
        Tenure held = now.tenure();
        if (held != null) {
            return held.finished.get() || handover.runAsked() ? RoleContender.MIN_WAIT : holder.hold(held, readInline);
        }
        if (now instanceof ContenderState.Paused paused) {
            long nowNanos = runtime.nanoTime();
            if (nowNanos - paused.rejoinAtNanos() < 0) {
                return Duration.ofNanos(paused.rejoinAtNanos() - nowNanos);
            }
            contender.transition(current -> current.rejoined(nowNanos));
        }
        ContenderState standing = contender.state();
        // A contender stepped by hand after its stop contends from a fresh decision.
        return standby.contend(
                standing instanceof ContenderState.Standby current ? current : ContenderState.Standby.FRESH);
    }

    private void leaveOnce() {
        lane.runThen(
                () -> {
                    if (!(contender.state() instanceof ContenderState.Leaving leaving) || leaving.begun()) {
                        return null;
                    }
                    contender.transition(now -> leaving.leaveBegun());
                    return this::leaveOffLane;
                },
                this::executeLeave);
    }

    /**
     * Runs a leave off the lane: a holder's leave is its release, a transaction like its
     * renewals, so on their threads, never behind the contending roles' passes and the
     * holders' reads, which a member stopping with 1 000 roles had queued for longer than
     * its stop timeout (998 of 1 000 roles abandoned without a tombstone).
     */
    private void executeLeave(Runnable leave) {
        (contender.state().tenure() != null ? runtime.renewals() : runtime.passes()).execute(leave);
    }

    /** The leave itself, off the lane: it may wait on the cluster; then the contender is stopped. */
    private void leaveOffLane() {
        holdPassThread();
        try {
            leave();
        } finally {
            releasePassThread();
            lane.run(() -> {
                balancer.delist(contender);
                contender.transition(now -> new ContenderState.Stopped());
                stopped.complete(null);
            });
        }
    }

    /** The leave after a stop: releases a held role and leaves the roster. */
    private void leave() {
        Tenure held = contender.state().tenure();
        if (held != null) {
            // Under spread, a drain: to the live standby with the fewest roles, made next in line.
            MemberId to = balancer.drainTarget(role, member);
            if (to == null || handover.release(held, to) != HandoverResult.HANDED_OVER) {
                // Releasing leaves the roster too; a leadership that had already ended does not.
                ending.finish(held, LeadershipEndCause.RELEASED, null);
            }
        }
        CoordinationException problem = failures.problem();
        if (problem instanceof CoordinationTimeoutException || problem instanceof CoordinationConfigurationException) {
            // A producer built ahead of a challenge is local: close it even when the cluster is not asked.
            membership.discardPrepared(role);
            // Leaving would only wait for the cluster to time out again, or write into a
            // topic that is not the one this member joined; the next member to win the
            // role removes this registration as silent.
            log.info("Member {} does not leave the roster of role {}: {}", member, role, problem.getMessage());
            return;
        }
        try {
            membership.leave(role, member);
        } catch (RuntimeException e) {
            log.warn("Member {} could not leave the roster of role {}: {}", member, role, e.toString());
        }
    }

    /** The pass is over: {@link Contender#awaitStopped} may no longer interrupt this thread, and an interrupt it sent stays here. */
    private void releasePassThread() {
        synchronized (passThreadLock) {
            passThread = null;
            Thread.interrupted();
        }
    }

    /** This thread runs the contender's pass or leave now: {@link #interruptPass} may interrupt it until {@link #releasePassThread}. */
    private void holdPassThread() {
        synchronized (passThreadLock) {
            passThread = Thread.currentThread();
        }
    }

    private void closeNews() {
        AutoCloseable subscription = news;
        news = null;
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception e) {
                log.debug("Closing the news of role {} failed: {}", role, e.toString());
            }
        }
    }
}
