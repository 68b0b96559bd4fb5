package io.krabka.streams.coordination.client;

/** How a {@link Contender#handOver} ended. */
public enum HandoverResult {
    /** The role was released with the named member first in line; it takes over at once unless it died since. */
    HANDED_OVER,
    /** This member does not hold the role (any more). */
    NOT_HOLDING,
    /** The named member is not registered for the role, or is this member. */
    NOT_A_STANDBY,
    /**
     * The named member did not answer: it did not register again within
     * {@link Handover#PROBE_TIMEOUT} after its registration was removed. This member keeps
     * the role; the silent member is out of the roster until it registers again.
     */
    TARGET_SILENT,
    /**
     * Another handover of the role is under way, or a renewal of the role is blocked on the
     * cluster (the pass that would release is stuck in it). This member keeps the role;
     * asking again later may succeed.
     */
    BUSY
}
