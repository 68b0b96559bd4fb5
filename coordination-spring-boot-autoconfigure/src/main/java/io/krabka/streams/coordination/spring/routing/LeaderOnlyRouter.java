package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * What a member does with a {@link LeaderOnly} request, for either web stack: handle it,
 * send it to the holder (forward or redirect), or answer a problem. Spring MVC's
 * interceptor and WebFlux's handler adapter only carry these decisions out, so both
 * stacks route alike.
 */
final class LeaderOnlyRouter {

    /** The request (MVC) or exchange (WebFlux) attribute that carries the leadership a request is handled under. */
    static final String LEADERSHIP = LeaderOnlyRouter.class.getName() + ".leadership";

    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyRouter.class);
    private static final Duration RETRY = Duration.ofSeconds(1);

    /** What to do with one request. */
    sealed interface Decision {}

    /** Handle it here, under {@code leadership}; the answer names its member and term. */
    record Handle(Leadership leadership) implements Decision {}

    /** Send it to the holder at {@code base}: proxy it ({@code redirect} false) or answer 307 with its URL. */
    record Send(MemberId holder, long term, URI base, boolean redirect) implements Decision {}

    /**
     * Answer {@code problem}, with {@code Retry-After} when {@code retryAfter} is not null
     * and the holder's headers when {@code holder} is not null.
     */
    record Answer(ProblemDetail problem, Duration retryAfter, MemberId holder, long term) implements Decision {

        /** The status. */
        int status() {
            return problem.getStatus();
        }

        /** The headers to set: the holder's, {@code Retry-After} and the content type. */
        Map<String, String> headers() {
            Map<String, String> headers = new LinkedHashMap<>();
            if (holder != null) {
                headers.putAll(holderHeaders(holder, term));
            }
            if (retryAfter != null) {
                headers.put("Retry-After", Problems.retryAfter(retryAfter));
            }
            headers.put("Content-Type", Problems.MEDIA_TYPE);
            return headers;
        }

        /** The RFC 9457 body, UTF-8 JSON. */
        byte[] body() {
            return Problems.json(problem).getBytes(StandardCharsets.UTF_8);
        }
    }

    /** The headers that name who decided: {@code Krabka-Role-Holder} and {@code Krabka-Role-Term}. */
    static Map<String, String> holderHeaders(MemberId holder, long term) {
        return Map.of(RoutingHeaders.HOLDER, holder.value(), RoutingHeaders.TERM, Long.toString(term));
    }

    private final HolderRoutes routes;
    private final RoutingMode mode;

    LeaderOnlyRouter(HolderRoutes routes, RoutingMode mode) {
        this.routes = routes;
        this.mode = mode;
    }

    /** This member's id. */
    String member() {
        return routes.member().value();
    }

    /**
     * The decision when it needs no read of the cluster: this member holds the role, or the
     * request was forwarded here ({@code forwardedBy}, the hop marker, not null). Empty
     * when only {@link #routed} can tell.
     */
    Optional<Decision> settled(Role role, String forwardedBy) {
        Optional<Leadership> held = routes.held(role);
        if (held.isPresent()) {
            return Optional.of(new Handle(held.get()));
        }
        if (forwardedBy != null) {
            // One hop only: this member does not hold the role, so refuse, never forward again.
            return Optional.of(new Answer(
                    Problems.of(
                            HttpStatus.SERVICE_UNAVAILABLE,
                            Problems.NOT_HOLDER,
                            "Not the holder",
                            "member " + forwardedBy + " forwarded this request for role " + role + " to member "
                                    + member() + ", which does not hold it; it is not forwarded again",
                            role.name()),
                    RETRY,
                    null,
                    0));
        }
        return Optional.empty();
    }

    /**
     * The decision for a request that was not forwarded here, from the role's lease, roster
     * and the holder's address. Reads the cluster and may wait up to {@code grant-wait} for
     * a grant: never call it on an event loop.
     */
    Decision routed(Role role) {
        Route route;
        try {
            route = routes.route(role);
        } catch (CoordinationException e) {
            return new Answer(
                    Problems.of(
                            HttpStatus.SERVICE_UNAVAILABLE,
                            Problems.NO_HOLDER,
                            "No holder known",
                            "member " + member() + " cannot read who holds role " + role + ": " + e.getMessage(),
                            role.name()),
                    RETRY,
                    null,
                    0);
        }
        if (route instanceof Route.Here here) {
            return new Handle(here.leadership());
        }
        if (route instanceof Route.NoHolder none) {
            return new Answer(
                    Problems.of(
                            HttpStatus.SERVICE_UNAVAILABLE,
                            Problems.NO_HOLDER,
                            "No holder",
                            none.detail(),
                            role.name()),
                    none.retryAfter(),
                    null,
                    0);
        }
        if (route instanceof Route.Refused refused) {
            log.warn("Did not route a @LeaderOnly request for role {}: {}", role, refused.detail());
            return new Answer(
                    Problems.of(
                            HttpStatus.BAD_GATEWAY,
                            Problems.REFUSED_TARGET,
                            "Holder not routable",
                            refused.detail(),
                            role.name()),
                    null,
                    refused.holder(),
                    refused.term());
        }
        Route.There there = (Route.There) route;
        return new Send(there.holder(), there.term(), there.base(), mode == RoutingMode.REDIRECT);
    }

    /** {@link #settled}, else {@link #routed}: may read the cluster and wait. */
    Decision decide(Role role, String forwardedBy) {
        return settled(role, forwardedBy).orElseGet(() -> routed(role));
    }

    /** The holder answered a forward with {@code status}. */
    void forwarded(Role role, int status) {
        if (status == HttpStatus.SERVICE_UNAVAILABLE.value()) {
            routes.forget(role); // the holder may have changed: read again next time
        }
    }

    /** A forward failed: the holder did not answer, or stopped answering. */
    void forwardFailed(Role role) {
        routes.forget(role);
    }

    /** The answer to a forward that the holder did not answer (nothing of it was sent back yet). */
    Answer unreachable(Role role, Send send, Throwable failure) {
        return new Answer(
                Problems.of(
                        HttpStatus.SERVICE_UNAVAILABLE,
                        Problems.HOLDER_UNREACHABLE,
                        "Holder unreachable",
                        "the holder " + send.holder() + " of role " + role + " at " + send.base() + " did not answer: "
                                + failure,
                        role.name()),
                RETRY,
                send.holder(),
                send.term());
    }

    /**
     * The answer to a {@link LeaderOnly} handler that failed because its guarded write was
     * refused, this member having lost the role while it handled the request
     * ({@link FencedException}, or a failure it caused): 503, not 500, since nothing of
     * the refused write was written and the caller should send the request again. Empty
     * for any other failure.
     */
    Optional<Answer> deposed(Role role, Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof FencedException fenced) {
                return Optional.of(new Answer(
                        Problems.of(
                                HttpStatus.SERVICE_UNAVAILABLE,
                                Problems.DEPOSED,
                                "Holder deposed",
                                "member " + member() + " lost role " + role + " while handling this request ("
                                        + fenced.endCause()
                                        + "): the broker refused its write, so nothing of that write was written; send the "
                                        + "request again",
                                role.name()),
                        RETRY,
                        null,
                        0));
            }
        }
        return Optional.empty();
    }
}
