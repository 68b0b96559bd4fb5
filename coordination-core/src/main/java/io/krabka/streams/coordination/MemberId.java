package io.krabka.streams.coordination;

/**
 * The identity of one member that competes for roles, such as {@code node-1}.
 *
 * <p>A member's rank is the position of its registration in the log, so a member id
 * should stay the same across restarts of one process (a host name, a pod name). A
 * valid member id is non-blank Unicode text of at most {@value #MAX_MEMBER_ID_LEN}
 * UTF-8 bytes with no ISO control characters and no unpaired surrogates.
 *
 * @param value the member id, exactly as it appears on the wire
 */
public record MemberId(String value) {

    /** The largest member id, in UTF-8 bytes. */
    public static final int MAX_MEMBER_ID_LEN = 255;

    /**
     * Validates the id.
     *
     * @throws IllegalArgumentException naming what is wrong with the id
     */
    public MemberId {
        Names.require("member id", value, MAX_MEMBER_ID_LEN);
    }

    /**
     * Returns the member with this id.
     *
     * @throws IllegalArgumentException naming what is wrong with the id
     */
    public static MemberId of(String value) {
        return new MemberId(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
