package io.krabka.streams.coordination.members;

import io.krabka.streams.coordination.CoordinationException;
import java.util.Locale;
import java.util.Objects;

/**
 * The one exception that decoding untrusted member address bytes throws.
 * {@link #problem()} says what kind of damage it is; the message says where.
 */
public final class MalformedAddressException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /** What is wrong with a record: the error words of golden-vectors/member-addresses.json. */
    public enum Problem {
        /** The bytes end before a field is complete. */
        TRUNCATED,
        /** A key or value version other than 0. */
        UNSUPPORTED_VERSION,
        /** A string length below zero. */
        NEGATIVE_LENGTH,
        /** String bytes that are not standard UTF-8. */
        MALFORMED_UTF8,
        /** Bytes left over after the last field. */
        TRAILING_BYTES,
        /** A member that is not a valid member id. */
        INVALID_NAME,
        /** A url that breaks the url rules. */
        INVALID_URL;

        /** The lower-case word the golden vectors use for this problem. */
        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Problem problem;

    public MalformedAddressException(Problem problem, String detail) {
        super(Objects.requireNonNull(problem, "problem").code() + ": " + detail);
        this.problem = problem;
    }

    /** What kind of damage the record has. */
    public Problem problem() {
        return problem;
    }
}
