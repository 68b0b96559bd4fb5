package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.util.OptionalLong;

/**
 * Where a {@link TermGate} keeps the highest term it admitted per role: in memory
 * ({@link #inMemory()}), in a database table ({@link JdbcTermStore}), or wherever the
 * device keeps its own state. Keep it next to what the commands change, so that a command
 * and the term that allowed it are stored together or not at all: a gate whose store
 * forgets (a restart of an in-memory one) admits a deposed leader's command once more.
 */
public interface TermStore {

    /**
     * Atomically: when {@code term} is at least the highest term admitted for
     * {@code role} (or none was), records it as the highest and returns true; otherwise
     * changes nothing and returns false. Equal terms are admitted: one leadership writes
     * many records.
     */
    boolean admit(Role role, long term);

    /** The highest term admitted for {@code role}; empty before the first. */
    OptionalLong highest(Role role);

    /** A store in this JVM's memory, thread-safe; it forgets everything when the JVM ends. */
    static TermStore inMemory() {
        return new InMemoryTermStore();
    }
}
