package io.krabka.streams.coordination.spring.routing;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/** The RFC 9457 problem bodies of routing, as Spring's {@link ProblemDetail}, and their JSON. */
final class Problems {

    /** A role with no holder (or none reachable yet): 503. */
    static final URI NO_HOLDER = URI.create("urn:krabka:routing:no-holder");
    /** A forwarded request reached a member that does not hold the role: 503, never forwarded again. */
    static final URI NOT_HOLDER = URI.create("urn:krabka:routing:not-holder");
    /** The holder's address is not an allowed target: 502. */
    static final URI REFUSED_TARGET = URI.create("urn:krabka:routing:refused-target");
    /** The holder did not answer a forward: 503. */
    static final URI HOLDER_UNREACHABLE = URI.create("urn:krabka:routing:holder-unreachable");
    /** The holder lost the role while it handled the request, and the broker refused its guarded write: 503. */
    static final URI DEPOSED = URI.create("urn:krabka:routing:deposed");

    static final String MEDIA_TYPE = "application/problem+json";

    private Problems() {}

    static ProblemDetail of(HttpStatus status, URI type, String title, String detail, String role) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(type);
        problem.setTitle(title);
        problem.setProperty("role", role);
        return problem;
    }

    /** Seconds for {@code Retry-After}, rounded up, at least 1. */
    static String retryAfter(Duration wait) {
        long seconds = (wait.toMillis() + 999) / 1000;
        return Long.toString(Math.max(1, seconds));
    }

    /** The problem as JSON: its members and its properties (strings and numbers). */
    static String json(ProblemDetail problem) {
        StringBuilder out = new StringBuilder("{");
        field(out, "type", problem.getType().toString());
        field(out, "title", problem.getTitle());
        out.append("\"status\":").append(problem.getStatus()).append(',');
        field(out, "detail", problem.getDetail());
        if (problem.getInstance() != null) {
            field(out, "instance", problem.getInstance().toString());
        }
        Map<String, Object> properties = problem.getProperties();
        if (properties != null) {
            properties.forEach((name, value) -> {
                if (value instanceof Number number) {
                    quote(out, name).append(':').append(number).append(',');
                } else if (value != null) {
                    field(out, name, value.toString());
                }
            });
        }
        out.setLength(out.length() - 1);
        return out.append('}').toString();
    }

    private static void field(StringBuilder out, String name, String value) {
        if (value != null) {
            quote(out, name).append(':');
            quote(out, value).append(',');
        }
    }

    private static StringBuilder quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"');
    }
}
