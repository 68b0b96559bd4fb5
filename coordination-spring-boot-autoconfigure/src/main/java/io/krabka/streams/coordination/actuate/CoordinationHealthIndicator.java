package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.RetriableCoordinationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.ClusterContact;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * Health contributor {@code coordination}: whether this member is able to contend for its
 * roles, never whether it leads one (a standby is as healthy as a holder).
 * <ul>
 * <li>{@code DOWN} while the last cluster operation of some role failed, with the failure
 * per role under what it is: {@code notAuthorized} (the cluster did not authenticate this
 * member, or its ACLs refuse the role), {@code misconfigured} (a setting to fix: the topic
 * is missing and may not be created, breaks the guarantees, changed under this member,
 * needs a replication factor the cluster cannot meet, or the lease is longer than the
 * brokers allow a transaction), {@code unreachable} (the cluster did not answer in time,
 * or failed transiently) or {@code failing} (anything else).</li>
 * <li>{@code OUT_OF_SERVICE} before this member's first answer from the cluster (detail
 * {@code waiting}), and while it does not contend (the loop is stopped, detail
 * {@code contending}): not broken, not able to take a role either. Boot maps it to HTTP 503,
 * as it does its own readiness state while traffic is refused; {@code UNKNOWN} would not
 * do, since Boot's aggregation ranks it below {@code UP} and a readiness group would pass.</li>
 * <li>{@link #WORK_FAILING} while the work of some role fails here: a leadership of it on
 * this member ended {@code FAILED} (the work threw: a missing input topic, a record that
 * cannot be dead-lettered) within the last minute, and no later one ended otherwise
 * ({@link RoleWorkFailures}); detail {@code workFailing}, role → how many in a row, how long
 * ago, and the failure. The member still contends: the cluster is fine, the work is not.
 * A status of its own, which Boot maps to HTTP 200 and leaves out of its default status
 * order, so a readiness group that includes this contributor stays UP (every member fails
 * the same input: none should leave the Service) and the root shows UP unless
 * {@code management.endpoint.health.status.order} lists {@code work-failing}.</li>
 * <li>{@code UP} otherwise.</li>
 * </ul>
 * Details name this member, the topic and its state per role. It does no I/O of its own,
 * so it answers at once whatever the cluster does; the contenders find a lost cluster
 * within one operation timeout.
 */
public class CoordinationHealthIndicator extends AbstractHealthIndicator {

    /** The work of some role fails at its grants here, while the member is able to contend. */
    public static final Status WORK_FAILING = new Status(
            "WORK_FAILING", "the work of a role ended FAILED here within the last minute; the member still contends");

    private final CoordinationTransport transport;
    private final LeadershipLoop loop;
    private final ClusterContact contact;
    private final RoleWorkFailures workFailures;
    private volatile StartupFencingProbe probe;

    /** A contributor that does not wait for a first contact it cannot see. */
    public CoordinationHealthIndicator(CoordinationTransport transport, LeadershipLoop loop) {
        this(transport, loop, new ClusterContact());
    }

    /** A contributor that is not up before {@code contact} saw an answer from the cluster, when it tracks a transport. */
    public CoordinationHealthIndicator(CoordinationTransport transport, LeadershipLoop loop, ClusterContact contact) {
        this(transport, loop, contact, null);
    }

    /**
     * A contributor that also reports the roles whose work fails here, as {@code workFailures}
     * (fed by the leadership events) tells; none when it is null.
     */
    public CoordinationHealthIndicator(
            CoordinationTransport transport,
            LeadershipLoop loop,
            ClusterContact contact,
            RoleWorkFailures workFailures) {
        super("Coordination health check failed");
        this.transport = transport;
        this.loop = loop;
        this.contact = contact;
        this.workFailures = workFailures;
    }

    /**
     * Adds detail {@code probe}: what the fencing probe found at startup (its status, the
     * cluster id and the names of the checks that warned or failed). It changes no status.
     */
    public CoordinationHealthIndicator withProbe(StartupFencingProbe startupProbe) {
        this.probe = startupProbe;
        return this;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Map<String, String> roles = new LinkedHashMap<>();
        Map<String, String> notAuthorized = new LinkedHashMap<>();
        Map<String, String> misconfigured = new LinkedHashMap<>();
        Map<String, String> unreachable = new LinkedHashMap<>();
        Map<String, String> failing = new LinkedHashMap<>();
        Map<String, String> workFailing = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            roles.put(role.name(), loop.state(role).name().toLowerCase(Locale.ROOT));
            if (workFailures != null && loop.isRunning()) {
                workFailures.failing(role).ifPresent(failure -> workFailing.put(role.name(), failure));
            }
            Optional<CoordinationException> problem = loop.problem(role);
            if (problem.isEmpty()) {
                continue;
            }
            CoordinationException failure = problem.get();
            Map<String, String> kind = failure instanceof CoordinationAuthorizationException
                    ? notAuthorized
                    : failure instanceof CoordinationConfigurationException
                            ? misconfigured
                            : failure instanceof CoordinationTimeoutException
                                            || failure instanceof RetriableCoordinationException
                                    ? unreachable
                                    : failing;
            kind.put(role.name(), failure.getMessage());
        }
        builder.withDetail("member", loop.member().value())
                .withDetail("topic", transport.topic())
                .withDetail("roles", roles);
        detail(builder, "notAuthorized", notAuthorized);
        detail(builder, "misconfigured", misconfigured);
        detail(builder, "unreachable", unreachable);
        detail(builder, "failing", failing);
        detail(builder, "workFailing", workFailing);
        if (probe != null) {
            builder.withDetail("probe", FencingProbeHealth.of(probe.outcome()));
        }
        if (!notAuthorized.isEmpty() || !misconfigured.isEmpty() || !unreachable.isEmpty() || !failing.isEmpty()) {
            builder.down();
        } else if (roles.isEmpty()) {
            // Nothing to contend for, nothing that could fail.
            builder.up();
        } else if (!loop.isRunning()) {
            builder.outOfService().withDetail("contending", false);
        } else if (contact.tracking() && !contact.made()) {
            builder.outOfService()
                    .withDetail(
                            "waiting",
                            "no answer yet from " + transport.location()
                                    + "; the first cluster operation either succeeds or names its failure here within one operation timeout");
        } else if (!workFailing.isEmpty()) {
            builder.status(WORK_FAILING);
        } else {
            builder.up();
        }
    }

    private static void detail(Health.Builder builder, String name, Map<String, String> perRole) {
        if (!perRole.isEmpty()) {
            builder.withDetail(name, perRole);
        }
    }
}
