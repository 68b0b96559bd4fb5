package io.krabka.streams.coordination.testing;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the listeners of a test's contenders heard, in order: "a granted" and "a ended
 * FENCED" lines, and the end causes alone, for tests that only watch grants and ends.
 */
public final class ListenerLog {

    private final List<String> events = new CopyOnWriteArrayList<>();
    private final List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();

    /** A listener for member {@code name} that records here. */
    public Contender.Listener of(String name) {
        return new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                events.add(name + " granted");
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                events.add(name + " ended " + cause);
                ends.add(cause);
            }
        };
    }

    /** Every grant and end, in the order heard. */
    public List<String> events() {
        return List.copyOf(events);
    }

    /** The causes of every end heard, of any member, in order. */
    public List<LeadershipEndCause> ends() {
        return List.copyOf(ends);
    }

    @Override
    public String toString() {
        return events.toString();
    }
}
