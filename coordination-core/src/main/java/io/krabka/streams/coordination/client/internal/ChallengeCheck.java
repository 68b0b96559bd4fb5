package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.Succession;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the transaction coordinator, before a challenge, whether someone already
 * challenged since the state this member sees. Records can stay invisible for a while
 * after their commit (slow commit markers, or {@code read_committed} held back behind
 * another role's open transaction on the partition), so a grant in flight looks like no
 * grant, and every standby whose turn comes would fence it, and be fenced in turn, for as
 * long as it lasts. The coordinator cannot be fooled that way: an epoch no visible lease
 * (nor this member's own last challenge) explains means someone ran InitProducerId since.
 *
 * <p>Size: one class, since what explains an epoch (a visible lease, this member's own
 * challenge, its own refused or failed grant) and the waits an unexplained one starts must
 * read and write the same per-role records; split, each half would need the other's maps.
 */
public final class ChallengeCheck {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    private final CoordinationTransport transport;
    private final LeaseConfig config;
    private final InstantSource clock;
    private final RoleFolds folds;
    // An epoch the coordinator reports that no visible lease explains (a challenge in
    // flight), keyed by the reported (producer id, epoch, state, transaction start).
    private final Sightings epochSightings;
    // This client's last challenge of each role: what it saw when it challenged, and what it won.
    private final Map<Role, Challenged> challenged = new ConcurrentHashMap<>();
    // When the current run of unexplained epochs of a role began (this member's clock, ms).
    private final Map<Role, Long> unexplainedSince = new ConcurrentHashMap<>();
    // Roles whose epoch has moved unexplained for so long that someone else writes with their
    // transactional id: what this member says about it until the epochs are explained again.
    private final Map<Role, CoordinationConfigurationException> foreignWriters = new ConcurrentHashMap<>();

    ChallengeCheck(CoordinationTransport transport, LeaseConfig config, InstantSource clock, RoleFolds folds) {
        this.transport = transport;
        this.config = config;
        this.clock = clock;
        this.folds = folds;
        this.epochSightings = new Sightings(clock);
    }

    /**
     * What a challenge was made against: the visible lease (its offset), the release (its
     * tombstone's timestamp), or nothing visible; the leadership it won, if any; and what
     * the coordinator reported after it failed on its own (not to a later InitProducerId),
     * since that epoch is this member's own doing.
     */
    private record Challenged(
            long visibleOffset,
            long visibleRelease,
            @Nullable LeadershipTerm won,
            @Nullable ProducerState ownFailure) {

        static Challenged of(RoleState state, @Nullable LeadershipTerm won, @Nullable ProducerState ownFailure) {
            return new Challenged(
                    state.lease().map(LeaseState::offset).orElse(-1L),
                    state.leaseReleasedAt().orElse(-1L),
                    won,
                    ownFailure);
        }

        boolean against(RoleState state) {
            Challenged now = of(state, null, null);
            return now.visibleOffset == visibleOffset && now.visibleRelease == visibleRelease;
        }

        /** Whether this member's own challenge explains {@code reported}. */
        boolean explains(ProducerState reported) {
            return won != null && matches(won.token().producerId(), won.token().producerEpoch(), reported)
                    || ownFailure != null && matches(ownFailure.producerId(), ownFailure.producerEpoch(), reported);
        }
    }

    /**
     * Drops what it remembers of the role: nothing of this client uses it any more. A later
     * challenge of it may take this member's own last epoch for one in flight: a wait, at worst.
     */
    void forget(Role role) {
        epochSightings.forget(role);
        challenged.remove(role);
        unexplainedSince.remove(role);
        foreignWriters.remove(role);
    }

    void sizes(Map<String, Integer> into) {
        into.put("challengeCheck.epochSightings", epochSightings.size());
        into.put("challengeCheck.challenged", challenged.size());
        into.put("challengeCheck.unexplainedSince", unexplainedSince.size());
        into.put("challengeCheck.foreignWriters", foreignWriters.size());
    }

    /** A challenge of {@code state} begins: recorded before InitProducerId, since one that fails after it still moved the epoch. */
    void challenging(Role role, RoleState state) {
        challenged.put(role, Challenged.of(state, null, null));
    }

    /** The challenge of {@code state} won {@code leadership}: its epoch is this member's own. */
    void won(Role role, RoleState state, LeadershipTerm leadership) {
        challenged.put(role, Challenged.of(state, leadership, null));
    }

    /**
     * The challenge when no one else has challenged since the state this member sees;
     * otherwise a wait: an unexplained epoch is treated like a lease first seen now, with
     * this member's stagger after it. A record on the topic cannot forge it: only a member
     * with Write on the role's transactional id can move the epoch. Rank 0 does not ask the
     * first time it challenges a released or never-held role (a graceful handover stays one
     * request shorter); it does ask after a lease's deadline, since a lease that shows late
     * (its records held back) may name a holder that renews out of sight.
     */
    Decision unlessAlreadyChallenged(Role role, MemberId me, RoleState state, Decision.Challenge due) {
        Challenged last = challenged.get(role);
        boolean again = last != null && last.against(state);
        if (due.rank() == 0 && !again && state.lease().isEmpty()) {
            return due;
        }
        // Within a lease, not the whole operation timeout: Kafka's Admin keeps a describe
        // that began while the role's coordinator was dead on the dead broker until its own
        // timeout, though one begun after the move is answered at once. Failing here costs
        // this pass only; the next one asks again.
        Optional<ProducerState> reported = transport.describeEpoch(role, config.duration());
        if (reported.isEmpty()
                || explained(state, reported.get(), again ? last : null)
                || carried(role, reported.get())) {
            explainedAgain(role);
            return due;
        }
        ProducerState epoch = reported.get();
        // Any move is news: a new epoch, a transaction's progress, or a new transaction (which
        // shows only in its start time under transaction version 1: an invisible holder renewing).
        long key = Objects.hash(epoch.producerId(), epoch.producerEpoch(), epoch.state(), epoch.transactionStartedAt());
        boolean episodeBegins = !epochSightings.seenAny(role);
        Sightings.Sighting seen = epochSightings.sight(role, key);
        if (episodeBegins) {
            unexplainedSince.put(role, seen.seenAt());
        } else {
            checkForeignWriter(role, me, epoch);
        }
        Instant challengeAt = Succession.challengeAfter(Instant.ofEpochMilli(seen.seenAt()), due.rank(), config);
        if (!clock.instant().isBefore(challengeAt)) {
            return due;
        }
        if (episodeBegins) {
            log.info(
                    "Role {} has an epoch ({}/{}, {}) that no lease visible to this member explains: a challenge is in flight "
                            + "or its records are not visible yet; waiting until {}, and longer while it moves",
                    role,
                    epoch.producerId(),
                    epoch.producerEpoch(),
                    epoch.state(),
                    challengeAt);
        }
        return new Decision.Wait(due.rank(), challengeAt);
    }

    /**
     * What this member says about someone else writing with the role's transactional id
     * (see {@link #checkForeignWriter}), until a visible lease explains the epoch again.
     */
    Optional<CoordinationConfigurationException> foreignWriter(Role role) {
        return Optional.ofNullable(foreignWriters.get(role));
    }

    /**
     * How long the epoch of a role may move without any lease this member sees explaining
     * it before this member says someone else writes with the role's transactional id.
     * Grants held back from {@code read_committed} explain a run of a few leases; a writer
     * whose records go to another topic moves it for as long as it lives.
     */
    public static Duration foreignWriterAfter(LeaseConfig config) {
        Duration leases = config.duration().multipliedBy(5);
        return leases.compareTo(FOREIGN_WRITER_AT_LEAST) > 0 ? leases : FOREIGN_WRITER_AT_LEAST;
    }

    private static final Duration FOREIGN_WRITER_AT_LEAST = Duration.ofMinutes(1);

    private void explainedAgain(Role role) {
        epochSightings.forget(role);
        unexplainedSince.remove(role);
        if (foreignWriters.remove(role) != null) {
            log.info("The epoch of role {} is explained by a lease on topic {} again", role, transport.topic());
        }
    }

    /**
     * Says once, as an ERROR, that someone else writes with the role's transactional id
     * when its epoch has moved for {@link #foreignWriterAfter} and no lease on this
     * member's topic ever explained it: members of the role configured with another
     * coordination topic (each fences the other once, then waits behind an epoch it cannot
     * explain), or an application using the role's name as its {@code transactional.id}.
     * It names the other topic when the cluster shows where that producer writes. This
     * member goes on waiting: it never fences that writer again.
     */
    private void checkForeignWriter(Role role, MemberId me, ProducerState epoch) {
        Long since = unexplainedSince.get(role);
        if (since == null || foreignWriters.containsKey(role)) {
            return;
        }
        Duration lasted = Duration.ofMillis(clock.millis() - since);
        if (lasted.compareTo(foreignWriterAfter(config)) < 0) {
            return;
        }
        String ours = transport.topic();
        String other;
        try {
            other = transport.otherTopicWrittenBy(role, epoch.producerId()).orElse(null);
        } catch (RuntimeException e) {
            log.debug(
                    "Could not look for the topic producer {} writes role {} to: {}",
                    epoch.producerId(),
                    role,
                    e.toString());
            other = null;
        }
        String message =
                "for " + lasted.toSeconds() + " s another writer has kept moving the transactional id of role " + role
                        + " (producer " + epoch.producerId() + ", epoch " + epoch.producerEpoch()
                        + "), yet none of its leases shows on"
                        + " the coordination topic " + ours + " that member " + me + " reads"
                        + (other != null
                                ? ": producer " + epoch.producerId() + " writes the role's records to topic " + other
                                        + ", so members of"
                                        + " role " + role + " are configured with different coordination topics ("
                                        + ours + " here, "
                                        + other + " there)"
                                : ": members of role " + role
                                        + " configured with another coordination topic, or an application that"
                                        + " uses \"" + role + "\" as its transactional.id")
                        + ". Every member of a role must use the same topic (krabka.coordination.topic.name, TopicSpec.withName): set"
                        + " it on every member and restart those that differ. Meanwhile " + me
                        + " waits and does not fence that writer";
        CoordinationConfigurationException problem = new CoordinationConfigurationException(message);
        foreignWriters.put(role, problem);
        log.error("Role {}: {}", role, message);
    }

    /**
     * Whether the visible state (or this member's own last challenge of it) explains the
     * epoch the coordinator reports: the lease's own epoch, or one more after an abort (the
     * coordinator aborting a dead holder's open transaction at its timeout).
     */
    private static boolean explained(RoleState state, ProducerState reported, @Nullable Challenged ownLast) {
        if (ownLast != null && ownLast.explains(reported)) {
            return true;
        }
        if (state.lease().isPresent()) {
            return explainedBy(state.lease().get()::wrote, reported);
        }
        // Nothing visible to compare with: a settled transaction is history (a released or
        // long-idle role), unless this member challenged this state already and someone
        // moved the epoch past what it won.
        return ownLast == null && reported.transactionComplete();
    }

    /**
     * After this member's grant was refused as fenced: whether the refusal was the broker's
     * alone, the coordinator showing, as right after this member's InitProducerId
     * ({@code initial}), the same producer id at epoch 0 with no transaction begun
     * ({@code Empty}). Any later InitProducerId on that id moves the epoch above 0, so no one
     * challenged since; the epoch is then remembered as {@link #failedOnItsOwn} remembers it,
     * and the next challenge does not wait a lease behind it. A loaded Kafka 4.1 broker
     * refused a fresh role's first produce so ({@code InvalidTxnStateException}). Anything
     * else may be a rival's epoch and stays a fence: a new id at epoch 0 that a rival's
     * InitProducerId minted after this member's describe (an epoch rollover, an expired id)
     * differs from {@code initial}. Only a rival's that landed between this member's
     * InitProducerId and its describe, at a rollover, would pass: one needless challenge.
     */
    boolean refusedAtFirstEpoch(Role role, RoleState state, @Nullable ProducerState initial) {
        if (initial == null || initial.producerEpoch() != 0) {
            return false;
        }
        try {
            ProducerState now = transport.describeEpoch(role, config.duration()).orElse(null);
            if (now == null
                    || now.producerId() != initial.producerId()
                    || now.producerEpoch() != 0
                    || !"Empty".equals(now.state())) {
                return false;
            }
            challenged.put(role, Challenged.of(state, null, now));
            return true;
        } catch (RuntimeException e) {
            log.debug("Could not describe role {} after a refused grant: {}", role, e.toString());
            return false;
        }
    }

    /**
     * Remembers the epoch a challenge of this member left behind when it failed by itself
     * (its grant aborted, a timeout), so its next challenge does not take its own epoch
     * for someone else's challenge in flight. Best effort: without it, that costs a lease.
     */
    void failedOnItsOwn(Role role, RoleState state) {
        try {
            challenged.put(
                    role,
                    Challenged.of(
                            state,
                            null,
                            transport.describeEpoch(role, config.duration()).orElse(null)));
        } catch (RuntimeException e) {
            log.debug("Could not describe role {} after a failed challenge: {}", role, e.toString());
        }
    }

    /**
     * Whether a lease record this client folded carried the reported epoch (or one less,
     * after an abort), whichever leadership it belonged to: then nobody ran InitProducerId
     * since, though a newer record (a forged lease, or a tombstone) hides it. A forger who
     * writes an epoch ahead of the coordinator's can make one challenge in flight look
     * explained: that costs an epoch, never a second writer.
     */
    private boolean carried(Role role, ProducerState reported) {
        return folds.viewMatches(role, view -> explainedBy(view::carried, reported));
    }

    private static boolean matches(long producerId, short epoch, ProducerState reported) {
        return explainedBy((otherId, otherEpoch) -> otherId == producerId && otherEpoch == epoch, reported);
    }

    /** Something whose epochs {@link #explainedBy} compares: a lease, a fold, an own epoch. */
    @FunctionalInterface
    private interface Carries {
        boolean carried(long producerId, short producerEpoch);
    }

    /**
     * Whether {@code carries} has the reported (producer id, epoch), or the one before it
     * when the coordinator aborted since (its abort of a dead holder's open transaction
     * moves the epoch once more).
     */
    private static boolean explainedBy(Carries carries, ProducerState reported) {
        return carries.carried(reported.producerId(), reported.producerEpoch())
                || aborting(reported) && carries.carried(reported.producerId(), (short) (reported.producerEpoch() - 1));
    }

    private static boolean aborting(ProducerState reported) {
        return reported.state().equals("PrepareAbort") || reported.state().equals("CompleteAbort");
    }
}
