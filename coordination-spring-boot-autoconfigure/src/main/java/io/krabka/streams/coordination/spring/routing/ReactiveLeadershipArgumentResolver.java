package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import org.springframework.core.MethodParameter;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Resolves a {@link Leadership} or {@link GuardedSender} parameter of a WebFlux
 * {@link LeaderOnly} handler ({@link LeadershipArguments}).
 */
final class ReactiveLeadershipArgumentResolver implements HandlerMethodArgumentResolver {

    private final LeadershipArguments arguments;

    ReactiveLeadershipArgumentResolver(LeadershipArguments arguments) {
        this.arguments = arguments;
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        return arguments.supports(parameter);
    }

    @Override
    public Mono<Object> resolveArgument(MethodParameter parameter, BindingContext context, ServerWebExchange exchange) {
        return Mono.fromSupplier(
                () -> arguments.resolve(parameter, exchange.getAttribute(LeaderOnlyRouter.LEADERSHIP)));
    }
}
