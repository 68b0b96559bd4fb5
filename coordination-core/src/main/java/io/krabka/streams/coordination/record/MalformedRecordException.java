package io.krabka.streams.coordination.record;

import io.krabka.streams.coordination.CoordinationException;
import java.util.Locale;
import java.util.Objects;

/**
 * The one exception that decoding untrusted {@code __coordination_state} bytes throws.
 * {@link #problem()} says what kind of damage it is; the message says where.
 */
public final class MalformedRecordException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    /**
     * What is wrong with a record. The {@link #code() codes} are the error vocabulary of
     * {@code golden-vectors/README.md}, shared with the Rust and Go implementations.
     */
    public enum Problem {
        /** The bytes end before a field is complete. */
        TRUNCATED,
        /** A key or value version other than 0. */
        UNSUPPORTED_VERSION,
        /** A key kind other than 0 (registration) or 1 (lease). */
        UNKNOWN_KIND,
        /** A string length below zero. */
        NEGATIVE_LENGTH,
        /** String bytes that are not standard UTF-8 (including Java's modified UTF-8). */
        MALFORMED_UTF8,
        /** Bytes left over after the last field. */
        TRAILING_BYTES,
        /** A role or member that is not a valid name, or a member in a lease key. */
        INVALID_NAME,
        /** A lease whose producer id or producer epoch is negative. */
        NEGATIVE_TOKEN,
        /** A registration whose value names another member than its key (a fold check, not a byte check). */
        MEMBER_MISMATCH;

        /** The lower-case word the golden vectors use for this problem. */
        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Problem problem;

    public MalformedRecordException(Problem problem, String detail) {
        super(Objects.requireNonNull(problem, "problem").code() + ": " + detail);
        this.problem = problem;
    }

    /** What kind of damage the record has. */
    public Problem problem() {
        return problem;
    }
}
