package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health contributor {@code coordination}: up while the last cluster operation of every
 * role this member contends for succeeded; down while one fails, with detail
 * {@code notAuthorized} (the cluster's ACLs refuse the role), {@code misconfigured} (the
 * coordination topic is missing and may not be created, breaks the guarantees or changed
 * under this member, or the lease is longer than the brokers allow a transaction) or
 * {@code unreachable} (the
 * cluster did not answer), each mapping the role to the failure. Details name this
 * member, the topic and its state per role. It does no I/O of its own, so it answers at
 * once whatever the cluster does; the contenders find a lost cluster within one
 * operation timeout.
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
        Map<String, String> misconfigured = new LinkedHashMap<>();
        Map<String, String> unreachable = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            roles.put(role.name(), loop.state(role).name().toLowerCase(Locale.ROOT));
            Optional<CoordinationException> problem = loop.problem(role);
            problem.filter(CoordinationAuthorizationException.class::isInstance)
                    .ifPresent(denied -> notAuthorized.put(role.name(), denied.getMessage()));
            problem.filter(CoordinationConfigurationException.class::isInstance)
                    .ifPresent(failure -> misconfigured.put(role.name(), failure.getMessage()));
            problem.filter(failure -> !(failure instanceof CoordinationAuthorizationException)
                    && !(failure instanceof CoordinationConfigurationException))
                    .ifPresent(failure -> unreachable.put(role.name(), failure.getMessage()));
        }
        builder.withDetail("member", loop.member().value()).withDetail("topic", transport.topic()).withDetail("roles", roles);
        if (!notAuthorized.isEmpty()) {
            builder.withDetail("notAuthorized", notAuthorized);
        }
        if (!misconfigured.isEmpty()) {
            builder.withDetail("misconfigured", misconfigured);
        }
        if (!unreachable.isEmpty()) {
            builder.withDetail("unreachable", unreachable);
        }
        if (notAuthorized.isEmpty() && misconfigured.isEmpty() && unreachable.isEmpty()) {
            builder.up();
        } else {
            builder.down();
        }
    }
}
