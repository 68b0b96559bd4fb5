package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.CoordinationClient;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipStatus;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.transport.ProducerState;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.jspecify.annotations.Nullable;

/**
 * {@code /actuator/coordination}: this member and, per configured role, who holds it
 * (from {@link CoordinationClient#describe}), whether the holder still holds the epoch,
 * the token, the lease times, this member's state and the roster with ranks.
 */
@Endpoint(id = "coordination")
public class CoordinationEndpoint {

    private final CoordinationClient client;
    private final LeadershipLoop loop;
    private final boolean releaseEnabled;

    public CoordinationEndpoint(CoordinationClient client, LeadershipLoop loop, boolean releaseEnabled) {
        this.client = client;
        this.loop = loop;
        this.releaseEnabled = releaseEnabled;
    }

    @ReadOperation
    public CoordinationReport coordination() {
        Map<String, RoleReport> roles = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            roles.put(role.name(), report(role));
        }
        return new CoordinationReport(loop.member().value(), roles);
    }

    @ReadOperation
    @Nullable
    public RoleReport role(@Selector String role) {
        return loop.roles().stream().filter(r -> r.name().equals(role)).findFirst().map(this::report).orElse(null);
    }

    /**
     * Releases a role this member holds, so the next standby takes over at once. Only
     * when {@code krabka.coordination.endpoint.release-enabled} is true.
     */
    @WriteOperation
    public ReleaseResult release(@Selector String role) {
        if (!releaseEnabled) {
            return new ReleaseResult(role, false, "releasing is disabled: set krabka.coordination.endpoint.release-enabled=true");
        }
        Role target = loop.roles().stream().filter(r -> r.name().equals(role)).findFirst().orElse(null);
        if (target == null) {
            return new ReleaseResult(role, false, "role is not configured on this member");
        }
        boolean released = loop.release(target);
        return new ReleaseResult(role, released, released ? "released" : "this member does not hold the role");
    }

    private RoleReport report(Role role) {
        LeadershipStatus status = client.describe(role);
        FencingToken token = status.token();
        List<RosterMember> roster = status.roster().stream()
                .map(m -> new RosterMember(m.member().value(), m.holder() ? null : m.rank(), m.holder(), m.registeredAt()))
                .toList();
        ProducerState coordinator = status.coordinator().orElse(null);
        return new RoleReport(
                status.holder().map(Object::toString).orElse(null),
                status.current(),
                token.isMinted() ? new TokenReport(token.term(), token.producerId(), token.producerEpoch()) : null,
                status.grantedAt().orElse(null),
                status.deadline().orElse(null),
                loop.state(role).name().toLowerCase(Locale.ROOT),
                roster,
                coordinator == null ? null : coordinator.state(),
                status.lease().map(l -> new TokenReport(l.term(), l.producerId(), l.producerEpoch())).orElse(null));
    }

    /** The whole report. */
    public record CoordinationReport(String member, Map<String, RoleReport> roles) {
    }

    /**
     * One role.
     *
     * @param holder the member the newest lease names, or null
     * @param current whether that member still holds the role's newest epoch
     * @param token the term (compare these) and the epoch the coordinator reports, or null
     * @param grantedAt when the holder's leadership began, on its clock
     * @param deadline the holder's lease deadline, on its clock
     * @param state this member's state: leader, standby or stopped
     * @param roster the registered members in registration order
     * @param transactionState the transaction coordinator's state for the role
     * @param leaseToken the token the newest lease record carries; equal to {@code token}
     *     exactly when {@code current}
     */
    public record RoleReport(String holder, boolean current, TokenReport token, Instant grantedAt, Instant deadline,
            String state, List<RosterMember> roster, String transactionState, TokenReport leaseToken) {
    }

    /** A fencing token. */
    public record TokenReport(long term, long producerId, short producerEpoch) {
    }

    /**
     * A registered member.
     *
     * @param rank its rank among the standbys (0 challenges first); null for the holder
     */
    public record RosterMember(String member, Integer rank, boolean holder, Instant registeredAt) {
    }

    /** The answer to a release request. */
    public record ReleaseResult(String role, boolean released, String detail) {
    }

}
