package io.krabka.streams.coordination;

/** Why a leadership ended. Every end is final: to hold the role again, a member acquires it anew. */
public enum LeadershipEndCause {

    /** Another member ran InitProducerId for the role: the broker rejects this leadership's writes. */
    FENCED,

    /**
     * The lease deadline passed without a successful renewal (the cluster did not answer,
     * or this member was paused). A standby may already hold the role.
     */
    EXPIRED,

    /**
     * Something failed beyond recovery: the role's producer (it could not even abort a
     * transaction), or the role's work, or a listener of the grant. Where the member could
     * still write, it wrote a lease tombstone so a standby takes over at once.
     */
    FAILED,

    /** This member gave the role up: on request, on shutdown, or because its work returned. */
    RELEASED
}
