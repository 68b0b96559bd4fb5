package io.krabka.streams.coordination.spring.routing;

/** The HTTP headers of routed {@link LeaderOnly} requests and their answers. */
public final class RoutingHeaders {

    /** On every routed answer: the member that holds the role (and handled the request, if it was handled). */
    public static final String HOLDER = "Krabka-Role-Holder";

    /** On every routed answer: the term of the holder's leadership. */
    public static final String TERM = "Krabka-Role-Term";

    /**
     * The hop marker: a forwarded request carries the id of the member that forwarded it.
     * A member that gets one for a role it does not hold answers 503 and never forwards it again.
     */
    public static final String FORWARDED_BY = "Krabka-Forwarded-By";

    private RoutingHeaders() {}
}
