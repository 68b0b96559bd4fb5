package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Answer;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * A {@link LeaderOnly} handler whose guarded write was refused because this member lost
 * the role while it handled the request ({@link FencedException}) answers 503 with
 * {@code Retry-After} and a problem, not 500 ({@link LeaderOnlyRouter#deposed}).
 */
final class DeposedHolderResolver implements HandlerExceptionResolver, Ordered {

    private final LeaderOnlyHandlers handlers;
    private final LeaderOnlyRouter router;

    DeposedHolderResolver(LeaderOnlyHandlers handlers, LeaderOnlyRouter router) {
        this.handlers = handlers;
        this.router = router;
    }

    @Override
    public ModelAndView resolveException(
            HttpServletRequest request, HttpServletResponse response, Object handler, Exception exception) {
        if (!(handler instanceof HandlerMethod method) || response.isCommitted()) {
            return null;
        }
        Optional<Answer> deposed = handlers.roleOf(method.getMethod(), method.getBeanType())
                .flatMap((Role role) -> router.deposed(role, exception));
        if (deposed.isEmpty()) {
            return null;
        }
        response.reset();
        LeaderOnlyInterceptor.problem(response, deposed.get());
        return new ModelAndView();
    }

    /** Before Spring MVC's own resolvers, so an application's catch-all {@code @ExceptionHandler} does not see it first. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
