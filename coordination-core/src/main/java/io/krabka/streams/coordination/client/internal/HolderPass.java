package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.Succession;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A holder's side of a {@link Contender}: takes a grant, renews it when due, looks at the
 * topic for a newer holder, and ends the leadership at its deadline when a renewal still
 * blocks ({@link TenureEnd} carries every end out). Logs as the contender does.
 *
 * <p>Size: one class, since taking a grant, renewing it, looking for a newer holder and
 * ending at the deadline all read and change the one tenure of the role.
 */
final class HolderPass {

    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    /** The longest a holder waits on the topic before it looks at its lease again. */
    static final Duration MAX_HOLD_WAIT = Duration.ofSeconds(1);
    /** How long a holder waits after a failed renewal before the next attempt. */
    static final Duration RENEW_RETRY = Duration.ofMillis(250);

    /** What the holder's pass needs of its contender. */
    interface Owner {

        /**
         * Enters the Holding state with {@code held}, then runs {@code then} in the same event
         * on the contender's lane: whoever hears of the grant finds the state already holding it.
         */
        void granted(Tenure held, Runnable then);

        /** Runs {@code action} on the contender's lane if it runs and {@code held} is its current leadership. */
        void whileHolding(Tenure held, Runnable action);

        /** Runs the next pass now. */
        void passNow();
    }

    private final TermHost host;
    private final RoleReads reads;
    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId member;
    private final Contender.Listener listener;
    private final OrderedCallbacks callbacks;
    private final FailureReport failures;
    private final ReadFreshness freshness;
    private final RenewalWatch renewalWatch;
    private final TenureEnd ending;
    private final Owner owner;
    // Whether a holder's read runs on the pass threads now: one at a time per contender.
    private final AtomicBoolean checking = new AtomicBoolean();
    // Owned by the pass that runs.
    private long reportedSuspiciousLease = -1;

    HolderPass(
            TermHost host,
            RoleReads reads,
            Role role,
            MemberId member,
            Contender.Listener listener,
            OrderedCallbacks callbacks,
            FailureReport failures,
            ReadFreshness freshness,
            TenureEnd ending,
            Owner owner) {
        this.host = host;
        this.reads = reads;
        this.runtime = host.runtime();
        this.role = role;
        this.member = member;
        this.listener = listener;
        this.callbacks = callbacks;
        this.failures = failures;
        this.freshness = freshness;
        this.renewalWatch = new RenewalWatch(runtime);
        this.ending = ending;
        this.owner = owner;
    }

    /** Takes the leadership granted in this pass: holds it, tells the listener, confirms its epoch. */
    void grant(LeadershipTerm leadership) {
        Tenure held = new Tenure(leadership);
        // The state holds it before anyone hears of it: the listener, the expiry check, and a
        // release or relinquish it calls back with. The lane may run this later than now
        // (another thread runs it); an end of this tenure is posted after it, so the listener
        // hears of the grant before the end.
        owner.granted(held, () -> {
            armExpiryCheck(held);
            log.info("Member {} holds role {} with {}", member, role, leadership.token());
            callbacks.run(() -> {
                try {
                    listener.granted(leadership);
                } catch (Throwable failure) {
                    log.error("The grant listener of role {} failed, so {} gives the role up", role, member, failure);
                    ending.finish(held, LeadershipEndCause.FAILED, failure);
                }
            });
        });
        // After the grant is handed on, off the handover's path: the writes that make current() true.
        try {
            leadership.confirm();
        } catch (FencedException ended) {
            ending.finish(held, null, ended);
        } catch (CoordinationException failed) {
            // current() turns true with the next renewal instead.
            log.info(
                    "Role {} was granted to {}, but confirming its epoch failed: {}",
                    role,
                    member,
                    failed.getMessage());
        }
    }

    /** Runs a listener callback of the pass; whatever it throws, an Error included, is logged and the pass goes on. */
    private void tell(Runnable callback) {
        try {
            callback.run();
        } catch (Throwable failure) {
            log.error("A listener of role {} failed", role, failure);
        }
    }

    /**
     * One pass of the holder: renews when due, looks at the topic when it should.
     *
     * @param readInline whether the read runs in this pass (a simulation's step) or on the
     *     pass threads (a renewal thread never waits for the member's one consumer)
     * @return how long to wait before the next pass
     */
    Duration hold(Tenure held, boolean readInline) {
        LeadershipTerm leadership = held.leadership;
        if (expire(held)) {
            return Duration.ZERO;
        }
        if (!leadership.isActive()) {
            // Ended by a write of the work (fenced, or the producer failed) or by its close.
            ending.finish(held, null, null);
            return Duration.ZERO;
        }
        long nowNanos = runtime.nanoTime();
        if (leadership.renewDue() && (held.retryAtNanos == 0 || nowNanos - held.retryAtNanos >= 0)) {
            held.retryAtNanos = 0;
            long start = runtime.nanoTime();
            Object renewal = renewalWatch.renewalStarted();
            try {
                try {
                    leadership.renew();
                } finally {
                    renewalWatch.renewalEnded(renewal);
                }
                failures.reachable();
                Duration took = Duration.ofNanos(runtime.nanoTime() - start);
                tell(() -> listener.renewed(leadership, took));
            } catch (FencedException ended) {
                ending.finish(held, null, ended);
                return Duration.ZERO;
            } catch (CoordinationConfigurationException changed) {
                // The transport refused the renewal: the topic, or the cluster behind the address,
                // is not the one this leadership was granted on. Stop, write nothing more.
                failures.refused(changed);
                ending.finish(held, LeadershipEndCause.FAILED, changed, true);
                return Duration.ZERO;
            } catch (CoordinationException failed) {
                if (!leadership.isActive()) {
                    ending.finish(held, null, failed);
                    return Duration.ZERO;
                }
                tell(() -> listener.renewFailed(leadership, failed));
                failures.unreachable("renew", failed);
                held.retryAtNanos = nonZero(runtime.nanoTime() + RENEW_RETRY.toNanos());
            }
        }
        if (freshness.holderShouldLook()) {
            if (readInline) {
                if (check(held)) {
                    return Duration.ZERO;
                }
            } else if (checking.compareAndSet(false, true)) {
                // A read can wait for the member's one consumer, the coordinator a whole
                // timeout: neither may delay this or any other role's next renewal.
                try {
                    runtime.passes().execute(() -> {
                        try {
                            if (check(held)) {
                                owner.passNow();
                            }
                        } finally {
                            checking.set(false);
                        }
                    });
                } catch (RuntimeException rejected) {
                    checking.set(false);
                    throw rejected;
                }
            }
        }
        Duration next = leadership.untilRenew();
        long retryAtNanos = held.retryAtNanos;
        if (retryAtNanos != 0) {
            Duration untilRetry = Duration.ofNanos(retryAtNanos - runtime.nanoTime());
            next = untilRetry.compareTo(next) > 0 ? untilRetry : next;
        }
        return RoleContender.max(Duration.ZERO, RoleContender.min(MAX_HOLD_WAIT, next));
    }

    /** {@code nanos}, or 1 where it is 0, which {@link Tenure#retryAtNanos} keeps for "none". */
    private static long nonZero(long nanos) {
        return nanos == 0 ? 1 : nanos;
    }

    /**
     * A holder's look at the topic: after news, or as a fallback for a missed wake-up
     * unless the transport vouches that none was missed.
     *
     * @return whether the leadership ended
     */
    private boolean check(Tenure held) {
        if (held.finished.get()) {
            return false;
        }
        if (freshness.noNewsSinceRead()) {
            try {
                if (reads.quietSinceRead(role)) {
                    freshness.vouched();
                    return false;
                }
            } catch (CoordinationConfigurationException changed) {
                failures.refused(changed);
                ending.finish(held, LeadershipEndCause.FAILED, changed, true);
                return true;
            } catch (CoordinationException failed) {
                // The read below reports it.
                log.debug("Role {}: the transport could not vouch for its news: {}", role, failed.getMessage());
            }
        }
        freshness.reading();
        return stepDownConfirmed(held);
    }

    /**
     * Reads what is new and, when a lease naming another member was committed, asks the
     * coordinator: a challenger's InitProducerId fenced this member (it steps down now),
     * or the record is forged or stray (it is logged once and changes nothing).
     */
    private boolean stepDownConfirmed(Tenure held) {
        RoleState state;
        try {
            state = reads.awaitRoleState(role, Duration.ZERO);
            Decision decision = Succession.evaluate(state, member, true, host.config(), host.now());
            if (decision instanceof Decision.Renew && state.lease().isEmpty()) {
                // A tombstone this member did not write (a stray or forged record): write
                // the lease again at once, before a standby reads the role as released.
                log.warn(
                        "The lease of role {} was cleared by a tombstone that {} did not write; renewing it now",
                        role,
                        member);
                held.leadership.renew();
                return false;
            }
            if (!(decision instanceof Decision.StepDown stepDown)) {
                return false;
            }
            long offset = state.lease().map(LeaseState::offset).orElse(-1L);
            if (offset < held.leadership.term()) {
                // A lease older than this member's own grant: history, not a newer holder.
                return false;
            }
            if (held.leadership.confirmFenced()) {
                log.info("Role {} was taken by {}", role, stepDown.newHolder());
                ending.finish(held, null, null);
                return true;
            }
            if (offset != reportedSuspiciousLease) {
                reportedSuspiciousLease = offset;
                reads.suspicious(
                        role,
                        "a lease at offset " + offset + " of " + reads.location() + " names "
                                + stepDown.newHolder() + " as the holder, but the transaction coordinator says "
                                + member
                                + " still holds the epoch: no holder wrote it; " + member
                                + " keeps the role and renews now");
                // Until this member's next lease, observers read the forged one: make that now,
                // not a renew interval later (as for a tombstone it did not write).
                held.leadership.renew();
            }
            return false;
        } catch (FencedException ended) {
            ending.finish(held, null, ended);
            return true;
        } catch (CoordinationConfigurationException changed) {
            // The topic is not the one this leadership was granted on: stop, write nothing more.
            failures.refused(changed);
            ending.finish(held, LeadershipEndCause.FAILED, changed, true);
            return true;
        } catch (CoordinationException failed) {
            failures.unreachable("read", failed);
            return false;
        }
    }

    /** Ends the leadership as EXPIRED if its deadline passed without a renewal. Never blocks. */
    private boolean expire(Tenure held) {
        if (held.finished.get() || !held.leadership.expireIfDue()) {
            return false;
        }
        log.warn(
                "The lease of role {} passed its deadline {} without a renewal; the leadership of {} ended",
                role,
                held.leadership.deadline(),
                member);
        // Health shows it at once, not only when the blocked renewal times out; the next
        // operation that succeeds clears it (after a pause of this process, at once).
        failures.show(new CoordinationTimeoutException("the renewals of role " + role + " got no answer from "
                + reads.location() + " before the lease deadline " + held.leadership.deadline()));
        ending.finish(held, null, null);
        return true;
    }

    /**
     * Ends {@code held} at its deadline even while a renewal blocks: a timer at the lease's
     * deadline checks it on a worker thread (the pass threads may all be blocked), and
     * arms itself again for the next deadline while renewals succeed. It only reads clocks
     * and closes producers.
     */
    private void armExpiryCheck(Tenure held) {
        owner.whileHolding(held, () -> {
            Duration untilDeadline = RoleContender.max(RoleContender.MIN_WAIT, held.leadership.untilExpired());
            renewalWatch.armExpiry(untilDeadline, () -> {
                if (!expire(held)) {
                    armExpiryCheck(held);
                }
            });
        });
    }

    /** Whether a renewal blocks now (past {@link RenewalWatch#STUCK_RENEWAL}): the holder's pass is stuck in it. */
    boolean renewalBlocked() {
        return renewalWatch.blocked();
    }

    /** No more expiry checks: the contender stops. Runs on the contender's lane. */
    void cancelExpiryCheck() {
        renewalWatch.cancelExpiry();
    }
}
