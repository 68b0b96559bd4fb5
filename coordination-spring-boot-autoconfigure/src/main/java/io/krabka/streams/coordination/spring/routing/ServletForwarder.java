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
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Proxies a servlet request to the holder with the JDK's {@link HttpClient} and streams
 * the answer back: the body both ways without buffering, every end-to-end header through
 * (the {@code Authorization} header included, so the holder authenticates the caller
 * again), the hop-by-hop headers of RFC 9110 dropped, the hop marker and a
 * {@code Forwarded} element added. Redirects are not followed.
 */
final class ServletForwarder {

    /** RFC 9110 7.6.1 hop-by-hop fields, and those the JDK client sets itself. */
    static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
            "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect");

    /** Headers the JDK client refuses to send as given (it writes its own, or none): not passed on. */
    private static final Set<String> RESTRICTED = Set.of("date", "from", "via", "warning");

    private final HttpClient http;
    private final Duration responseTimeout;
    private final String member;

    ServletForwarder(String member, Duration connectTimeout, Duration responseTimeout) {
        this.member = member;
        this.responseTimeout = responseTimeout;
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).followRedirects(HttpClient.Redirect.NEVER)
                .version(HttpClient.Version.HTTP_1_1).build();
    }

    /** The URL of the request on {@code base}: the path within the application, and the query. */
    static URI target(URI base, HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        String query = request.getQueryString();
        String root = base.toString();
        return URI.create(root + path + (query == null ? "" : "?" + query));
    }

    /**
     * Sends the request to {@code target} and copies the answer into {@code response}.
     *
     * @return the holder's status
     * @throws IOException when the holder could not be reached or did not answer in time
     *     (nothing was written to {@code response} then)
     */
    int forward(HttpServletRequest request, HttpServletResponse response, URI target) throws IOException, InterruptedException {
        HttpRequest.Builder builder = HttpRequest.newBuilder(target).timeout(responseTimeout)
                .method(request.getMethod(), body(request));
        Set<String> dropped = droppedHeaders(request);
        for (String name : Collections.list(request.getHeaderNames())) {
            if (dropped.contains(name.toLowerCase(Locale.ROOT))) {
                continue;
            }
            for (String value : Collections.list(request.getHeaders(name))) {
                builder.header(name, value);
            }
        }
        builder.header(RoutingHeaders.FORWARDED_BY, member);
        builder.header("Forwarded", forwarded(request));
        HttpResponse<InputStream> answer = http.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        response.setStatus(answer.statusCode());
        Set<String> droppedBack = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        droppedBack.addAll(HOP_BY_HOP);
        droppedBack.remove("content-length");
        answer.headers().allValues("connection").forEach(v -> droppedBack.addAll(List.of(v.split("\\s*,\\s*"))));
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

    private static Set<String> droppedHeaders(HttpServletRequest request) {
        Set<String> dropped = new TreeSet<>(HOP_BY_HOP);
        dropped.addAll(RESTRICTED);
        dropped.add("forwarded"); // sent again with this hop's element appended
        dropped.add(RoutingHeaders.FORWARDED_BY.toLowerCase(Locale.ROOT));
        for (String connection : Collections.list(request.getHeaders("Connection"))) {
            for (String token : connection.split(",")) {
                dropped.add(token.trim().toLowerCase(Locale.ROOT));
            }
        }
        return dropped;
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

    /** An RFC 7239 element for this hop. */
    private static String forwarded(HttpServletRequest request) {
        String element = "for=\"" + request.getRemoteAddr() + "\";proto=" + request.getScheme();
        String host = request.getHeader("Host");
        if (host != null && host.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '"' && c != '\\')) {
            element += ";host=\"" + host + "\"";
        }
        String earlier = request.getHeader("Forwarded");
        return earlier == null ? element : earlier + ", " + element;
    }
}
