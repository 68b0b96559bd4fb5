package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.util.OptionalLong;

/**
 * Where a {@link TermGate} keeps the highest term it admitted per role and scope: in
 * memory ({@link #inMemory()}), in a database table ({@link JdbcTermStore}), or wherever
 * the device keeps its own state. The scope is what the device's commands are ordered by
 * (a device key, a partition; see {@link TermGate}); {@value #WHOLE_ROLE} is the one scope
 * of a gate that keeps one term per role. Keep the store next to what the commands change,
 * so that a command and the term that allowed it are stored together or not at all: a gate
 * whose store forgets (a restart of an in-memory one) admits a deposed leader's command once
 * more.
 */
public interface TermStore {

    /** The scope of a gate that keeps one term per role ({@link TermGate#perRole}): the empty string. */
    String WHOLE_ROLE = "";

    /**
     * Atomically: when {@code term} is at least the highest term admitted for
     * {@code role} in {@code scope} (or none was), records it as the highest and returns
     * true; otherwise changes nothing and returns false. Equal terms are admitted: one
     * leadership writes many records. Scopes are independent of each other.
     */
    boolean admit(Role role, String scope, long term);

    /** The highest term admitted for {@code role} in {@code scope}; empty before the first. */
    OptionalLong highest(Role role, String scope);

    /**
     * {@link #admit(Role, String, long)} in the scope {@link #WHOLE_ROLE}.
     *
     * @deprecated one term per role refuses committed commands of a topic with several
     *     partitions; pass the scope
     */
    @Deprecated
    default boolean admit(Role role, long term) {
        return admit(role, WHOLE_ROLE, term);
    }

    /**
     * {@link #highest(Role, String)} in the scope {@link #WHOLE_ROLE}.
     *
     * @deprecated pass the scope
     */
    @Deprecated
    default OptionalLong highest(Role role) {
        return highest(role, WHOLE_ROLE);
    }

    /** A store in this JVM's memory, thread-safe; it forgets everything when the JVM ends. */
    static TermStore inMemory() {
        return new InMemoryTermStore();
    }
}
