package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Instant;

/**
 * What a leadership term needs of the client that granted it: the timings, the runtime,
 * how sends are grouped and wrapped, a grant time, and where to say the term ended. The
 * {@link Engine} is the one implementation; a term sees nothing else of it.
 */
public interface TermHost {

    LeaseConfig config();

    CoordinationRuntime runtime();

    Instant now();

    SendBatching sendBatching();

    CoordinationInstrumentation instrumentation();

    /** A new grant's {@code granted_at}: see {@link Engine#grantTime}. */
    long grantTime(Role role);

    /** The term ended: the client no longer counts it as held. */
    void ended(LeadershipTerm leadership);

    /** The term was released: its member left the roster, so its registration goes too. */
    void released(LeadershipTerm leadership);
}
