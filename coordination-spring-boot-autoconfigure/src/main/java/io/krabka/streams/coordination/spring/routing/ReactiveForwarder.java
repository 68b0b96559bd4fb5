package io.krabka.streams.coordination.spring.routing;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Proxies a WebFlux request to the holder with a {@link WebClient} and streams the answer
 * back: the body both ways as it comes, without buffering it whole, every end-to-end
 * header through (the {@code Authorization} header included, so the holder authenticates
 * the caller again), the hop-by-hop headers of RFC 9110 dropped, the hop marker and a
 * {@code Forwarded} element added ({@link Forwarding}). Redirects are not followed.
 *
 * <p>The client is the JDK's, under Spring's {@link JdkClientHttpConnector}: the client
 * Spring MVC's forward sends with, so both stacks drop the same headers and their
 * timeouts mean the same, and a WebFlux application on Tomcat or Jetty needs no Reactor
 * Netty. It is a client of its own, not the application's {@code WebClient.Builder},
 * whose filters could add credentials or rewrite the target.
 */
final class ReactiveForwarder {

    private final WebClient client;
    private final String member;

    ReactiveForwarder(String member, Duration connectTimeout, Duration responseTimeout) {
        this.member = member;
        JdkClientHttpConnector connector = new JdkClientHttpConnector(Forwarding.client(connectTimeout));
        connector.setReadTimeout(
                responseTimeout); // until the answer's headers, as HttpRequest.timeout in MVC's forward
        this.client = WebClient.builder().clientConnector(connector).build();
    }

    /** The URL of the request on {@code base}: the path within the application, and the query. */
    static URI target(URI base, ServerHttpRequest request) {
        return Forwarding.target(
                base,
                request.getPath().pathWithinApplication().value(),
                request.getURI().getRawQuery());
    }

    /**
     * Sends the request to {@code target} and streams the answer into the exchange's response.
     *
     * @return the holder's status, once its answer was written back; an error when the
     *     holder could not be reached or did not answer in time (nothing was written back
     *     then, unless the response is committed)
     */
    Mono<Integer> forward(ServerWebExchange exchange, URI target) {
        ServerHttpRequest request = exchange.getRequest();
        HttpHeaders incoming = request.getHeaders();
        Set<String> dropped = Forwarding.droppedRequestHeaders(incoming.getOrEmpty(HttpHeaders.CONNECTION));
        WebClient.RequestBodySpec spec = client.method(request.getMethod())
                .uri(target)
                .headers(headers -> {
                    incoming.forEach((name, values) -> {
                        if (!dropped.contains(name)) {
                            headers.addAll(name, values);
                        }
                    });
                    headers.set(RoutingHeaders.FORWARDED_BY, member);
                    headers.set(
                            "Forwarded",
                            Forwarding.forwarded(
                                    remoteAddress(request),
                                    request.getURI().getScheme(),
                                    incoming.getFirst(HttpHeaders.HOST),
                                    incoming.getFirst("Forwarded")));
                    if (incoming.getContentLength() > 0) {
                        headers.setContentLength(
                                incoming.getContentLength()); // the client sends it as the body's length
                    }
                });
        boolean body = incoming.getContentLength() > 0 || incoming.containsHeader(HttpHeaders.TRANSFER_ENCODING);
        WebClient.RequestHeadersSpec<?> sent =
                body ? spec.body(BodyInserters.fromDataBuffers(request.getBody())) : spec;
        ServerHttpResponse response = exchange.getResponse();
        return sent.exchangeToMono(answer -> {
            response.setStatusCode(answer.statusCode());
            HttpHeaders back = answer.headers().asHttpHeaders();
            Set<String> droppedBack = Forwarding.droppedResponseHeaders(back.getOrEmpty(HttpHeaders.CONNECTION));
            back.forEach((name, values) -> {
                if (!droppedBack.contains(name) && !name.startsWith(":")) {
                    response.getHeaders().addAll(name, values);
                }
            });
            return response.writeWith(answer.bodyToFlux(DataBuffer.class))
                    .thenReturn(answer.statusCode().value());
        });
    }

    private static String remoteAddress(ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        if (remote == null) {
            return "unknown";
        }
        return remote.getAddress() == null
                ? remote.getHostString()
                : remote.getAddress().getHostAddress();
    }
}
