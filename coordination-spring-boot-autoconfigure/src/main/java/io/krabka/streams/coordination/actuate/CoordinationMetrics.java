package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.spring.CoordinationObserver;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Locale;

/**
 * Micrometer meters:
 * <ul>
 *   <li>{@code krabka.coordination.leader} (gauge, tag {@code role}): 1 while this member
 *       holds the role, else 0;</li>
 *   <li>{@code krabka.coordination.grants} (counter, tag {@code role});</li>
 *   <li>{@code krabka.coordination.ended} (counter, tags {@code role}, {@code cause}:
 *       fenced, expired, failed, released): every end of a leadership, not only fences;</li>
 *   <li>{@code krabka.coordination.acquire} (timer, tag {@code role}): from the start of
 *       an acquisition to the grant;</li>
 *   <li>{@code krabka.coordination.records.malformed} and {@code krabka.coordination.records.suspicious}
 *       (counters): records skipped as undecodable, and lease records no holder wrote;</li>
 *   <li>{@code krabka.coordination.renew} (timer, tags {@code role}, {@code outcome}:
 *       success); {@code krabka.coordination.renew.failures} (counter, tag {@code role});</li>
 *   <li>{@code krabka.coordination.share.held} and {@code krabka.coordination.share.fair}
 *       (gauges): how many of its roles this member holds, and the most one member holds
 *       in an even share; {@code krabka.coordination.moves} (counter): roles it handed over
 *       on its own to even the shares out ({@code krabka.coordination.balance=spread}).</li>
 * </ul>
 */
public class CoordinationMetrics implements MeterBinder, CoordinationObserver {

    private final LeadershipLoop loop;
    private final CoordinationClient client;
    private volatile MeterRegistry registry;

    public CoordinationMetrics(LeadershipLoop loop, CoordinationClient client) {
        this.loop = loop;
        this.client = client;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        this.registry = meterRegistry;
        FunctionCounter.builder("krabka.coordination.records.malformed", client, CoordinationClient::malformedRecords)
                .description("Records of the coordination topic that did not decode and were skipped")
                .register(meterRegistry);
        FunctionCounter.builder("krabka.coordination.records.suspicious", client, CoordinationClient::suspiciousRecords)
                .description("Lease records that no holder wrote: absurd deadlines or tombstone times, or leases the "
                        + "transaction coordinator contradicts")
                .register(meterRegistry);
        Gauge.builder("krabka.coordination.share.held", loop, l -> l.share().held())
                .description("How many of its roles this member holds")
                .register(meterRegistry);
        Gauge.builder("krabka.coordination.share.fair", loop, l -> l.share().fairShare())
                .description("The most roles one live member holds in an even share")
                .register(meterRegistry);
        FunctionCounter.builder(
                        "krabka.coordination.moves", loop, l -> l.share().movesOut())
                .description("Roles this member handed over on its own to even out the shares")
                .register(meterRegistry);
        for (Role role : loop.roles()) {
            Gauge.builder("krabka.coordination.leader", loop, l -> l.state(role) == MemberRoleState.LEADER ? 1 : 0)
                    .description("1 while this member holds the role")
                    .tag("role", role.name())
                    .register(meterRegistry);
            counter("krabka.coordination.grants", role)
                    .description("Roles granted to this member")
                    .register(meterRegistry);
        }
    }

    @Override
    public void granted(Role role, Duration took) {
        MeterRegistry meters = registry;
        if (meters != null) {
            counter("krabka.coordination.grants", role).register(meters).increment();
            Timer.builder("krabka.coordination.acquire")
                    .tag("role", role.name())
                    .register(meters)
                    .record(took);
        }
    }

    @Override
    public void ended(Role role, LeadershipEndCause cause) {
        MeterRegistry meters = registry;
        if (meters != null) {
            counter("krabka.coordination.ended", role)
                    .tag("cause", cause.name().toLowerCase(Locale.ROOT))
                    .description("Leaderships of this member that ended, by cause")
                    .register(meters)
                    .increment();
        }
    }

    @Override
    public void renewed(Role role, Duration took) {
        MeterRegistry meters = registry;
        if (meters != null) {
            Timer.builder("krabka.coordination.renew")
                    .tag("role", role.name())
                    .tag("outcome", "success")
                    .register(meters)
                    .record(took);
        }
    }

    @Override
    public void renewFailed(Role role) {
        MeterRegistry meters = registry;
        if (meters != null) {
            counter("krabka.coordination.renew.failures", role).register(meters).increment();
        }
    }

    private static Counter.Builder counter(String name, Role role) {
        return Counter.builder(name).tag("role", role.name());
    }
}
