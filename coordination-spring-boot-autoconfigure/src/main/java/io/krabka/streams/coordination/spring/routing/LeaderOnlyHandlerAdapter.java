package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Answer;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Decision;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Handle;
import io.krabka.streams.coordination.spring.routing.LeaderOnlyRouter.Send;
import java.net.URI;
import java.util.List;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.DispatchExceptionHandler;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Routes WebFlux {@link LeaderOnly} requests as {@link LeaderOnlyRouter} decides, the
 * twin of Spring MVC's interceptor: the {@code DispatcherHandler} hands it every
 * {@link LeaderOnly} handler method (it is the first {@link HandlerAdapter}), after the
 * handler mapping chose the handler and after the web filters (security) ran. On the
 * holder it passes the request to the adapter that would have invoked the handler
 * (annotated controllers' {@code RequestMappingHandlerAdapter}); otherwise it forwards,
 * redirects or answers the problem itself, and there is no handler result.
 *
 * <p>Finding the holder reads the coordination topic and may wait for a grant (up to
 * {@code grant-wait}): that runs on {@code blocking}, never on the event loop. The holder's
 * own requests and forwarded ones are decided without it.
 */
final class LeaderOnlyHandlerAdapter implements HandlerAdapter, Ordered {

    private final LeaderOnlyHandlers handlers;
    private final LeaderOnlyRouter router;
    private final ReactiveForwarder forwarder;
    private final ObjectProvider<HandlerAdapter> adapters;
    private final Scheduler blocking;
    private volatile List<HandlerAdapter> others;

    LeaderOnlyHandlerAdapter(
            LeaderOnlyHandlers handlers,
            LeaderOnlyRouter router,
            ReactiveForwarder forwarder,
            ObjectProvider<HandlerAdapter> adapters,
            Scheduler blocking) {
        this.handlers = handlers;
        this.router = router;
        this.forwarder = forwarder;
        this.adapters = adapters;
        this.blocking = blocking;
    }

    @Override
    public boolean supports(Object handler) {
        return handler instanceof HandlerMethod method
                && handlers.roleOf(method.getMethod(), method.getBeanType()).isPresent();
    }

    @Override
    public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
        HandlerMethod method = (HandlerMethod) handler;
        Role role = handlers.roleOf(method.getMethod(), method.getBeanType()).orElseThrow();
        String forwardedBy = exchange.getRequest().getHeaders().getFirst(RoutingHeaders.FORWARDED_BY);
        Mono<Decision> decision = router.settled(role, forwardedBy)
                .map(Mono::just)
                .orElseGet(() -> Mono.fromCallable(() -> router.routed(role)).subscribeOn(blocking));
        return decision.flatMap(decided -> carryOut(exchange, method, role, decided));
    }

    private Mono<HandlerResult> carryOut(
            ServerWebExchange exchange, HandlerMethod method, Role role, Decision decision) {
        ServerHttpResponse response = exchange.getResponse();
        if (decision instanceof Handle handle) {
            holderHeaders(
                    response, handle.leadership().member(), handle.leadership().term());
            exchange.getAttributes().put(LeaderOnlyRouter.LEADERSHIP, handle.leadership());
            return handleHere(exchange, method, role);
        }
        if (decision instanceof Answer answer) {
            return problem(response, answer);
        }
        Send send = (Send) decision;
        URI target = ReactiveForwarder.target(send.base(), exchange.getRequest());
        if (send.redirect()) {
            holderHeaders(response, send.holder(), send.term());
            response.setStatusCode(HttpStatus.TEMPORARY_REDIRECT);
            response.getHeaders().setLocation(target);
            return response.setComplete().then(Mono.empty());
        }
        return forwarder
                .forward(exchange, target)
                .doOnNext(status -> router.forwarded(role, status))
                .onErrorResume(failure -> {
                    router.forwardFailed(role);
                    if (response.isCommitted()) {
                        return Mono.error(failure);
                    }
                    response.getHeaders().clear();
                    return problem(response, router.unreachable(role, send, failure))
                            .then(Mono.empty());
                })
                .then(Mono.empty());
    }

    /**
     * Invokes the handler through the adapter that would have without routing. A failure
     * the application's {@code @ExceptionHandler}s leave unanswered, and that a deposal
     * caused, is answered 503 ({@link LeaderOnlyRouter#deposed}): whether the handler threw
     * it or its {@code Mono} emitted it while its answer was written.
     */
    private Mono<HandlerResult> handleHere(ServerWebExchange exchange, HandlerMethod method, Role role) {
        ServerHttpResponse response = exchange.getResponse();
        Function<Throwable, Mono<HandlerResult>> deposed = failure -> router.deposed(role, failure)
                .filter(answer -> !response.isCommitted())
                .map(answer -> {
                    response.getHeaders().clear();
                    return problem(response, answer);
                })
                .orElseGet(() -> Mono.error(failure));
        return next(method)
                .handle(exchange, method)
                .map(result -> {
                    DispatchExceptionHandler application = result.getExceptionHandler();
                    return result.setExceptionHandler((failed, failure) -> (application == null
                                    ? Mono.<HandlerResult>error(failure)
                                    : application.handleError(failed, failure))
                            .onErrorResume(deposed));
                })
                .onErrorResume(deposed);
    }

    private HandlerAdapter next(HandlerMethod method) {
        List<HandlerAdapter> found = others;
        if (found == null) {
            found = adapters.orderedStream().filter(adapter -> adapter != this).toList();
            others = found;
        }
        return found.stream()
                .filter(adapter -> adapter.supports(method))
                .findFirst()
                .orElseThrow(
                        () -> new IllegalStateException("No HandlerAdapter but the routing one supports " + method));
    }

    private static void holderHeaders(ServerHttpResponse response, MemberId holder, long term) {
        LeaderOnlyRouter.holderHeaders(holder, term).forEach(response.getHeaders()::set);
    }

    /** Writes {@code answer}: its status, headers and problem body; no handler result. */
    private static Mono<HandlerResult> problem(ServerHttpResponse response, Answer answer) {
        response.setStatusCode(HttpStatusCode.valueOf(answer.status()));
        answer.headers().forEach(response.getHeaders()::set);
        byte[] body = answer.body();
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)))
                .then(Mono.empty());
    }

    /** First of the handler adapters, so every {@link LeaderOnly} handler method is routed before it is invoked. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
