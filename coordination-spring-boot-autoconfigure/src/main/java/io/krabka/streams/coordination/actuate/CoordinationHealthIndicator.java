package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health contributor {@code coordination}: up when the transaction coordinator answers
 * for a configured role (the cluster is reachable and this member may describe it);
 * details name this member and its state per role. Down while the cluster's ACLs refuse
 * this member a role it contends for; detail {@code notAuthorized} maps each such role to
 * the refusal.
 */
public class CoordinationHealthIndicator extends AbstractHealthIndicator {

    private final CoordinationTransport transport;
    private final LeadershipLoop loop;

    public CoordinationHealthIndicator(CoordinationTransport transport, LeadershipLoop loop) {
        super("Coordination health check failed");
        this.transport = transport;
        this.loop = loop;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Map<String, String> roles = new LinkedHashMap<>();
        Map<String, String> notAuthorized = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            roles.put(role.name(), loop.state(role).name().toLowerCase(Locale.ROOT));
            loop.authorizationFailure(role).ifPresent(reason -> notAuthorized.put(role.name(), reason));
        }
        if (!notAuthorized.isEmpty()) {
            builder.down().withDetail("member", loop.member().value()).withDetail("topic", transport.topic())
                    .withDetail("roles", roles).withDetail("notAuthorized", notAuthorized);
            return;
        }
        if (!loop.roles().isEmpty()) {
            transport.describeEpoch(loop.roles().get(0));
        }
        transport.partitionCount();
        builder.up().withDetail("member", loop.member().value()).withDetail("topic", transport.topic()).withDetail("roles", roles);
    }
}
