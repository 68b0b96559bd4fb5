package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import java.time.Duration;
import java.time.InstantSource;
import java.util.function.BiFunction;

/**
 * {@link CoordinationClient#acquire}: election passes until one wins the role or the
 * timeout passes. Between passes it waits on the coordination topic, so a release or a
 * new lease is seen as soon as it is committed; it never spins.
 */
final class BlockingAcquire {

    /** The longest a waiting {@link CoordinationClient#acquire} sleeps in one read before it looks again. */
    static final Duration MAX_WAIT_PER_PASS = Duration.ofSeconds(1);
    /** The shortest wait between passes, so a lost race never becomes a busy loop. */
    static final Duration MIN_WAIT_PER_PASS = Duration.ofMillis(20);

    private final CoordinationRuntime runtime;
    private final InstantSource clock;
    // One election pass of the client (which refuses once it is closed).
    private final BiFunction<Role, MemberId, Engine.Attempt> pass;
    private final RoleFolds folds;

    BlockingAcquire(CoordinationRuntime runtime, BiFunction<Role, MemberId, Engine.Attempt> pass, RoleFolds folds) {
        this.runtime = runtime;
        this.clock = runtime.clock();
        this.pass = pass;
        this.folds = folds;
    }

    /**
     * @throws CoordinationTimeoutException when the role was not won within {@code timeout}
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    LeadershipTerm acquire(Role role, MemberId me, Duration timeout) throws InterruptedException {
        long deadline = runtime.nanoTime() + timeout.toNanos();
        while (true) {
            Engine.Attempt attempt = pass.apply(role, me);
            if (attempt.leadership() != null) {
                return attempt.leadership();
            }
            long remaining = deadline - runtime.nanoTime();
            if (remaining <= 0) {
                throw new CoordinationTimeoutException(me + " did not win role " + role + " within " + timeout
                        + "; last decision: " + attempt.decision());
            }
            Duration wait = MAX_WAIT_PER_PASS;
            if (attempt.decision() instanceof Decision.Wait pending) {
                wait = min(wait, Duration.between(clock.instant(), pending.challengeAt()));
            }
            wait = max(MIN_WAIT_PER_PASS, min(wait, Duration.ofNanos(remaining)));
            try {
                folds.refresh(role, wait);
            } catch (CoordinationException e) {
                if (Thread.interrupted()) {
                    throw new InterruptedException(me + " was interrupted while waiting for role " + role);
                }
                throw e;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException(me + " was interrupted while waiting for role " + role);
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
