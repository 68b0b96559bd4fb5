package io.krabka.streams.coordination.spring.routing;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;

/**
 * Proxies a servlet request to the holder with the JDK's {@link HttpClient} and streams
 * the answer back: the body both ways without buffering, every end-to-end header through
 * (the {@code Authorization} header included, so the holder authenticates the caller
 * again), the hop-by-hop headers of RFC 9110 dropped, the hop marker and a
 * {@code Forwarded} element added ({@link Forwarding}). Redirects are not followed.
 */
final class ServletForwarder {

    private final HttpClient http;
    private final Duration responseTimeout;
    private final String member;

    ServletForwarder(String member, Duration connectTimeout, Duration responseTimeout) {
        this.member = member;
        this.responseTimeout = responseTimeout;
        this.http = Forwarding.client(connectTimeout);
    }

    /** The URL of the request on {@code base}: the path within the application, and the query. */
    static URI target(URI base, HttpServletRequest request) {
        return Forwarding.target(
                base, request.getRequestURI().substring(request.getContextPath().length()), request.getQueryString());
    }

    /**
     * Sends the request to {@code target} and copies the answer into {@code response}.
     *
     * @return the holder's status
     * @throws IOException when the holder could not be reached or did not answer in time
     *     (nothing was written to {@code response} then)
     */
    int forward(HttpServletRequest request, HttpServletResponse response, URI target)
            throws IOException, InterruptedException {
        HttpRequest.Builder builder =
                HttpRequest.newBuilder(target).timeout(responseTimeout).method(request.getMethod(), body(request));
        Set<String> dropped = Forwarding.droppedRequestHeaders(Collections.list(request.getHeaders("Connection")));
        for (String name : Collections.list(request.getHeaderNames())) {
            if (dropped.contains(name)) {
                continue;
            }
            for (String value : Collections.list(request.getHeaders(name))) {
                builder.header(name, value);
            }
        }
        builder.header(RoutingHeaders.FORWARDED_BY, member);
        builder.header(
                "Forwarded",
                Forwarding.forwarded(
                        request.getRemoteAddr(),
                        request.getScheme(),
                        request.getHeader("Host"),
                        request.getHeader("Forwarded")));
        HttpResponse<InputStream> answer = http.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        response.setStatus(answer.statusCode());
        Set<String> droppedBack =
                Forwarding.droppedResponseHeaders(answer.headers().allValues("connection"));
        answer.headers().map().forEach((name, values) -> {
            if (!droppedBack.contains(name) && !name.startsWith(":")) {
                values.forEach(value -> response.addHeader(name, value));
            }
        });
        try (InputStream in = answer.body()) {
            OutputStream out = response.getOutputStream();
            in.transferTo(out);
            out.flush();
        }
        return answer.statusCode();
    }

    private static HttpRequest.BodyPublisher body(HttpServletRequest request) {
        long length = request.getContentLengthLong();
        boolean chunked = request.getHeader("Transfer-Encoding") != null;
        if (length == 0 || (length < 0 && !chunked)) {
            return HttpRequest.BodyPublishers.noBody();
        }
        HttpRequest.BodyPublisher stream = HttpRequest.BodyPublishers.ofInputStream(() -> {
            try {
                return request.getInputStream();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        return length > 0 ? HttpRequest.BodyPublishers.fromPublisher(stream, length) : stream;
    }
}
