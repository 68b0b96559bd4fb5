package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Bounds what a lease or a release record can make a standby believe. Any member with
 * Write on the topic can append a lease naming anyone with any deadline, or a tombstone
 * stamped with any time; a standby that believed them would wait for ever, or challenge a
 * live holder at once. So the deadlines and release instants a standby decides on are cut
 * by when this member first saw the records.
 */
final class LeaseBounds {

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

    LeaseBounds(LeaseConfig config, InstantSource clock, CoordinationTransport transport, BiConsumer<Role, String> suspicious) {
        this.config = config;
        this.transport = transport;
        this.suspicious = suspicious;
        this.leases = new Sightings(clock);
        this.releases = new Sightings(clock);
    }

    /**
     * The state with the lease's deadline cut to one lease duration after this client
     * first saw that lease record, and never earlier than the bound an earlier lease
     * record gave. A live holder writes a new record every renew interval, well inside
     * the cut.
     */
    RoleState bounded(Role role, RoleState state) {
        if (state.lease().isEmpty()) {
            bounds.remove(role);
            return withBoundedRelease(role, state);
        }
        LeaseState lease = state.lease().get();
        Sightings.Sighting seen = leases.sight(role, lease.offset());
        long cut = seen.seenAt() + config.duration().toMillis();
        if (seen.fresh() && lease.deadline() > cut + config.duration().toMillis()) {
            // Further out than the clocks of two members can plausibly differ: a forged or broken record.
            suspicious.accept(role, "the lease at offset " + lease.offset() + " of " + transport.topic() + " names " + lease.member()
                    + " with deadline " + lease.deadlineInstant() + "; a standby waits at most until " + Instant.ofEpochMilli(cut));
        }
        // A new lease record may extend the wait, never shorten it: anyone with Write on the
        // topic can append one with a deadline already past (naming the live holder, whose
        // contender ignores leases naming itself), and only a tombstone ends a lease early.
        long bound = bounds.merge(role, Math.min(lease.deadline(), cut), Math::max);
        if (bound == lease.deadline()) {
            return state;
        }
        return new RoleState(state.role(), state.roster(), Optional.of(lease.withDeadline(bound)), state.leaseReleasedAt(),
                state.nextOffset());
    }

    /**
     * The state with the release instant cut to when this client first saw the release.
     * A standby anchors on the tombstone's timestamp, which its writer chooses: one far in
     * the future would hold every standby off until then.
     */
    private RoleState withBoundedRelease(Role role, RoleState state) {
        if (state.leaseReleasedAt().isEmpty()) {
            return state;
        }
        long releasedAt = state.leaseReleasedAt().getAsLong();
        Sightings.Sighting seen = releases.sight(role, releasedAt);
        if (releasedAt <= seen.seenAt()) {
            return state;
        }
        if (seen.fresh() && releasedAt > seen.seenAt() + config.duration().toMillis()) {
            suspicious.accept(role, "a lease tombstone in " + transport.topic() + " is stamped " + Instant.ofEpochMilli(releasedAt)
                    + ", later than this member's clock says it arrived (" + Instant.ofEpochMilli(seen.seenAt()) + ")");
        }
        return new RoleState(state.role(), state.roster(), state.lease(), OptionalLong.of(seen.seenAt()), state.nextOffset());
    }
}
