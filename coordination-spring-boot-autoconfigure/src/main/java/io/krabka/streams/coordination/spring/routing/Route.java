package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.client.Leadership;
import java.net.URI;
import java.time.Duration;

/** Where a {@link LeaderOnly} request of a role goes, as this member sees it now. */
public sealed interface Route {

    /** This member holds the role: handle it here, under this leadership. */
    record Here(Leadership leadership) implements Route {}

    /** Another member holds the role and may be sent the request at {@code base}. */
    record There(MemberId holder, long term, URI base) implements Route {}

    /** No member holds the role (or none that can be reached yet): try again after {@code retryAfter}. */
    record NoHolder(Duration retryAfter, String detail) implements Route {}

    /** A member holds the role, but this member will not send the request there: {@code detail} says why. */
    record Refused(MemberId holder, long term, String detail) implements Route {}
}
