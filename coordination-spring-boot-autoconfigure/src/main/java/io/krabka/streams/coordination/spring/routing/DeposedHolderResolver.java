package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * A {@link LeaderOnly} handler whose guarded write was refused because this member lost
 * the role while it handled the request ({@link FencedException}) answers 503 with
 * {@code Retry-After} and a problem, not 500: nothing of the refused write was written,
 * and the caller should send the request again (it reaches the new holder).
 */
final class DeposedHolderResolver implements HandlerExceptionResolver, Ordered {

    static final java.net.URI DEPOSED = java.net.URI.create("urn:krabka:routing:deposed");

    private final LeaderOnlyHandlers handlers;
    private final String member;

    DeposedHolderResolver(LeaderOnlyHandlers handlers, String member) {
        this.handlers = handlers;
        this.member = member;
    }

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception exception) {
        if (!(handler instanceof HandlerMethod method)) {
            return null;
        }
        Optional<Role> role = handlers.roleOf(method.getMethod(), method.getBeanType());
        FencedException fenced = fenced(exception);
        if (role.isEmpty() || fenced == null || response.isCommitted()) {
            return null;
        }
        response.reset();
        LeaderOnlyInterceptor.problem(response, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, DEPOSED, "Holder deposed",
                "member " + member + " lost role " + role.get() + " while handling this request (" + fenced.endCause()
                        + "): the broker refused its write, so nothing of that write was written; send the request again",
                role.get().name()), Duration.ofSeconds(1));
        return new ModelAndView();
    }

    private static FencedException fenced(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof FencedException fenced) {
                return fenced;
            }
        }
        return null;
    }

    /** Before Spring MVC's own resolvers, so an application's catch-all {@code @ExceptionHandler} does not see it first. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
