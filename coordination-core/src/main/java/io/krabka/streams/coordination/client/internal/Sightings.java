package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Role;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When this member first saw the newest record of some kind, per role, on its own clock.
 * A record's own timestamps and deadlines are chosen by whoever wrote it; the moment this
 * member first saw it is the one thing about it nobody else can forge.
 */
final class Sightings {

    /**
     * A record this client saw: its identity (a lease's offset, a tombstone's timestamp, a
     * hash of a coordinator report), when it first saw it, and whether that was just now.
     */
    record Sighting(long key, long seenAt, boolean fresh) {}

    private final InstantSource clock;
    private final Map<Role, Sighting> seen = new ConcurrentHashMap<>();

    Sightings(InstantSource clock) {
        this.clock = clock;
    }

    /** The sighting of the record {@code key} of {@code role}: the remembered one, or a fresh one from now. */
    Sighting sight(Role role, long key) {
        Sighting previous = seen.get(role);
        if (previous != null && previous.key() == key) {
            return new Sighting(key, previous.seenAt(), false);
        }
        Sighting fresh = new Sighting(key, clock.millis(), true);
        seen.put(role, fresh);
        return fresh;
    }

    /** Whether something of {@code role} was seen and not forgotten since. */
    boolean seenAny(Role role) {
        return seen.containsKey(role);
    }

    void forget(Role role) {
        seen.remove(role);
    }

    int size() {
        return seen.size();
    }
}
