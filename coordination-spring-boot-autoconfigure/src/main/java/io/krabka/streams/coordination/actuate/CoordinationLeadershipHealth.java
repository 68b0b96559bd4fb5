package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Health contributor {@code coordinationLeadership}, one child per role: {@code UP} while
 * this member holds the role, {@link #STANDBY} otherwise. For routing (a Kubernetes
 * Service, a load balancer) to the holder of a role through a health group of its own,
 * never for readiness or liveness: a standby is healthy. {@code STANDBY} is a status of
 * its own so that Boot's root health stays 200 on a standby (Boot maps statuses it does not
 * know to 200); a group that routes maps it to 503 with
 * {@code management.endpoint.health.group.<name>.status.http-mapping.standby=503}.
 * Opt-in: {@code management.health.coordination-leadership.enabled=true}.
 */
public final class CoordinationLeadershipHealth {

    /** This member contends for the role and does not hold it (or does not contend now). */
    public static final Status STANDBY = new Status("STANDBY", "this member does not hold the role");

    private CoordinationLeadershipHealth() {}

    /** One indicator per role of {@code loop}, each answering from memory, at once. */
    public static CompositeHealthContributor of(LeadershipLoop loop) {
        Map<String, HealthIndicator> roles = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            roles.put(role.name(), () -> {
                MemberRoleState state = loop.state(role);
                Health.Builder health = state == MemberRoleState.LEADER ? Health.up() : Health.status(STANDBY);
                health.withDetail("state", state.name().toLowerCase(Locale.ROOT));
                loop.leadership(role).ifPresent(held -> health.withDetail("term", held.term()));
                return health.build();
            });
        }
        return CompositeHealthContributor.fromMap(roles);
    }
}
