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
    /**
     * SIGTERM the holder while it writes at full speed (asynchronous guarded sends): the
     * Spring member shuts down and releases its roles; once another holds the role, start it again.
     */
    TERM_LEADER,
    /** Release the role through the starter while its holder writes at full speed; the member stays and contends again. */
    RELEASE_LEADER,
    /**
     * A challenger that runs InitProducerId for the role's transactional id (fencing the
     * holder), commits one marker to the command log, and dies without writing a lease.
     */
    CHALLENGER,
    /**
     * Step one member's lease clock (the holder or a standby) forward or backward by more
     * than a lease, for a while, then back.
     */
    CLOCK_STEP,
    /**
     * Cut the holder from the broker that coordinates the role's transactional id only;
     * its links to the other brokers stay.
     */
    CUT_COORDINATOR,
    /**
     * A hostile producer appends forged lease records (one naming an unknown member with an
     * absurd deadline, one naming a standby) and a lease tombstone to the role's partition.
     */
    FORGE,
    /**
     * Freeze every member (SIGSTOP) until the transaction coordinator expired the role's
     * transactional id, thaw all but the old holder, and thaw that zombie once another
     * member holds the role under a new producer id.
     */
    EXPIRE_TRANSACTIONAL_ID
}
