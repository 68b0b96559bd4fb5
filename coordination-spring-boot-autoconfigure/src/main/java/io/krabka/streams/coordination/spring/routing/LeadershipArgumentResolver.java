package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.GuardedSenders;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

/**
 * Resolves a {@link Leadership} or {@link GuardedSender} parameter of a {@link LeaderOnly}
 * handler to this member's leadership of the role, the one the request is handled under,
 * as {@code @OnLeadership} methods get them.
 */
final class LeadershipArgumentResolver implements HandlerMethodArgumentResolver {

    private final LeaderOnlyHandlers handlers;
    private final ObjectProvider<GuardedSenders> senders;

    LeadershipArgumentResolver(LeaderOnlyHandlers handlers, ObjectProvider<GuardedSenders> senders) {
        this.handlers = handlers;
        this.senders = senders;
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        Class<?> type = parameter.getParameterType();
        return (type == Leadership.class || type == GuardedSender.class) && parameter.getMethod() != null
                && handlers.roleOf(parameter.getMethod(), parameter.getContainingClass()).isPresent();
    }

    @Override
    public Object resolveArgument(MethodParameter parameter, ModelAndViewContainer container, NativeWebRequest request,
            WebDataBinderFactory binders) {
        Object leadership = request.getAttribute(LeaderOnlyInterceptor.LEADERSHIP, RequestAttributes.SCOPE_REQUEST);
        if (!(leadership instanceof Leadership held)) {
            throw new IllegalStateException("@LeaderOnly handler " + parameter.getMethod() + " was called without a "
                    + "leadership: the routing interceptor did not run for it");
        }
        if (parameter.getParameterType() == Leadership.class) {
            return held;
        }
        GuardedSenders found = senders.getIfAvailable();
        if (found == null) {
            throw new IllegalStateException("@LeaderOnly handler " + parameter.getMethod() + " takes a GuardedSender, but "
                    + "there is no GuardedSenders bean: it needs Spring Kafka's producer factory");
        }
        return found.of(held);
    }
}
