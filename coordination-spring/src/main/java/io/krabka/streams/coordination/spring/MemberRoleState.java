package io.krabka.streams.coordination.spring;

/** What this member is doing for one role, as the leadership loop sees it. */
public enum MemberRoleState {

    /** Contending: registered and waiting for its turn. */
    STANDBY,

    /** Holding the role. */
    LEADER,

    /** Not contending: the loop is not running. */
    STOPPED
}
