package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeadershipReleasedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.Leadership.State;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Where a leadership is in its life ({@link State}), whether its release began, and what a
 * write refused for either says. What ending does to the leadership's parts (its producer,
 * its send queue, its client) is {@link Leadership#end}'s.
 */
final class LeadershipLifecycle {

    private final MemberId member;
    private final Role role;
    // Changed without the lock, so a watchdog or a release can end a leadership whose
    // write blocks; the first end wins and later ones change nothing.
    private final AtomicReference<State> state = new AtomicReference<>(State.ACTIVE);
    // Set by close() before it waits for a write in flight: no new guarded write starts.
    private volatile boolean releasing;

    LeadershipLifecycle(MemberId member, Role role) {
        this.member = member;
        this.role = role;
    }

    State state() {
        // Starts ACTIVE and only ever moves to another state: never null.
        return Objects.requireNonNull(state.get());
    }

    /** Whether the leadership has not ended and is not being released: a send may be queued, a guarded write start. */
    boolean active() {
        return state.get() == State.ACTIVE && !releasing;
    }

    /** Whether a release began: queued sends are written at once, no new guarded write starts. */
    boolean releasing() {
        return releasing;
    }

    /** A release begins: from now on only the sends accepted before and the release's tombstone are written. */
    void beginRelease() {
        releasing = true;
    }

    /** Moves to {@code newState} unless the leadership already ended; never blocks. @return whether this call ended it */
    boolean end(State newState) {
        return state.compareAndSet(State.ACTIVE, newState);
    }

    /** The exception for a write or renewal after this leadership ended. */
    FencedException ended(@Nullable Throwable cause) {
        State ended = state();
        return FencedException.ended(
                "the leadership of " + member + " over role " + role + " ended (" + ended + ")",
                cause,
                ended.endCause().orElse(LeadershipEndCause.RELEASED));
    }

    /** Why a send or guarded write is refused now: the leadership ended, or it is being released. */
    FencedException refusal() {
        return state() != State.ACTIVE
                ? ended(null)
                : new LeadershipReleasedException(
                        "the leadership of " + member + " over role " + role + " is being released", null);
    }
}
