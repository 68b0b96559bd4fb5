package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link Contender}'s leaderships end: each once, whichever thread gets there first
 * (the holder's pass, the expiry timer, a grant listener that threw, the work giving the
 * role up, a release, the stop). A leadership still active is released with a tombstone,
 * or abandoned, then the contender leaves the Holding state, the listener hears how it
 * ended, and the member contends again. Logs as the contender does.
 */
final class TenureEnd {

    // The contender's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    /** What an end tells the contender. */
    @FunctionalInterface
    interface Owner {

        /**
         * {@code held} ended: leaves the Holding state, pausing until {@code rejoinAtNanos}
         * unless 0, then runs {@code tell} in the same event on the contender's lane, so the
         * listener hears of the end after the grant and after the state left it.
         */
        void ended(Tenure held, long rejoinAtNanos, Runnable tell);
    }

    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId member;
    private final Contender.Listener listener;
    private final OrderedCallbacks callbacks;
    private final Owner owner;
    private final FailureReport failures;

    TenureEnd(
            CoordinationRuntime runtime,
            Role role,
            MemberId member,
            Contender.Listener listener,
            OrderedCallbacks callbacks,
            FailureReport failures,
            Owner owner) {
        this.failures = failures;
        this.runtime = runtime;
        this.role = role;
        this.member = member;
        this.listener = listener;
        this.callbacks = callbacks;
        this.owner = owner;
    }

    /**
     * Gives {@code held} up because the work it was taken for ended ({@link Contender#relinquish}):
     * released when {@code failure} is null, ended as FAILED otherwise, and the member
     * contends again only after a pause. One that already ended is reported as it ended.
     */
    void relinquish(Tenure held, @Nullable Throwable failure) {
        if (held.finished.get() || !held.leadership.isActive()) {
            // Ended already (fenced, expired, released): the work stopped because of that.
            finish(held, null, failure);
            return;
        }
        CoordinationAuthorizationException refused = refusal(failure);
        Duration pause = RoleContender.ERROR_BACKOFF;
        if (failure == null) {
            log.info("The work of role {} returned, so {} gives the role up", role, member);
        } else if (refused != null) {
            // The cluster refused the work (a pipeline's input, group or output): health says so,
            // and the member takes the role again only after the refusal back-off, not every second.
            pause = RoleContender.DENIAL_BACKOFF;
            log.error(
                    "The work of role {} was refused by the cluster, so {} gives the role up and takes it again in {} s "
                            + "at the earliest: {}",
                    role,
                    member,
                    pause.toSeconds(),
                    refused.getMessage());
            failures.show(refused);
        } else {
            log.error("The work of role {} failed, so {} gives the role up", role, member, failure);
        }
        // Work that ends at once would otherwise be granted again at once, over and over.
        held.rejoinAtNanos = runtime.nanoTime() + pause.toNanos();
        finish(held, failure == null ? LeadershipEndCause.RELEASED : LeadershipEndCause.FAILED, failure);
    }

    /** The authorization failure among {@code failure} and its causes, if any. */
    private static @Nullable CoordinationAuthorizationException refusal(@Nullable Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof CoordinationAuthorizationException refused) {
                return refused;
            }
        }
        return null;
    }

    /** The stop's release of {@code held} did not finish within {@code timeout}: ends it without a tombstone. */
    void abandon(Tenure held, Duration timeout) {
        log.warn(
                "Releasing role {} did not finish within {}; {} abandons it without a tombstone",
                role,
                DurationText.of(timeout),
                member);
        held.leadership.abandon();
        finish(held, LeadershipEndCause.RELEASED, null);
    }

    /** Ends {@code held} once, on the topic it was granted on: see the method below. */
    boolean finish(Tenure held, @Nullable LeadershipEndCause endAs, @Nullable Throwable failure) {
        return finish(held, endAs, failure, false);
    }

    /**
     * Releases {@code held} with a tombstone, as {@link Contender#release()} and a handover
     * do: whether this call released it. False when another call ended it first, or when it
     * had already ended by itself (a write found it fenced, its lease ran out: the listener
     * hears that cause). A release whose tombstone transaction failed still ends the
     * leadership RELEASED (standbys then wait out its lease), and answers true.
     */
    boolean release(Tenure held) {
        Ending ending = end(held, LeadershipEndCause.RELEASED, null, false);
        return ending != null && ending.releasedHere();
    }

    /**
     * Ends {@code held} once, however many threads try: a leadership still active is
     * released with a tombstone (or abandoned if the release fails), then the listener is
     * told how it ended and the member contends again.
     *
     * @param endAs the cause to end an active leadership with (RELEASED or FAILED), or
     *     null when it already ended by itself
     * @param topicChanged whether the coordination topic is not the one this leadership was
     *     granted on: then it is given up without a tombstone, which would land in the wrong
     *     topic. Any other failure, a configuration problem of the work's own included (an
     *     input topic that does not exist), releases with a tombstone, so the next standby
     *     takes over at once instead of after a whole lease.
     * @return whether this call ended it
     */
    boolean finish(Tenure held, @Nullable LeadershipEndCause endAs, @Nullable Throwable failure, boolean topicChanged) {
        return end(held, endAs, failure, topicChanged) != null;
    }

    /** How a call ended a tenure: whether it wrote the tombstone itself. */
    private record Ending(boolean releasedHere) {}

    /** {@link #finish}: how this call ended it, null when another call did. */
    private @Nullable Ending end(
            Tenure held, @Nullable LeadershipEndCause endAs, @Nullable Throwable failure, boolean topicChanged) {
        if (!held.finished.compareAndSet(false, true)) {
            return null;
        }
        LeadershipTerm leadership = held.leadership;
        boolean endedHere = false;
        if (leadership.state() == Leadership.State.ACTIVE && endAs != null) {
            if (topicChanged) {
                // No tombstone into a topic that is not the one this leadership began on.
                leadership.abandon();
            } else {
                try {
                    leadership.close();
                } catch (RuntimeException e) {
                    log.warn(
                            "Releasing role {} failed, so {} abandons it without a tombstone: {}",
                            role,
                            member,
                            e.toString());
                    leadership.abandon();
                }
            }
            endedHere = leadership.state() == Leadership.State.RELEASED;
        }
        // endedHere implies endAs != null: only an end this call asked for ends it here.
        LeadershipEndCause cause = endedHere && endAs != null
                ? endAs
                : leadership.state().endCause().orElse(LeadershipEndCause.RELEASED);
        long rejoinAtNanos = held.rejoinAtNanos;
        if (cause == LeadershipEndCause.FAILED) {
            long errorPause = runtime.nanoTime() + RoleContender.ERROR_BACKOFF.toNanos();
            // The later of the error pause and one set already (a refused work's longer one).
            rejoinAtNanos = rejoinAtNanos != 0 && rejoinAtNanos - errorPause > 0 ? rejoinAtNanos : errorPause;
        }
        if (topicChanged && failure != null) {
            log.warn(
                    "Member {} no longer holds role {} ({}): {}, without a tombstone: {}",
                    member,
                    role,
                    leadership.token(),
                    cause,
                    failure.getMessage());
        } else {
            log.info("Member {} no longer holds role {} ({}): {}", member, role, leadership.token(), cause);
        }
        // A cause exception only where something failed: a release or an expiry is no failure,
        // and the FencedException a write threw after the lease ran out would read like split brain.
        Throwable told = cause == LeadershipEndCause.FENCED || cause == LeadershipEndCause.FAILED ? failure : null;
        owner.ended(held, rejoinAtNanos, () -> callbacks.run(() -> listener.ended(leadership, cause, told)));
        return new Ending(endedHere && endAs == LeadershipEndCause.RELEASED);
    }
}
