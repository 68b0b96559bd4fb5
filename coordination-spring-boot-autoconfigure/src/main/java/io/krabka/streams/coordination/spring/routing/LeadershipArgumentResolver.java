package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

/**
 * Resolves a {@link Leadership} or {@link GuardedSender} parameter of a Spring MVC
 * {@link LeaderOnly} handler ({@link LeadershipArguments}).
 */
final class LeadershipArgumentResolver implements HandlerMethodArgumentResolver {

    private final LeadershipArguments arguments;

    LeadershipArgumentResolver(LeadershipArguments arguments) {
        this.arguments = arguments;
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        return arguments.supports(parameter);
    }

    @Override
    public Object resolveArgument(
            MethodParameter parameter,
            ModelAndViewContainer container,
            NativeWebRequest request,
            WebDataBinderFactory binders) {
        return arguments.resolve(
                parameter, request.getAttribute(LeaderOnlyRouter.LEADERSHIP, RequestAttributes.SCOPE_REQUEST));
    }
}
