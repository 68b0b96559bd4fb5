package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.http.ProblemDetail;
import org.springframework.util.MimeType;

/**
 * {@code POST /actuator/coordination/{role}} with a JSON body: {@code {}} (or no body)
 * releases a role this member holds, so the next standby takes over at once;
 * {@code {"to": "member"}} hands it to that standby instead ({@link LeadershipLoop#handOver}).
 * Answers 200 when it released or handed the role over, 403 while
 * {@code krabka.coordination.endpoint.release-enabled} is false, 404 for a role this member
 * does not contend for, and 409 when it contends but does not hold the role, or the member
 * is not a live standby of it.
 *
 * <p>Only {@code Content-Type: application/json} is accepted (Boot answers 415 to anything
 * else, a POST without a content type included), as for Boot's own write operations: a web
 * page can send a cross-site POST without asking first only with no body or a text, form or
 * multipart one, and must ask the member (a CORS preflight) before it sends JSON, which the
 * actuator refuses unless {@code management.endpoints.web.cors} allows that page. So a page
 * open in an operator's browser cannot move the roles of a member it can reach.
 *
 * <p>{@code GET /actuator/coordination/{role}} answers as {@link CoordinationEndpoint#role}
 * does, and for a role nobody knows (or a name that is no role) with a 404 whose body is a
 * problem detail (RFC 9457, {@code application/problem+json}) naming the roles this member
 * contends for.
 */
@EndpointWebExtension(endpoint = CoordinationEndpoint.class)
public class CoordinationEndpointWebExtension {

    /** Not among WebEndpointResponse's constants. */
    static final int STATUS_FORBIDDEN = 403;

    static final int STATUS_CONFLICT = 409;
    static final MimeType PROBLEM_JSON = MimeType.valueOf("application/problem+json");

    private final CoordinationEndpoint endpoint;
    private final LeadershipLoop loop;
    private final boolean releaseEnabled;

    public CoordinationEndpointWebExtension(
            CoordinationEndpoint endpoint, LeadershipLoop loop, boolean releaseEnabled) {
        this.endpoint = endpoint;
        this.loop = loop;
        this.releaseEnabled = releaseEnabled;
    }

    /**
     * One role ({@link CoordinationEndpoint#role}), or a 404 problem detail whose
     * {@code detail} names the role asked for and the roles this member contends for, and
     * whose {@code role} and {@code roles} properties hold them.
     */
    @ReadOperation
    public WebEndpointResponse<Object> role(SecurityContext securityContext, @Selector String role) {
        CoordinationEndpoint.RoleReport report = endpoint.role(securityContext, role);
        if (report != null) {
            return new WebEndpointResponse<>(report);
        }
        String why;
        try {
            Role.of(role);
            why = "nobody has registered for it or held it on the coordination topic";
        } catch (IllegalArgumentException notARole) {
            why = "it is not a role name: " + notARole.getMessage();
        }
        List<String> known = loop.roles().stream().map(Role::name).toList();
        return new WebEndpointResponse<>(
                notFound(role, known, "unknown role \"" + role + "\": " + why + "; this member contends for " + known),
                WebEndpointResponse.STATUS_NOT_FOUND,
                PROBLEM_JSON);
    }

    private static Object notFound(String role, List<String> known, String detail) {
        ProblemDetail problem = ProblemDetail.forStatus(WebEndpointResponse.STATUS_NOT_FOUND);
        problem.setDetail(detail);
        problem.setProperty("role", role);
        problem.setProperty("roles", known);
        return problem;
    }

    /**
     * Releases the role, or hands it to {@code to}.
     *
     * @param to the standby to hand the role to, from the JSON body; none releases it
     */
    @WriteOperation
    public WebEndpointResponse<ReleaseResult> release(@Selector String role, @Nullable String to) {
        Role target = configured(role);
        if (!releaseEnabled || target == null) {
            return refused(role);
        }
        if (to != null) {
            return handOver(target, to);
        }
        if (!loop.release(target)) {
            return answer(STATUS_CONFLICT, role, false, "this member does not hold the role");
        }
        return answer(WebEndpointResponse.STATUS_OK, role, true, "released");
    }

    /** What {@code POST /actuator/coordination/{role}} with {@code {}} answers. */
    public WebEndpointResponse<ReleaseResult> release(String role) {
        return release(role, null);
    }

    /** What {@code POST /actuator/coordination/{role}} with {@code {"to": "member"}} answers. */
    public WebEndpointResponse<ReleaseResult> handOver(String role, String to) {
        return release(role, Objects.requireNonNull(to, "to"));
    }

    private Role configured(String role) {
        return loop.roles().stream()
                .filter(r -> r.name().equals(role))
                .findFirst()
                .orElse(null);
    }

    /** 403 while releasing is disabled, else 404: the role is not configured here. */
    private WebEndpointResponse<ReleaseResult> refused(String role) {
        if (!releaseEnabled) {
            return answer(
                    STATUS_FORBIDDEN,
                    role,
                    false,
                    "releasing is disabled: set krabka.coordination.endpoint.release-enabled=true");
        }
        return answer(
                WebEndpointResponse.STATUS_NOT_FOUND,
                role,
                false,
                "role is not configured on this member; configured: " + loop.roles());
    }

    private WebEndpointResponse<ReleaseResult> handOver(Role role, String to) {
        MemberId member;
        try {
            member = MemberId.of(to);
        } catch (IllegalArgumentException invalid) {
            return answer(STATUS_CONFLICT, role.name(), false, "to is not a member id: " + invalid.getMessage());
        }
        HandoverResult result = loop.handOver(role, member);
        return switch (result) {
            case HANDED_OVER -> answer(WebEndpointResponse.STATUS_OK, role.name(), true, "handed over to " + member);
            case NOT_HOLDING -> answer(STATUS_CONFLICT, role.name(), false, "this member does not hold the role");
            case NOT_A_STANDBY -> answer(STATUS_CONFLICT, role.name(), false, member + " is not a standby of the role");
            case TARGET_SILENT ->
                answer(
                        STATUS_CONFLICT,
                        role.name(),
                        false,
                        member
                                + " did not answer (it did not register again after its registration was removed); this member keeps the role");
            case BUSY ->
                answer(
                        STATUS_CONFLICT,
                        role.name(),
                        false,
                        "another handover of the role is under way, or its renewal is blocked on the cluster; this member keeps the role");
        };
    }

    private static WebEndpointResponse<ReleaseResult> answer(int status, String role, boolean released, String detail) {
        return new WebEndpointResponse<>(new ReleaseResult(role, released, detail), status);
    }

    /** The answer to a release or handover request. */
    public record ReleaseResult(String role, boolean released, String detail) {}
}
