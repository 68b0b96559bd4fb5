package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.Sighted;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds what a lease or a release record can make a standby believe. Any member with
 * Write on the topic can append a lease naming anyone with any deadline, or a tombstone
 * stamped with any time; a standby that believed them would wait for ever, or challenge a
 * live holder at once. So the deadlines and release instants a standby decides on are cut
 * by when this member first saw the records.
 */
final class LeaseBounds {

    // The client's logger: operators filter its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    private final LeaseConfig config;
    private final CoordinationTransport transport;
    // Counts and logs a record no honest member would have written.
    private final BiConsumer<Role, String> suspicious;
    private final Sightings leases;
    // The same for releases, keyed by the tombstone's timestamp instead of an offset.
    private final Sightings releases;
    // How long a standby waits for each role's lease: raised by new lease records, never
    // lowered; cleared by a tombstone.
    private final Map<Role, Long> bounds = new ConcurrentHashMap<>();
    // Per role, the holder whose leases claim another duration than this member's, while they do.
    private final Map<Role, CoordinationConfigurationException> disagreements = new ConcurrentHashMap<>();

    LeaseBounds(
            LeaseConfig config,
            InstantSource clock,
            CoordinationTransport transport,
            BiConsumer<Role, String> suspicious) {
        this.config = config;
        this.transport = transport;
        this.suspicious = suspicious;
        this.leases = new Sightings(clock);
        this.releases = new Sightings(clock);
    }

    /**
     * The state as this member may believe it ({@link Sighted#believed}): the lease's
     * deadline cut to one lease duration after this client first saw that lease record,
     * and never earlier than the bound an earlier lease record gave; a release instant cut
     * to when it first saw the tombstone. A live holder writes a new record every renew
     * interval, well inside the cut.
     */
    RoleState bounded(Role role, RoleState state) {
        return sighted(role, state).believed(state, config);
    }

    /** What this client saw of the state's newest lease or release, remembered per role; judges a record seen for the first time. */
    private Sighted sighted(Role role, RoleState state) {
        if (state.lease().isEmpty()) {
            bounds.remove(role);
            return sightedRelease(role, state);
        }
        LeaseState lease = state.lease().get();
        Sightings.Sighting seen = leases.sight(role, lease.offset());
        if (seen.fresh()) {
            judge(role, lease, seen.seenAt() + config.duration().toMillis());
        }
        long candidate = new Sighted(seen.seenAt(), bounds.getOrDefault(role, Sighted.NONE), Sighted.NONE, Sighted.NONE)
                .believedDeadline(lease, config);
        // A new lease record may extend the wait, never shorten it: anyone with Write on the
        // topic can append one with a deadline already past (naming the live holder, whose
        // contender ignores leases naming itself), and only a tombstone ends a lease early.
        // merge keeps the largest even when two passes of the role decide at once.
        long bound = bounds.merge(role, candidate, Math::max);
        return new Sighted(seen.seenAt(), bound, Sighted.NONE, Sighted.NONE);
    }

    /**
     * Names a lease no honest member on a sane clock writes, and checks the holder's lease
     * duration against this member's unless the record cannot be a member's setting: a
     * deadline not after its own timestamp, or far out and more than twice this member's
     * duration after its timestamp (a forgery such as a deadline that never comes, or a
     * holder configured far longer). A far deadline with a plausible duration is the
     * writer's clock running ahead: its duration still counts.
     */
    private void judge(Role role, LeaseState lease, long cut) {
        long own = config.duration().toMillis();
        long declared = lease.declaredDurationMillis();
        String named = "the lease at offset " + lease.offset() + " of " + transport.topic() + " names " + lease.member()
                + " with deadline " + lease.deadlineInstant();
        if (declared <= 0) {
            // A member's lease always ends one positive duration after its timestamp.
            suspicious.accept(role, named + ", not after its own timestamp; it shortens no standby's wait");
            return;
        }
        if (lease.deadline() > cut + own) {
            // Further out than the clocks of two members can plausibly differ.
            suspicious.accept(
                    role,
                    named + " (" + declared / 1000.0 + " s after its timestamp); a standby waits at most until "
                            + Instant.ofEpochMilli(cut));
            if (declared > 2 * own) {
                return;
            }
        }
        checkAgreement(role, lease);
    }

    /**
     * Members of a role must agree on the lease duration: a standby waits at most its own
     * duration after the holder's last lease, so with a shorter one it takes the role from a
     * live holder that renews less often than that, and the two fence each other in turn.
     * The holder's duration is its lease's deadline less the record's timestamp (its own
     * clock, so no skew); more than a tenth (at least 1 s) apart is named, once per holder
     * and duration, and stays the role's problem (health: misconfigured) until they agree.
     */
    private void checkAgreement(Role role, LeaseState lease) {
        long declared = lease.declaredDurationMillis();
        long own = config.duration().toMillis();
        if (Math.abs(declared - own) <= Math.max(1_000, own / 10)) {
            disagreements.remove(role);
            return;
        }
        String message = "member " + lease.member() + " writes leases of role " + role + " for " + declared / 1000.0
                + " s, but this member's lease duration (krabka.coordination.lease.duration, LeaseConfig.duration) is "
                + own / 1000.0 + " s: members of one role must agree on the lease settings, or a standby takes the role"
                + " from a live holder that renews less often than its own duration";
        CoordinationConfigurationException before =
                disagreements.put(role, new CoordinationConfigurationException(message));
        if (before == null || !message.equals(before.getMessage())) {
            log.error("Role {}: {}", role, message);
        }
    }

    /** Drops what it remembers of the role: nothing of this client uses it any more. */
    void forget(Role role) {
        leases.forget(role);
        releases.forget(role);
        bounds.remove(role);
        disagreements.remove(role);
    }

    void sizes(Map<String, Integer> into) {
        into.put("leaseBounds.leases", leases.size());
        into.put("leaseBounds.releases", releases.size());
        into.put("leaseBounds.bounds", bounds.size());
        into.put("leaseBounds.disagreements", disagreements.size());
    }

    /** Why this member's lease settings disagree with the holder's of {@code role}, while they do. */
    Optional<CoordinationConfigurationException> disagreement(Role role) {
        return Optional.ofNullable(disagreements.get(role));
    }

    /**
     * When this client first saw the state's release. A standby anchors on the tombstone's
     * timestamp, which its writer chooses: one far in the future would hold every standby
     * off until then, so it is cut to the sighting.
     */
    private Sighted sightedRelease(Role role, RoleState state) {
        if (state.leaseReleasedAt().isEmpty()) {
            return Sighted.NOTHING;
        }
        long releasedAt = state.leaseReleasedAt().getAsLong();
        Sightings.Sighting seen = releases.sight(role, releasedAt);
        if (seen.fresh() && releasedAt > seen.seenAt() + config.duration().toMillis()) {
            suspicious.accept(
                    role,
                    "a lease tombstone in " + transport.topic() + " is stamped " + Instant.ofEpochMilli(releasedAt)
                            + ", later than this member's clock says it arrived (" + Instant.ofEpochMilli(seen.seenAt())
                            + ")");
        }
        return new Sighted(Sighted.NONE, Sighted.NONE, seen.seenAt(), Sighted.NONE);
    }
}
