package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Routes Spring MVC {@link LeaderOnly} requests: lets the holder handle them, and on any
 * other member forwards or redirects them to the holder, or answers 503 (no holder, or a
 * forwarded request for a role this member does not hold) or 502 (the holder's address
 * is not an allowed target), with an RFC 9457 problem body.
 */
final class LeaderOnlyInterceptor implements HandlerInterceptor {

    /** The request attribute that carries the leadership a request is handled under. */
    static final String LEADERSHIP = LeaderOnlyInterceptor.class.getName() + ".leadership";

    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyInterceptor.class);

    private final LeaderOnlyHandlers handlers;
    private final HolderRoutes routes;
    private final RoutingMode mode;
    private final ServletForwarder forwarder;

    LeaderOnlyInterceptor(LeaderOnlyHandlers handlers, HolderRoutes routes, RoutingMode mode, ServletForwarder forwarder) {
        this.handlers = handlers;
        this.routes = routes;
        this.mode = mode;
        this.forwarder = forwarder;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) throws Exception {
        if (!(handler instanceof HandlerMethod method)) {
            return true;
        }
        Optional<Role> found = handlers.roleOf(method.getMethod(), method.getBeanType());
        if (found.isEmpty()) {
            return true;
        }
        Role role = found.get();
        String forwardedBy = request.getHeader(RoutingHeaders.FORWARDED_BY);
        if (forwardedBy != null) {
            // One hop only: handle it if this member holds the role, else refuse, never forward again.
            return routes.held(role).map(leadership -> handleHere(request, response, new Route.Here(leadership)))
                    .orElseGet(() -> problem(response, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, Problems.NOT_HOLDER,
                            "Not the holder", "member " + forwardedBy + " forwarded this request for role " + role
                                    + " to member " + routes.member() + ", which does not hold it; it is not forwarded again",
                            role.name()), Duration.ofSeconds(1)));
        }
        Route route;
        try {
            route = routes.route(role);
        } catch (CoordinationException e) {
            return problem(response, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, Problems.NO_HOLDER, "No holder known",
                    "member " + routes.member() + " cannot read who holds role " + role + ": " + e.getMessage(), role.name()),
                    Duration.ofSeconds(1));
        }
        if (route instanceof Route.Here here) {
            return handleHere(request, response, here);
        }
        if (route instanceof Route.NoHolder none) {
            return problem(response, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, Problems.NO_HOLDER, "No holder",
                    none.detail(), role.name()), none.retryAfter());
        }
        if (route instanceof Route.Refused refused) {
            holderHeaders(response, refused.holder().value(), refused.term());
            log.warn("Did not route a @LeaderOnly request for role {}: {}", role, refused.detail());
            return problem(response, Problems.of(HttpStatus.BAD_GATEWAY, Problems.REFUSED_TARGET, "Holder not routable",
                    refused.detail(), role.name()), null);
        }
        Route.There there = (Route.There) route;
        URI target = ServletForwarder.target(there.base(), request);
        if (mode == RoutingMode.REDIRECT) {
            holderHeaders(response, there.holder().value(), there.term());
            response.setStatus(HttpStatus.TEMPORARY_REDIRECT.value());
            response.setHeader("Location", target.toString());
            return false;
        }
        try {
            int status = forwarder.forward(request, response, target);
            if (status == HttpStatus.SERVICE_UNAVAILABLE.value()) {
                routes.forget(role); // the holder may have changed: read again next time
            }
        } catch (IOException e) {
            routes.forget(role);
            if (response.isCommitted()) {
                throw e;
            }
            response.reset();
            holderHeaders(response, there.holder().value(), there.term());
            return problem(response, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, Problems.HOLDER_UNREACHABLE,
                    "Holder unreachable", "the holder " + there.holder() + " of role " + role + " at " + there.base()
                            + " did not answer: " + e, role.name()), Duration.ofSeconds(1));
        }
        return false;
    }

    private static boolean handleHere(HttpServletRequest request, HttpServletResponse response, Route.Here here) {
        holderHeaders(response, here.leadership().member().value(), here.leadership().term());
        request.setAttribute(LEADERSHIP, here.leadership());
        return true;
    }

    private static void holderHeaders(HttpServletResponse response, String holder, long term) {
        response.setHeader(RoutingHeaders.HOLDER, holder);
        response.setHeader(RoutingHeaders.TERM, Long.toString(term));
    }

    static boolean problem(HttpServletResponse response, ProblemDetail problem, Duration retryAfter) {
        response.setStatus(problem.getStatus());
        if (retryAfter != null) {
            response.setHeader("Retry-After", Problems.retryAfter(retryAfter));
        }
        response.setContentType(Problems.MEDIA_TYPE);
        byte[] body = Problems.json(problem).getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        try {
            response.getOutputStream().write(body);
        } catch (IOException e) {
            log.debug("Could not write a routing problem", e);
        }
        return false;
    }
}
