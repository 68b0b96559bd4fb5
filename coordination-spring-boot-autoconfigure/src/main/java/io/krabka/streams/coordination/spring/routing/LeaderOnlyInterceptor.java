package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Answer;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Decision;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Handle;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Send;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Routes Spring MVC {@link LeaderOnly} requests as {@link LeaderOnlyRouter} decides: lets
 * the holder handle them, and on any other member forwards or redirects them to the
 * holder, or answers 503 (no holder, or a forwarded request for a role this member does
 * not hold) or 502 (the holder's address is not an allowed target), with an RFC 9457
 * problem body.
 */
final class LeaderOnlyInterceptor implements HandlerInterceptor {

    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyInterceptor.class);

    private final LeaderOnlyHandlers handlers;
    private final LeaderOnlyRouter router;
    private final ServletForwarder forwarder;

    LeaderOnlyInterceptor(LeaderOnlyHandlers handlers, LeaderOnlyRouter router, ServletForwarder forwarder) {
        this.handlers = handlers;
        this.router = router;
        this.forwarder = forwarder;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws Exception {
        if (!(handler instanceof HandlerMethod method)) {
            return true;
        }
        Optional<Role> found = handlers.roleOf(method.getMethod(), method.getBeanType());
        if (found.isEmpty()) {
            return true;
        }
        Role role = found.get();
        Decision decision = router.decide(role, request.getHeader(RoutingHeaders.FORWARDED_BY));
        if (decision instanceof Handle handle) {
            holderHeaders(
                    response, handle.leadership().member(), handle.leadership().term());
            request.setAttribute(LeaderOnlyRouter.LEADERSHIP, handle.leadership());
            return true;
        }
        if (decision instanceof Answer answer) {
            return problem(response, answer);
        }
        Send send = (Send) decision;
        URI target = ServletForwarder.target(send.base(), request);
        if (send.redirect()) {
            holderHeaders(response, send.holder(), send.term());
            response.setStatus(HttpStatus.TEMPORARY_REDIRECT.value());
            response.setHeader("Location", target.toString());
            return false;
        }
        try {
            router.forwarded(role, forwarder.forward(request, response, target));
        } catch (IOException e) {
            router.forwardFailed(role);
            if (response.isCommitted()) {
                throw e;
            }
            response.reset();
            return problem(response, router.unreachable(role, send, e));
        }
        return false;
    }

    private static void holderHeaders(HttpServletResponse response, MemberId holder, long term) {
        LeaderOnlyRouter.holderHeaders(holder, term).forEach(response::setHeader);
    }

    /** Writes {@code answer}: its status, headers and problem body. */
    static boolean problem(HttpServletResponse response, Answer answer) {
        response.setStatus(answer.status());
        answer.headers().forEach(response::setHeader);
        byte[] body = answer.body();
        response.setContentLength(body.length);
        try {
            response.getOutputStream().write(body);
        } catch (IOException e) {
            log.debug("Could not write a routing problem", e);
        }
        return false;
    }
}
