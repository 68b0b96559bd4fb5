package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * A {@link FencedException} for a planned end: this member released the role (on request,
 * on shutdown, in a handover or a drain under spread, or because the role's work returned).
 * Its {@link #endCause()} is always {@link LeadershipEndCause#RELEASED}.
 *
 * <p>Everything {@code FencedException} says holds: stop the role's work, and nothing of the
 * write that threw this was written. A worker that stops on {@code FencedException} stops on
 * this too; one that wants to log a planned move quietly and a fence loudly catches this
 * first:
 *
 * <pre>{@code
 * } catch (LeadershipReleasedException moved) {
 *     log.info("role moved on: {}", moved.getMessage());   // planned: a release, handover or drain
 * } catch (FencedException fenced) {
 *     log.warn("deposed: {}", fenced.getMessage());        // FENCED, EXPIRED or FAILED
 * }
 * }</pre>
 */
public class LeadershipReleasedException extends FencedException {

    private static final long serialVersionUID = 1L;

    public LeadershipReleasedException(String message, @Nullable Throwable cause) {
        super(message, cause, LeadershipEndCause.RELEASED);
    }
}
