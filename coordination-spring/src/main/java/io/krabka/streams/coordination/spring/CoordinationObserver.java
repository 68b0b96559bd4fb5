package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import java.time.Duration;

/** Hooks the leadership loop calls, for metrics. Every method does nothing by default. */
public interface CoordinationObserver {

    /** A role was granted after an acquisition that took {@code took}. */
    default void granted(Role role, Duration took) {}

    /** A leadership ended. */
    default void ended(Role role, LeadershipEndCause cause) {}

    /** A renewal succeeded after {@code took}. */
    default void renewed(Role role, Duration took) {}

    /** A renewal failed with a non-fenced error. */
    default void renewFailed(Role role) {}
}
