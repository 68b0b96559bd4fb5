package io.krabka.streams.coordination.spring;

/** Why a leadership ended. */
public enum LeadershipEndCause {

    /** The broker refused a write: another member holds a newer epoch. */
    FENCED,

    /**
     * The lease deadline passed without a successful renewal. A standby may already hold
     * the role; this member stops its work and rejoins as a standby.
     */
    EXPIRED,

    /**
     * The role's producer failed beyond recovery (it could not even abort a
     * transaction); this member can no longer write with its epoch and contends again.
     */
    FAILED,

    /** This member released the role: on shutdown, or on request. */
    RELEASED
}
