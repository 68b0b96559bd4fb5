package io.krabka.streams.coordination.record;

/** The two kinds of record in {@code __coordination_state}, as the key's i16 kind field. */
public enum RecordKind {

    /** A member's registration for a role: kind 0. Its offset is the member's join sequence. */
    REGISTRATION((short) 0),

    /** The lease of a role: kind 1. Written only by the role's transactional producer. */
    LEASE((short) 1);

    private final short code;

    RecordKind(short code) {
        this.code = code;
    }

    /** The value of the key's kind field. */
    public short code() {
        return code;
    }
}
