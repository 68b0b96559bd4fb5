package io.krabka.streams.coordination.succession;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.kafka.common.utils.Utils;
import org.jspecify.annotations.Nullable;

/**
 * The succession rules: pure functions of a role's state, a member, the lease timings
 * and an explicit {@code now}. They hold no clock and do no I/O, so a test drives a
 * whole failover with a manual clock and no broker.
 *
 * <p>The rules decide only <em>when</em> a member asks for the role. Who may write is
 * decided by the transaction coordinator: a challenge that the rules allow too early
 * costs an extra epoch, never a second authoritative writer.
 *
 * <ul>
 *   <li>A holder renews at {@code (deadline - duration) + renewInterval}, i.e. one
 *       renew interval after it wrote its newest lease.</li>
 *   <li>A standby of rank {@code n} challenges at {@code anchor + n * challengeStagger},
 *       the stagger capped at one lease duration.
 *       The anchor is the current lease's deadline; with no lease, it is the later of
 *       the member's own registration time and the release of the last lease.</li>
 *   <li>A release ends the lease when its holder leaves the roster: the holder's
 *       registration tombstone after its newest lease, a plain append that readers see
 *       before the lease tombstone's transaction completes ({@link RoleStateBuilder}).</li>
 *   <li>Under {@link io.krabka.streams.coordination.Balance#SPREAD}, a lease that runs out
 *       (a crash) is taken in the spread order instead: standbys below their share first,
 *       then those at or above it, each group in an order hashed from the role and the
 *       member (so one crash's roles fall to different members), one stagger apart, and
 *       never more than one stagger later than the roster rank would say. A release keeps
 *       the roster order: that is what a handover arranges.</li>
 *   <li>Under spread, a role that never had a lease (a first start) is placed once: from a
 *       common anchor, the newest registration plus one stagger, the standbys below their
 *       share challenge in the spread order and those at it after them
 *       ({@link #placesOnce}); so is one whose last lease ended with no one to take it
 *       over (after a full restart, or an outage).</li>
 *   <li>The anchor always comes from the role state, never from {@code now}: an anchor
 *       of "now plus n staggers" would move on every evaluation, and a standby of rank
 *       1 or more would wait forever while rank 0 is dead.</li>
 * </ul>
 */
public final class Succession {

    private Succession() {}

    /**
     * Decides what {@code me} does next for the role of {@code state}.
     *
     * @param state the folded role state
     * @param me the member deciding
     * @param holding whether {@code me} holds a live leadership of this role (an epoch
     *     from its own producer); a member that restarted is not holding, even when the
     *     newest lease still names it
     * @param config the lease timings
     * @param now the instant to decide at
     */
    public static Decision evaluate(RoleState state, MemberId me, boolean holding, LeaseConfig config, Instant now) {
        return evaluate(state, me, holding, config, now, null);
    }

    /**
     * Decides as {@link #evaluate(RoleState, MemberId, boolean, LeaseConfig, Instant)}, a
     * standby after a lease that runs out in the spread order of {@code shares}.
     *
     * @param shares how the roles {@code me} reads are shared out; null for the roster order alone
     */
    public static Decision evaluate(
            RoleState state, MemberId me, boolean holding, LeaseConfig config, Instant now, @Nullable Shares shares) {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(me, "me");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(now, "now");
        if (holding) {
            return evaluateHolder(state, me, config, now);
        }
        OptionalInt rank = state.rankOf(me);
        if (rank.isEmpty()) {
            return new Decision.Register();
        }
        if (shares != null && placesOnce(state, shares, config, now)) {
            if (state.lease().isPresent() && !state.registeredSinceLease(me)) {
                // Back after a lease no one took over: say so, and the members back place the role.
                return new Decision.Register();
            }
            return placeOnce(state, me, config, now, shares);
        }
        int place = rank.getAsInt();
        Duration wait = stagger(place, config);
        if (shares != null && spreads(state, shares)) {
            place = spreadOrder(state, me, shares).indexOf(me);
            wait = spreadWait(place, rank.getAsInt(), config);
        }
        Instant challengeAt = anchor(state, me).plus(wait);
        return now.isBefore(challengeAt)
                ? new Decision.Wait(place, challengeAt)
                : new Decision.Challenge(place, challengeAt);
    }

    /**
     * The standbys that were due to challenge before {@code me} and did not, when
     * {@code me} won the role: the roster ranks ahead of it, or under the spread order the
     * standbys whose turn came strictly earlier. A winner removes them as silent.
     */
    public static List<MemberId> dueBefore(RoleState state, MemberId me, LeaseConfig config, @Nullable Shares shares) {
        List<MemberId> ahead = new ArrayList<>();
        if (shares != null && neverLeased(state)) {
            // Who deferred under the cold-start rule depends on shares each member counts from
            // its own view: a winner cannot tell a silent member from one that let it go first.
            // (A winner after an outage prunes no one either: ElectionPass asks placesOnce.)
            return ahead;
        }
        List<MemberId> standbys = standbys(state, me);
        if (shares == null || !spreads(state, shares)) {
            for (MemberId standby : standbys) {
                if (standby.equals(me)) {
                    break;
                }
                ahead.add(standby);
            }
            return ahead;
        }
        List<MemberId> order = spreadOrder(state, me, shares);
        Duration mine = spreadWait(order.indexOf(me), standbys.indexOf(me), config);
        for (MemberId standby : order) {
            if (!standby.equals(me)
                    && spreadWait(order.indexOf(standby), standbys.indexOf(standby), config)
                                    .compareTo(mine)
                            < 0) {
                ahead.add(standby);
            }
        }
        return ahead;
    }

    /**
     * Whether the role is placed by the cold-start rule: under spread, a role that has never
     * had a lease (a first start), or whose last lease ended longer ago than any standby's
     * turn can come, so no member was there to take it: a release before every member
     * stopped (a full restart), or a lease that ran out while the cluster or every member
     * was away ({@link #abandoned}).
     */
    public static boolean placesOnce(RoleState state, @Nullable Shares shares, LeaseConfig config, Instant now) {
        if (shares == null) {
            return false;
        }
        if (state.lease().isPresent()) {
            return abandoned(state.lease().get(), config, now);
        }
        return neverLeased(state)
                || now.isAfter(latestTurnAfter(
                        Instant.ofEpochMilli(state.leaseReleasedAt().getAsLong()), config));
    }

    /** No lease and no release of one: a role on its first start (or whose records compaction removed). */
    private static boolean neverLeased(RoleState state) {
        return state.lease().isEmpty() && state.leaseReleasedAt().isEmpty();
    }

    /**
     * Whether {@code lease} ran out longer ago than the latest turn a standby can have after
     * a crash (one lease of stagger, and one stagger more under spread): no standby was
     * there to take the role.
     */
    public static boolean abandoned(LeaseState lease, LeaseConfig config, Instant now) {
        return now.isAfter(latestTurnAfter(lease.deadlineInstant(), config));
    }

    private static Instant latestTurnAfter(Instant anchor, LeaseConfig config) {
        return anchor.plus(config.duration()).plus(config.challengeStagger());
    }

    /**
     * The cold-start rule. Every registered member counts, so members started together share
     * the roles at once instead of the first to register taking them all and handing most
     * away a settle later. The common anchor is the newest registration in the roster (after
     * an abandoned lease, of the members that registered again since: those back), never
     * later than one lease after this member's own, so a member that registers again and
     * again delays no one for ever. On a start (no lease) one stagger more: time for members
     * started together to register. After an abandoned lease none: the members that held
     * roles count as live until they are found silent, so the first back already stops at its
     * share, and a member on {@code NONE}, which does not wait, takes no more than it races
     * for. From the anchor the standbys below their share challenge in the spread order, one
     * stagger apart; one that holds its share already goes after them, one stagger after the
     * last place below it and one more per role it holds beyond the share, so a role no one
     * else takes is still taken (within one lease, the stagger's cap), by the members at
     * their share in turns.
     */
    private static Decision placeOnce(RoleState state, MemberId me, LeaseConfig config, Instant now, Shares shares) {
        Instant anchor = placementAnchor(state, me, config);
        int place = spreadOrder(state, me, shares).indexOf(me);
        // A member at its share goes after every place below it, one stagger after the last,
        // and one stagger more for each role it holds beyond the share, so the members at
        // their share take what is left in turns rather than all at once.
        int beyond = Math.max(0, shares.held(me) - shares.fairShare());
        // (The anchor is never before this member's own registration.)
        Instant challengeAt = anchor.plus(stagger(shares.full(me) ? place + 1 + beyond : place, config));
        return now.isBefore(challengeAt)
                ? new Decision.Wait(place, challengeAt)
                : new Decision.Challenge(place, challengeAt);
    }

    /** The common anchor of the cold-start rule ({@link #placeOnce}). */
    private static Instant placementAnchor(RoleState state, MemberId me, LeaseConfig config) {
        long own = state.entryOf(me).orElseThrow().registeredAt();
        long since = state.lease().map(LeaseState::offset).orElse(-1L);
        long newest = state.roster().stream()
                .filter(entry -> entry.offset() > since)
                .mapToLong(RosterEntry::registeredAt)
                .max()
                .orElse(own);
        Instant anchor = Instant.ofEpochMilli(
                Math.min(Math.max(newest, own), own + config.duration().toMillis()));
        return state.lease().isEmpty() ? anchor.plus(config.challengeStagger()) : anchor;
    }

    /**
     * When a standby that waits for its place under the cold-start rule reads the role again
     * before its turn at {@code challengeAt}: half a stagger after the next earlier place's
     * turn, once that place's challenge had time to land. Its place was counted from shares
     * that those turns move with no news of this role (a member ahead of it takes another
     * role first and goes to the back); counted only at its own turn, it can meet the members
     * at their share at the stagger's cap, where the last InitProducerId wins. Empty when no
     * earlier turn is left.
     */
    public static Optional<Instant> placementReadAgain(
            RoleState state, MemberId me, LeaseConfig config, Instant now, Instant challengeAt) {
        Duration step = config.challengeStagger();
        if (step.isZero() || state.rankOf(me).isEmpty()) {
            return Optional.empty();
        }
        Instant anchor = placementAnchor(state, me, config);
        Duration half = step.dividedBy(2);
        // The earliest earlier turn whose read is still ahead: turns are anchor + stagger(k).
        long k = now.isBefore(anchor.plus(half))
                ? 0
                : Duration.between(anchor.plus(half), now).toMillis() / Math.max(1, step.toMillis()) + 1;
        Instant at = anchor.plus(stagger((int) Math.min(k, Integer.MAX_VALUE), config))
                .plus(half);
        return at.isAfter(now) && at.isBefore(challengeAt) ? Optional.of(at) : Optional.empty();
    }

    private static boolean spreads(RoleState state, @Nullable Shares shares) {
        return shares != null && state.lease().isPresent();
    }

    /** A place in the spread order waits its stagger, but at most one stagger more than its roster rank. */
    private static Duration spreadWait(int place, int rank, LeaseConfig config) {
        Duration byRank = stagger(rank, config).plus(config.challengeStagger());
        Duration byPlace = stagger(place, config);
        return byPlace.compareTo(byRank) <= 0 ? byPlace : byRank;
    }

    /** The standbys in roster order: every registered member but the one the lease names (unless that is {@code me}). */
    private static List<MemberId> standbys(RoleState state, MemberId me) {
        MemberId holder =
                state.lease().map(LeaseState::member).filter(h -> !h.equals(me)).orElse(null);
        return state.roster().stream()
                .map(RosterEntry::member)
                .filter(m -> !m.equals(holder))
                .toList();
    }

    /**
     * The standbys below their share first, then those at or above it, each group ordered
     * by a hash of the role and the member: every reader with the same shares computes the
     * same order, and the roles of one crashed member fall to different standbys.
     */
    static List<MemberId> spreadOrder(RoleState state, MemberId me, Shares shares) {
        List<MemberId> order = new ArrayList<>(standbys(state, me));
        String role = state.role().name();
        order.sort(Comparator.<MemberId>comparingInt(m -> shares.full(m) ? 1 : 0)
                .thenComparingInt(m ->
                        Utils.toPositive(Utils.murmur2((role + "\n" + m.value()).getBytes(StandardCharsets.UTF_8))))
                .thenComparing(MemberId::value));
        return order;
    }

    private static Decision evaluateHolder(RoleState state, MemberId me, LeaseConfig config, Instant now) {
        if (state.lease().isEmpty()) {
            // Holding with no lease visible: write one now.
            return new Decision.Renew(now);
        }
        LeaseState lease = state.lease().get();
        if (!lease.member().equals(me)) {
            return new Decision.StepDown(lease.member());
        }
        // The lease was written one duration before its deadline.
        Instant renewAt = renewAt(lease.deadlineInstant().minus(config.duration()), config);
        return now.isBefore(renewAt) ? new Decision.Hold(renewAt) : new Decision.Renew(renewAt);
    }

    /**
     * When a holder renews: one renew interval after it wrote its newest lease. The one
     * place this rule lives; the holder's own schedule and the rules' decision use it.
     */
    public static Instant renewAt(Instant leaseWrittenAt, LeaseConfig config) {
        return leaseWrittenAt.plus(config.renewInterval());
    }

    /**
     * The wait of rank {@code rank} after its anchor: {@code rank * challengeStagger}, but
     * never more than one lease duration. A roster that grows without bound (member ids
     * that change on every restart, or registrations appended by anyone with Write on the
     * topic) would otherwise hold the first live standby off for ever; the ranks past the
     * cap challenge together, which costs epochs, never safety.
     */
    public static Duration stagger(int rank, LeaseConfig config) {
        Duration wait = config.challengeStagger().multipliedBy(rank);
        return wait.compareTo(config.duration()) > 0 ? config.duration() : wait;
    }

    /**
     * When rank {@code rank} challenges after a sign of a challenge in flight first seen
     * at {@code seenAt} (an epoch at the coordinator that no visible lease explains): as
     * after a lease first seen then, one lease duration and the rank's stagger later.
     */
    public static Instant challengeAfter(Instant seenAt, int rank, LeaseConfig config) {
        return seenAt.plus(config.duration()).plus(stagger(rank, config));
    }

    private static Instant anchor(RoleState state, MemberId me) {
        if (state.lease().isPresent()) {
            return state.lease().get().deadlineInstant();
        }
        long registeredAt = state.entryOf(me).orElseThrow().registeredAt();
        long anchor = Math.max(registeredAt, state.leaseReleasedAt().orElse(Long.MIN_VALUE));
        return Instant.ofEpochMilli(anchor);
    }
}
