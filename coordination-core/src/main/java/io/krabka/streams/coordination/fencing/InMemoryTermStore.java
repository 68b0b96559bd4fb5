package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/** {@link TermStore#inMemory()}: one atomic compare-and-raise per role and scope. */
final class InMemoryTermStore implements TermStore {

    private record Key(Role role, String scope) {

        Key {
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(scope, "scope");
        }
    }

    private final Map<Key, Long> highest = new ConcurrentHashMap<>();

    @Override
    public boolean admit(Role role, String scope, long term) {
        boolean[] admitted = new boolean[1];
        highest.compute(new Key(role, scope), (k, before) -> {
            admitted[0] = before == null || term >= before;
            return admitted[0] ? Long.valueOf(term) : before;
        });
        return admitted[0];
    }

    @Override
    public OptionalLong highest(Role role, String scope) {
        Long term = highest.get(new Key(role, scope));
        return term == null ? OptionalLong.empty() : OptionalLong.of(term);
    }
}
