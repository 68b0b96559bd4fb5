package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.Shares;
import io.krabka.streams.coordination.succession.Succession;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member's election pass for one role: register if needed, read what is new, bound
 * what the records claim, let the succession rules decide, and challenge only when they
 * say so now and the coordinator shows no challenge in flight.
 */
final class ElectionPass {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    // What a grant needs of the client, and the balancer that counts shares and places roles.
    private final TermHost host;
    private final Balancer balancer;
    private final CoordinationTransport transport;
    private final LeaseConfig config;
    private final InstantSource clock;
    private final RoleFolds folds;
    private final Registrations registrations;
    private final LeaseBounds leaseBounds;
    private final ChallengeCheck challengeCheck;
    // The client's live leaderships: a grant adds its own.
    private final HeldLeaderships held;

    ElectionPass(
            TermHost host,
            Balancer balancer,
            InstantSource clock,
            BiConsumer<Role, String> suspicious,
            CoordinationTransport transport,
            RoleFolds folds,
            Registrations registrations,
            HeldLeaderships held) {
        this.host = host;
        this.balancer = balancer;
        this.transport = transport;
        this.config = host.config();
        this.clock = clock;
        this.folds = folds;
        this.registrations = registrations;
        this.leaseBounds = new LeaseBounds(config, clock, transport, suspicious);
        this.challengeCheck = new ChallengeCheck(transport, config, clock, folds);
        this.held = held;
    }

    /** Drops what the bounds and the challenge checks remember of the role. */
    void forget(Role role) {
        leaseBounds.forget(role);
        challengeCheck.forget(role);
    }

    void sizes(Map<String, Integer> into) {
        leaseBounds.sizes(into);
        challengeCheck.sizes(into);
    }

    Optional<CoordinationConfigurationException> leaseDisagreement(Role role) {
        return leaseBounds.disagreement(role);
    }

    /** See {@code ChallengeCheck.foreignWriter}. */
    Optional<CoordinationConfigurationException> foreignWriter(Role role) {
        return challengeCheck.foreignWriter(role);
    }

    /**
     * One election pass.
     *
     * @param confirm whether a grant also writes the confirming leases that make
     *     {@code current()} true before it returns; a contender confirms after it handed
     *     the grant on, to keep those writes off the handover's path
     */
    Engine.Attempt attempt(Role role, MemberId me, boolean confirm) {
        if (held.holdsActive(role)) {
            throw new IllegalStateException(me + " already holds role " + role + " through this client");
        }
        Registrations.Registered registered = registrations.of(role);
        if (registered == null) {
            registered = registrations.register(role, me);
        }
        RoleState state = folds.refresh(role, Duration.ZERO);
        if (state.entryOf(me).isEmpty() && state.nextOffset() > registered.offset()) {
            // A winner pruned this member as silent; it rejoins at the tail.
            log.info("{} is no longer in the roster of role {}; registering again", me, role);
            registered = registrations.register(role, me);
            state = folds.refresh(role, Duration.ZERO);
        }
        // Our newest registration may be committed but sit behind an open transaction (a
        // holder frozen mid-write, or any role sharing the partition), which read_committed
        // cannot read past. It can only land after every entry we see, so rank from the tail
        // now: waiting for it to show would hold this standby off until that transaction
        // times out. The entry is the record we wrote, so the challenge anchors on its time,
        // never on now.
        state = Registrations.withNewest(state, me, registered);
        Shares shares = balancer.spreadShares();
        Instant now = clock.instant();
        RoleState bounded = leaseBounds.bounded(role, state);
        if (shares == null || !Succession.placesOnce(bounded, shares, config, now)) {
            return decide(
                    role, me, bounded, shares, Succession.evaluate(bounded, me, false, config, now, shares), confirm);
        }
        if (bounded.lease().isPresent() && !bounded.registeredSinceLease(me)) {
            // Back after a lease that no one took over (the cluster, or every member, was away):
            // registering again says so, and the members back place the role between them.
            log.info(
                    "{} registers again for role {}: its lease ran out at {} and no one took it over",
                    me,
                    role,
                    bounded.lease().get().deadlineInstant());
            registered = registrations.register(role, me);
            bounded = leaseBounds.bounded(
                    role, Registrations.withNewest(folds.refresh(role, Duration.ZERO), me, registered));
        }
        // A first start under spread: decided with this member's own roles counted exactly,
        // its challenges in flight included, so concurrent passes never take more than its share.
        RoleState placing = bounded;
        Decision placed = balancer.placeOnce(
                role,
                me,
                shares,
                () -> held.activeOf(me),
                exact -> Succession.evaluate(placing, me, false, config, now, exact));
        Engine.Attempt attempt;
        try {
            attempt = decide(role, me, placing, shares, placed, confirm);
        } finally {
            balancer.placed(role);
        }
        if (placed instanceof Decision.Wait waiting && attempt.readAgainAt() == null) {
            // The turns before this one move the shares with no news of this role: look again
            // after each, or a place counted before them meets the members at their share.
            Optional<Instant> readAgain =
                    Succession.placementReadAgain(placing, me, config, clock.instant(), waiting.challengeAt());
            if (readAgain.isPresent()) {
                return new Engine.Attempt(null, attempt.decision(), readAgain.get(), attempt.lease());
            }
        }
        return attempt;
    }

    /** Challenges, prepares or waits, as {@code decision} says. */
    private Engine.Attempt decide(
            Role role, MemberId me, RoleState state, @Nullable Shares shares, Decision decision, boolean confirm) {
        if (decision instanceof Decision.Challenge due) {
            decision = challengeCheck.unlessAlreadyChallenged(role, me, state, due);
            if (decision instanceof Decision.Wait) {
                // An epoch no visible lease explains put the turn off. That wait is anchored on
                // when the epoch was seen, not on the lease, so renewals in the news must not move
                // it as they move a lease's turn: decided on no lease, the next news makes the
                // next pass read, and the read decides again (the renewal may explain the epoch).
                return new Engine.Attempt(null, decision, null, null);
            }
        }
        if (decision instanceof Decision.Challenge) {
            return new Engine.Attempt(challenge(role, me, state, confirm, shares), decision, null, null);
        }
        if (decision instanceof Decision.Wait next && next.rank() == 0) {
            Instant prepareAt = prepareAt(state, shares);
            if (clock.instant().isBefore(prepareAt)) {
                transport.discardPrepared(role);
                return new Engine.Attempt(
                        null, decision, prepareAt, state.lease().orElse(null));
            }
            // Next in line: build and connect the role's producer now, not at the challenge.
            transport.prepareEpoch(role);
        } else {
            // Not next: a producer built ahead of a turn that moved to another member costs
            // as much as a held role's, so a member pays only for the roles it holds or is
            // about to take.
            transport.discardPrepared(role);
            if (decision instanceof Decision.Wait
                    && shares != null
                    && state.lease().isPresent()
                    && clock.instant().isBefore(state.lease().get().deadlineInstant())) {
                // Under spread the order follows the shares, which move without news of this
                // role: read again where the first in that order takes it, the lease's deadline,
                // and take it if this member is first by then. On the place of this read, two
                // standbys could each wait a stagger for the other and then challenge together.
                return new Engine.Attempt(
                        null,
                        decision,
                        state.lease().get().deadlineInstant(),
                        state.lease().get());
            }
        }
        return new Engine.Attempt(null, decision, null, state.lease().orElse(null));
    }

    /**
     * When the standby next in line builds the role's producer ahead of its challenge.
     * Under {@link io.krabka.streams.coordination.Balance#NONE} at once: the same member is
     * next for every role it does not hold, and its takeover then pays only for
     * InitProducerId. Under {@code SPREAD} the next in line moves with the shares and every
     * member is next for about as many roles as it holds, so it prepares only once the
     * holder is late: halfway between the renewal it missed and the deadline, which still
     * leaves a third of a lease or more to build the producer before a crash's challenge.
     * A handover's target builds it on the handover's path (tens of milliseconds).
     */
    private Instant prepareAt(RoleState state, @Nullable Shares shares) {
        if (shares == null || state.lease().isEmpty()) {
            return Instant.MIN;
        }
        Duration margin = config.duration().minus(config.renewInterval()).dividedBy(2);
        return state.lease().get().deadlineInstant().minus(margin);
    }

    private @Nullable LeadershipTerm challenge(
            Role role, MemberId me, RoleState state, boolean confirm, @Nullable Shares shares) {
        AtomicLong term = new AtomicLong(-1);
        return host.instrumentation()
                .around(CoordinationInstrumentation.Operation.GRANT, role, me, term::get, 0, () -> {
                    LeadershipTerm won = challengeNow(role, me, state, confirm, shares);
                    if (won != null) {
                        term.set(won.term());
                    }
                    return won;
                });
    }

    private @Nullable LeadershipTerm challengeNow(
            Role role, MemberId me, RoleState state, boolean confirm, @Nullable Shares shares) {
        // Recorded before InitProducerId: a challenge that fails after it still moved the epoch.
        challengeCheck.challenging(role, state);
        RoleEpoch epoch = transport.initEpoch(role);
        ProducerState initial = null;
        try {
            initial = LeadershipTerm.describedAfterInit(transport, epoch);
            LeadershipTerm leadership =
                    LeadershipTerm.grant(host, transport, epoch, me, confirm, state.nextOffset(), initial);
            if (leadership.term() < 0) {
                // Committed by the coordinator's word, with its lease record not yet visible (or
                // not readable), and its producer cannot go on: no term to hand on, so no grant.
                // Standbys wait out its lease, as after a holder that crashed.
                log.warn(
                        "{} challenged role {} and the coordinator reports the grant committed, but its lease record is not"
                                + " visible, so its term is not known; the leadership ended at once ({})",
                        me,
                        role,
                        leadership.state());
                challengeCheck.failedOnItsOwn(role, state);
                return null;
            }
            challengeCheck.won(role, state, leadership);
            if (leadership.isActive()) {
                held.granted(leadership);
            } else {
                // Its commit was found committed only after the lease deadline: a grant (its
                // term is taken) whose producer cannot go on. The caller sees it ended.
                log.warn(
                        "{} was granted role {} with term {}, but the leadership ended at once ({})",
                        me,
                        role,
                        leadership.term(),
                        leadership.state());
            }
            if (!Succession.placesOnce(state, shares, config, clock.instant())) {
                registrations.prune(role, me, state, Succession.dueBefore(state, me, config, shares));
                state.lease()
                        .filter(lease -> !lease.member().equals(me) && lease.deadline() <= clock.millis())
                        .ifPresent(expired -> balancer.silent(expired.member()));
            }
            // Placed once (a start, or after an outage): the members that let this one go first
            // and the holder of a lease no one could take over are not silent, only later.
            return leadership;
        } catch (CommitOutcomeUnknownException undecided) {
            // The grant's lease may have committed or not, and its producer cannot go on. A new
            // challenge decides: its InitProducerId supersedes this epoch whatever became of it.
            log.info(
                    "{} challenged role {}, but whether its grant committed is not known, so it challenges again: {}",
                    me,
                    role,
                    undecided.getMessage());
            challengeCheck.failedOnItsOwn(role, state);
            epoch.close();
            return null;
        } catch (FencedException lostTheRace) {
            if (lostTheRace.endCause() == LeadershipEndCause.FENCED
                    && challengeCheck.refusedAtFirstEpoch(role, state, initial)) {
                log.info(
                        "{} challenged role {} and the broker refused its grant, with no later InitProducerId: it"
                                + " challenges again ({})",
                        me,
                        role,
                        lostTheRace.getMessage());
            } else if (lostTheRace.endCause() == LeadershipEndCause.FENCED) {
                log.info("{} lost the challenge for role {} to a later InitProducerId", me, role);
            } else {
                log.info("{} did not win role {}: {}", me, role, lostTheRace.getMessage());
                challengeCheck.failedOnItsOwn(role, state);
            }
            epoch.close();
            return null;
        } catch (RuntimeException e) {
            challengeCheck.failedOnItsOwn(role, state);
            epoch.close();
            throw e;
        }
    }
}
