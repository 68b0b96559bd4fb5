package io.krabka.coordination.chaos.harness;

/** The faults a plan can schedule. */
public enum FaultKind {
    /** SIGKILL the role's holder; once another member holds the role, start the killed one again. */
    KILL_LEADER,
    /** SIGSTOP the holder until another member holds the role (so longer than the lease), then SIGCONT: the zombie. */
    PAUSE_LEADER,
    /** Black-hole the holder's connections to every broker until another member holds the role, then restore them. */
    CUT_LEADER,
    /** SIGKILL a broker (half the time the leader of the role's coordination partition) and restart it. */
    KILL_BROKER,
    /** Append garbage and unknown-version records to the role's partition of the coordination topic. */
    GARBAGE,
    /** SIGSTOP a broker (half the time the leader of the role's coordination partition) past its session timeout, then SIGCONT. */
    PAUSE_BROKER,
    /** SIGTERM the holder (a Spring member shuts down and releases the role); once another holds it, start it again. */
    TERM_LEADER,
    /**
     * A challenger that runs InitProducerId for the role's transactional id (fencing the
     * holder), commits one marker to the command log, and dies without writing a lease.
     */
    CHALLENGER
}
