package io.krabka.streams.coordination.spring.routing;

/** What a member that does not hold a role does with a {@link LeaderOnly} request. */
public enum RoutingMode {

    /** Proxies it to the holder and streams the answer back. */
    FORWARD,

    /** Answers 307 with the holder's URL. */
    REDIRECT
}
