package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.context.ApplicationListener;

/**
 * Which roles' work fails here: per role, how many of this member's leaderships of it in a
 * row ended {@link LeadershipEndCause#FAILED} (the work threw: a missing input topic, a
 * record that cannot be dead-lettered, a bug), and the last failure. A role counts as
 * failing for {@link #WINDOW} after such an end, unless a later leadership of it here ends
 * otherwise; work that fails at every grant is failing all the time, and a single failure
 * clears by itself. Fed by the {@link LeadershipEndedEvent}s of this member.
 */
public final class RoleWorkFailures implements ApplicationListener<LeadershipEndedEvent> {

    /** How long a role counts as failing after a leadership of it here ended FAILED. */
    public static final Duration WINDOW = Duration.ofMinutes(1);

    private final CoordinationRuntime runtime;
    private final Map<Role, Failure> failures = new ConcurrentHashMap<>();

    private record Failure(int inARow, long atNanos, String message) {}

    /** Failures timed on {@code runtime}'s ticker. */
    public RoleWorkFailures(CoordinationRuntime runtime) {
        this.runtime = runtime;
    }

    @Override
    public void onApplicationEvent(LeadershipEndedEvent event) {
        if (event.cause() != LeadershipEndCause.FAILED) {
            failures.remove(event.role());
            return;
        }
        String message = event.failure().map(RoleWorkFailures::describe).orElse("no failure was reported");
        failures.compute(
                event.role(),
                (role, before) -> new Failure(before == null ? 1 : before.inARow() + 1, runtime.nanoTime(), message));
    }

    /**
     * What to say about {@code role} while its work counts as failing here: how many
     * leaderships in a row ended FAILED, how long ago the last did, and why.
     */
    public Optional<String> failing(Role role) {
        Failure failure = failures.get(role);
        if (failure == null) {
            return Optional.empty();
        }
        long ago = runtime.nanoTime() - failure.atNanos();
        if (ago > WINDOW.toNanos()) {
            return Optional.empty();
        }
        return Optional.of(
                (failure.inARow() == 1 ? "the last leadership here" : failure.inARow() + " leaderships here in a row")
                        + " ended FAILED, the last " + Duration.ofNanos(ago).toSeconds() + " s ago: "
                        + failure.message());
    }

    /** The failure's class and message; for a wrapper without a message of its own (a reflective call's), its cause's. */
    private static String describe(Throwable failure) {
        Throwable named = failure;
        while ((named.getMessage() == null || named.getMessage().isBlank())
                && named.getCause() != null
                && named.getCause() != named) {
            named = named.getCause();
        }
        return named.getClass().getSimpleName() + (named.getMessage() == null ? "" : ": " + named.getMessage());
    }
}
