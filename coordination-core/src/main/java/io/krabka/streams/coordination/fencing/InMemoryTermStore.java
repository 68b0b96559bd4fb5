package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/** {@link TermStore#inMemory()}: one atomic compare-and-raise per role. */
final class InMemoryTermStore implements TermStore {

    private final Map<Role, Long> highest = new ConcurrentHashMap<>();

    @Override
    public boolean admit(Role role, long term) {
        Objects.requireNonNull(role, "role");
        boolean[] admitted = new boolean[1];
        highest.compute(role, (r, before) -> {
            admitted[0] = before == null || term >= before;
            return admitted[0] ? Long.valueOf(term) : before;
        });
        return admitted[0];
    }

    @Override
    public OptionalLong highest(Role role) {
        Long term = highest.get(role);
        return term == null ? OptionalLong.empty() : OptionalLong.of(term);
    }
}
