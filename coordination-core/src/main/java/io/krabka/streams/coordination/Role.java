package io.krabka.streams.coordination;

import java.nio.charset.StandardCharsets;

/**
 * The name of one role that members compete for, such as {@code controller}.
 *
 * <p>A role is used verbatim as the {@code transactional.id} of the role's producer, so
 * its producer epoch is the leadership epoch. A valid role is non-blank Unicode text of
 * at most {@value #MAX_ROLE_LEN} UTF-8 bytes with no ISO control characters and no
 * unpaired surrogates. The byte limit is Kafka's topic-name limit: generous for a
 * {@code transactional.id}, well inside the i16 string layout of the record format,
 * and the same as {@code MAX_ROLE_LEN} of the Rust crate.
 *
 * @param name the role name, exactly as it appears on the wire
 */
public record Role(String name) {

    /** The largest role name, in UTF-8 bytes. */
    public static final int MAX_ROLE_LEN = 249;

    /**
     * Validates the name.
     *
     * @throws IllegalArgumentException naming what is wrong with the name
     */
    public Role {
        Names.require("role", name, MAX_ROLE_LEN);
    }

    /**
     * Returns the role with this name.
     *
     * @throws IllegalArgumentException naming what is wrong with the name
     */
    public static Role of(String name) {
        return new Role(name);
    }

    /** Returns the name in UTF-8, the bytes Kafka hashes and the record format carries. */
    public byte[] utf8() {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return name;
    }
}
