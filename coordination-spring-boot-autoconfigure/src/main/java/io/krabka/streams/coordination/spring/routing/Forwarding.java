package io.krabka.streams.coordination.spring.routing;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a forward sends to the holder and what it passes back, for either web stack: the
 * client, the target URL, the headers dropped both ways and the {@code Forwarded} element.
 * Both forwarders send with the JDK's {@link HttpClient} (Spring MVC's directly, WebFlux's
 * through {@code WebClient}), so the same headers are refused and the same timeouts mean
 * the same.
 */
final class Forwarding {

    /** RFC 9110 7.6.1 hop-by-hop fields, and those the JDK client sets itself. */
    static final Set<String> HOP_BY_HOP = Set.of(
            "connection",
            "keep-alive",
            "proxy-authenticate",
            "proxy-authorization",
            "proxy-connection",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "host",
            "content-length",
            "expect");

    /** Headers the JDK client refuses to send as given (it writes its own, or none): not passed on. */
    private static final Set<String> RESTRICTED = Set.of("date", "from", "via", "warning");

    private Forwarding() {}

    /** HTTP/1.1 (no h2c upgrade of a request with a body), redirects not followed. */
    static HttpClient client(Duration connectTimeout) {
        return HttpClient.newBuilder()
                .connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    /**
     * The URL of the request on {@code base}.
     *
     * @param path the request's path within the application (after the context path), as sent
     * @param rawQuery the query as sent, or null
     */
    static URI target(URI base, String path, String rawQuery) {
        return URI.create(base.toString() + path + (rawQuery == null ? "" : "?" + rawQuery));
    }

    /**
     * The request headers not passed to the holder (case-insensitive): the hop-by-hop ones,
     * those the request's {@code Connection} headers name, those the client refuses, and
     * {@code Forwarded} and the hop marker, which the forward writes anew.
     */
    static Set<String> droppedRequestHeaders(Iterable<String> connection) {
        Set<String> dropped = connectionScoped(connection);
        dropped.addAll(RESTRICTED);
        dropped.add("forwarded");
        dropped.add(RoutingHeaders.FORWARDED_BY);
        return dropped;
    }

    /** The headers of the holder's answer not passed back (case-insensitive): its {@code Content-Length} goes through. */
    static Set<String> droppedResponseHeaders(Iterable<String> connection) {
        Set<String> dropped = connectionScoped(connection);
        dropped.remove("content-length");
        return dropped;
    }

    private static Set<String> connectionScoped(Iterable<String> connection) {
        Set<String> dropped = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        dropped.addAll(HOP_BY_HOP);
        for (String value : connection) {
            for (String token : value.split(",")) {
                if (!token.isBlank()) {
                    dropped.add(token.trim());
                }
            }
        }
        return dropped;
    }

    /**
     * The {@code Forwarded} header to send: {@code earlier} (the request's own, or null)
     * with an RFC 7239 element for this hop appended.
     */
    static String forwarded(String remoteAddress, String scheme, String host, String earlier) {
        String element = "for=\"" + remoteAddress + "\";proto=" + scheme;
        if (host != null && host.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '"' && c != '\\')) {
            element += ";host=\"" + host + "\"";
        }
        return earlier == null ? element : earlier + ", " + element;
    }
}
