package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * {@code POST /actuator/coordination/{role}}: releases a role this member holds, so the
 * next standby takes over at once; {@code POST /actuator/coordination/{role}/{member}}
 * hands it to that standby instead ({@link LeadershipLoop#handOver}). The member is a path
 * segment, not a parameter: Boot takes a write operation's other parameters from a JSON
 * body only, and the plain release must keep working without one. Answers 200 when it
 * released or handed the role over, 403 while
 * {@code krabka.coordination.endpoint.release-enabled} is false, 404 for a role this member
 * does not contend for, and 409 when it contends but does not hold the role, or the member
 * is not a live standby of it.
 */
@EndpointWebExtension(endpoint = CoordinationEndpoint.class)
public class CoordinationEndpointWebExtension {

    /** Not among WebEndpointResponse's constants. */
    static final int STATUS_FORBIDDEN = 403;
    static final int STATUS_CONFLICT = 409;

    private final LeadershipLoop loop;
    private final boolean releaseEnabled;

    public CoordinationEndpointWebExtension(LeadershipLoop loop, boolean releaseEnabled) {
        this.loop = loop;
        this.releaseEnabled = releaseEnabled;
    }

    @WriteOperation
    public WebEndpointResponse<ReleaseResult> release(@Selector String role) {
        Role target = configured(role);
        if (!releaseEnabled || target == null) {
            return refused(role);
        }
        if (!loop.release(target)) {
            return answer(STATUS_CONFLICT, role, false, "this member does not hold the role");
        }
        return answer(WebEndpointResponse.STATUS_OK, role, true, "released");
    }

    @WriteOperation
    public WebEndpointResponse<ReleaseResult> handOver(@Selector String role, @Selector String to) {
        Role target = configured(role);
        if (!releaseEnabled || target == null) {
            return refused(role);
        }
        return handOver(target, to);
    }

    private Role configured(String role) {
        return loop.roles().stream().filter(r -> r.name().equals(role)).findFirst().orElse(null);
    }

    /** 403 while releasing is disabled, else 404: the role is not configured here. */
    private WebEndpointResponse<ReleaseResult> refused(String role) {
        if (!releaseEnabled) {
            return answer(STATUS_FORBIDDEN, role, false,
                    "releasing is disabled: set krabka.coordination.endpoint.release-enabled=true");
        }
        return answer(WebEndpointResponse.STATUS_NOT_FOUND, role, false,
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
            case TARGET_SILENT -> answer(STATUS_CONFLICT, role.name(), false, member
                    + " did not answer (it did not register again after its registration was removed); this member keeps the role");
            case BUSY -> answer(STATUS_CONFLICT, role.name(), false,
                    "another handover of the role is under way, or its renewal is blocked on the cluster; this member keeps the role");
        };
    }

    private static WebEndpointResponse<ReleaseResult> answer(int status, String role, boolean released, String detail) {
        return new WebEndpointResponse<>(new ReleaseResult(role, released, detail), status);
    }

    /** The answer to a release or handover request. */
    public record ReleaseResult(String role, boolean released, String detail) {
    }
}
