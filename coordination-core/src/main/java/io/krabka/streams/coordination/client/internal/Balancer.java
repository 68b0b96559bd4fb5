package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.RoleShare;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RosterEntry;
import io.krabka.streams.coordination.succession.Shares;
import io.krabka.streams.coordination.succession.Succession;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Balance#SPREAD} side of a client: counts how the roles its contenders read
 * are shared out ({@link Shares}, from the folds they already keep), and once the set of
 * live members has been steady for {@link #settle()}, hands one role at a time to a live
 * standby of it that holds two or more fewer of the role's group: the roles that each
 * live contender of this role contends for too (with equal role sets, all of them). The
 * two-role gap is the hysteresis: moves stop once, in every group, each member is within
 * one of the others, and one member arriving or leaving costs about as many moves as the
 * roles that must change hands.
 *
 * <p>Why the group and not this member's roles: members on different role sets count
 * different roles, and one that sees fewer (a on four roles, b on those and four more)
 * hands b roles that b, counting its own, hands back, for ever. Every contender of a role
 * reads all of the role's group, so giver and taker count it alike, and moves end. For
 * each set T of members take the sum, over members, of the square of what each holds of
 * the roles all of T contend for, and order these sums by the size of T, largest first.
 * A move of role r over a gap g &ge; 2 lowers the sum for r's contenders by 2(g - 1) and
 * changes only the sums for subsets of them, later in the order: the sequence falls
 * lexicographically with every move, so there are finitely many moves, and the taker,
 * now at most g - 2 above the giver in that group, never moves r back.
 *
 * <p>Size: one class, since the shares, the groups, the settle and the move rule all read
 * one view of the rosters and leases; split, each part would need the whole view again.
 */
final class Balancer {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    /** How often a member looks for a move. */
    static final Duration TICK = Duration.ofSeconds(1);
    /** How soon it looks again after a move: whether it landed, and the next one. */
    static final Duration AFTER_MOVE = Duration.ofMillis(100);

    private final LeaseConfig config;
    private final CoordinationTransport transport;
    private final RoleFolds folds;
    private final CoordinationRuntime runtime;
    private final Map<Role, RoleContender> contenders = new ConcurrentHashMap<>();
    // Members a handover found silent, with the wall-clock instant: out until they register after it.
    private final Map<MemberId, Long> silentSince = new ConcurrentHashMap<>();
    // Roles given to each member while draining, so a stop spreads them rather than giving all to one.
    private final Map<MemberId, Integer> drained = new ConcurrentHashMap<>();
    private final AtomicLong movesOut = new AtomicLong();
    // What the balancer's own reads of the roles found: a holder's fold reads nothing
    // between its renewals, so it would not see a standby arrive.
    private final Map<Role, RoleState> viewed = new ConcurrentHashMap<>();
    private volatile Balance balance = Balance.NONE;
    // Guarded by this.
    private Set<MemberId> lastLive = Set.of();
    private long steadySinceNanos;
    private @Nullable Move inFlight;
    private CoordinationRuntime.@Nullable Scheduled tick;
    private Duration nextTick = TICK;
    private volatile long lastWarnNanos;
    // Roles this client challenges for under the cold-start rule now, with the member. Guarded by this.
    private final Map<Role, MemberId> placing = new HashMap<>();

    private record Move(RoleContender contender, MemberId to, long startedNanos) {}

    Balancer(LeaseConfig config, CoordinationRuntime runtime, CoordinationTransport transport, RoleFolds folds) {
        this.config = config;
        this.transport = transport;
        this.folds = folds;
        this.runtime = runtime;
    }

    void balance(Balance balance) {
        this.balance = balance;
        schedule();
    }

    Balance balance() {
        return balance;
    }

    /** How long the live members must stay the same before a member moves a role: two renew intervals. */
    Duration settle() {
        return config.renewInterval().multipliedBy(2);
    }

    RoleShare share(MemberId member) {
        Shares shares = shares();
        return new RoleShare(
                balance,
                shares.roles(),
                heldByOwn(member).orElse(shares.held(member)),
                shares.fairShare(),
                shares.live().size(),
                movesOut.get());
    }

    /**
     * How many roles {@code member} holds, by what its own contenders on this client know;
     * empty when none of them is {@code member}'s. What a member reports of itself: its fold
     * counts its own lease that ran out as held until the lease is abandoned, seconds after
     * the leadership ended (the moves go on deciding by the fold, which is what the other
     * members see too).
     */
    private Optional<Integer> heldByOwn(MemberId member) {
        int held = 0;
        boolean own = false;
        for (RoleContender contender : contenders.values()) {
            if (contender.member().equals(member)) {
                own = true;
                if (contender.leadership().isPresent()) {
                    held++;
                }
            }
        }
        return own ? Optional.of(held) : Optional.empty();
    }

    /** Removes {@code member}'s registration for {@code role}: a handover puts its target first this way. */
    void evict(Role role, MemberId member) {
        transport.deregister(role, member);
    }

    void enlist(RoleContender contender) {
        contenders.put(contender.role(), contender);
        drained.clear();
        schedule();
    }

    /** How many roles' states the last reads of this balancer keep. */
    int viewedRoles() {
        return viewed.size();
    }

    void delist(RoleContender contender) {
        if (contenders.remove(contender.role(), contender)) {
            // A closed role leaves nothing behind (issue 36, finding 6).
            viewed.remove(contender.role());
        }
    }

    /**
     * A handover found {@code member} silent, or this member took over a lease of its that
     * had run out: not counted live until it registers again. Remembered, because once its
     * roles were taken over no lease names it any more, and its registrations alone would
     * count it alive again (a move to it would then wait out a probe).
     */
    void silent(MemberId member) {
        silentSince.put(member, runtime.clock().millis());
    }

    /**
     * Decides a role under the cold-start rule ({@link Succession#placesOnce}) with
     * {@code me}'s own roles counted exactly: those it holds and those it challenges for
     * now. A challenge is counted from this decision until {@link #placed}, so two passes
     * deciding at once never both take a role past the share.
     */
    synchronized Decision placeOnce(
            Role role, MemberId me, Shares shares, IntSupplier holding, Function<Shares, Decision> decide) {
        long challenging = placing.values().stream().filter(me::equals).count();
        Decision decision = decide.apply(shares.withHeld(me, holding.getAsInt() + (int) challenging));
        if (decision instanceof Decision.Challenge) {
            placing.put(role, me);
        }
        return decision;
    }

    /** The pass that decided {@code role} under the cold-start rule is over: granted or not, no longer in flight. */
    synchronized void placed(Role role) {
        placing.remove(role);
    }

    /** The shares the spread order decides on, or null under {@link Balance#NONE}. */
    @Nullable
    Shares spreadShares() {
        return balance == Balance.SPREAD ? shares() : null;
    }

    /** How the roles of this client's contenders are shared out, as its folds show them now. */
    Shares shares() {
        return shares(states());
    }

    private Shares shares(Map<Role, RoleState> states) {
        long now = runtime.clock().millis();
        Map<MemberId, Integer> held = new HashMap<>();
        Set<MemberId> running = new HashSet<>();
        Set<MemberId> ranOut = new HashSet<>();
        Map<MemberId, Long> registeredAt = new HashMap<>();
        int roles = 0;
        for (Map.Entry<Role, RoleState> entry : states.entrySet()) {
            if (!contenders.isEmpty() && !contenders.containsKey(entry.getKey())) {
                continue;
            }
            roles++;
            RoleState state = entry.getValue();
            RoleContender own = contenders.get(entry.getKey());
            if (own != null && own.leadership().isPresent()) {
                // This member's own role: it knows it holds it, while its fold, which a holder
                // does not read between renewals, may still show an old lease that ran out.
                held.merge(own.member(), 1, Integer::sum);
                running.add(own.member());
            } else if (state.lease().isPresent()) {
                LeaseState lease = state.lease().get();
                boolean abandoned = Succession.abandoned(lease, config, Instant.ofEpochMilli(now));
                if (!abandoned) {
                    held.merge(lease.member(), 1, Integer::sum);
                }
                if (lease.deadline() >= now) {
                    running.add(lease.member());
                } else if (!abandoned && !state.registeredSinceLease(lease.member())) {
                    // Ran out within a crash's turns: its holder crashed, unless it registered again
                    // since. A lease no one could take over (an outage) says nothing of its holder,
                    // and holds nothing for it.
                    ranOut.add(lease.member());
                }
            }
            for (RosterEntry registered : state.roster()) {
                registeredAt.merge(registered.member(), registered.registeredAt(), Math::max);
            }
        }
        Set<MemberId> live = new HashSet<>(running);
        contenders.values().forEach(contender -> live.add(contender.member()));
        for (Map.Entry<MemberId, Long> registered : registeredAt.entrySet()) {
            MemberId member = registered.getKey();
            // A member whose leases all ran out crashed; one a handover found silent, or whose
            // expired lease this member took over, is out until it registers again.
            boolean crashed = ranOut.contains(member) && !running.contains(member);
            Long silent = silentSince.get(member);
            if (silent != null && registered.getValue() > silent) {
                silentSince.remove(member, silent);
                silent = null;
            }
            if (!crashed && silent == null) {
                live.add(member);
            }
        }
        return new Shares(roles, held, live);
    }

    /**
     * The live standby of {@code role} to drain it to when {@code me} stops: the one with
     * the fewest roles, counting those this stop already gave it; null for none.
     */
    @Nullable
    MemberId drainTarget(Role role, MemberId me) {
        if (balance != Balance.SPREAD) {
            return null;
        }
        RoleState state = states().get(role);
        if (state == null) {
            return null;
        }
        Shares shares = shares();
        MemberId target = state.roster().stream()
                .map(RosterEntry::member)
                .filter(m -> !m.equals(me) && shares.live().contains(m))
                .min(Comparator.<MemberId>comparingInt(m -> shares.held(m) + drained.getOrDefault(m, 0))
                        .thenComparing(MemberId::value))
                .orElse(null);
        if (target != null) {
            drained.merge(target, 1, Integer::sum);
        }
        return target;
    }

    /**
     * The newest state of each role: the contenders' folds, or the balancer's own read where
     * that is newer. A fold follows renewals in the news without reading (its offset stays
     * behind), so a read that is newer by offset still takes the later deadline of the same
     * leadership from the fold: a read that failed since must not make a live holder's
     * lease look run out.
     */
    private Map<Role, RoleState> states() {
        Map<Role, RoleState> states = new HashMap<>(folds.latestStates());
        viewed.forEach((role, state) -> states.merge(role, state, Balancer::newer));
        return states;
    }

    private static RoleState newer(RoleState fold, RoleState read) {
        RoleState newer = read.nextOffset() > fold.nextOffset() ? read : fold;
        RoleState other = newer == read ? fold : read;
        Optional<LeaseState> lease = newer.lease();
        Optional<LeaseState> later = other.lease()
                .filter(l -> lease.isPresent()
                        && l.member().equals(lease.get().member())
                        && l.grantedAt() == lease.get().grantedAt()
                        && l.deadline() > lease.get().deadline());
        return later.isEmpty()
                ? newer
                : new RoleState(
                        newer.role(),
                        newer.roster(),
                        Optional.of(lease.get().withDeadline(later.get().deadline())),
                        newer.leaseReleasedAt(),
                        newer.nextOffset());
    }

    /**
     * Reads every role of this client's contenders, all partitions in one read, when this
     * member holds two or more (only then can it have a role to give): what is new since
     * the last such read. Otherwise it forgets what it read: the contenders' folds follow
     * renewals in the news without reading, so their offsets stay behind, and a read kept
     * from when this member last held two would win over them with leases long run out.
     */
    private void readRoles() {
        long holding = contenders.values().stream()
                .filter(c -> c.leadership().isPresent())
                .count();
        if (holding >= 2) {
            viewed.putAll(folds.readMany(contenders.keySet().stream()
                    .sorted(Comparator.comparing(Role::name))
                    .toList()));
            // A role delisted while this read ran must not come back.
            viewed.keySet().retainAll(contenders.keySet());
        } else {
            viewed.clear();
        }
    }

    private void schedule() {
        synchronized (this) {
            if (tick != null || balance != Balance.SPREAD || contenders.isEmpty()) {
                return;
            }
            tick = runtime.schedule(() -> runtime.workers().execute(this::tick), nextTick);
        }
    }

    /** One look for a move; then the next, while any contender of this client runs. */
    private void tick() {
        Duration next = TICK;
        try {
            if (balance == Balance.SPREAD) {
                readRoles();
            }
            Move move = nextMove();
            if (move != null || inFlight() != null) {
                next = AFTER_MOVE;
            }
            if (move != null) {
                HandoverResult result = move.contender().handOver(move.to());
                if (result == HandoverResult.HANDED_OVER) {
                    movesOut.incrementAndGet();
                } else {
                    synchronized (this) {
                        inFlight = null;
                    }
                }
            }
        } catch (RuntimeException e) {
            // The contenders report an unreachable cluster; this says it at most once a minute.
            long now = runtime.nanoTime();
            if (lastWarnNanos == 0 || now - lastWarnNanos > RoleContender.WARN_INTERVAL.toNanos()) {
                lastWarnNanos = now;
                log.warn(
                        "Balancing the roles of this member failed; it looks again every {}: {}",
                        DurationText.of(TICK),
                        e.toString());
            } else {
                log.debug("Balancing the roles of this member failed: {}", e.toString());
            }
            synchronized (this) {
                inFlight = null;
            }
        } finally {
            synchronized (this) {
                tick = null;
                nextTick = next;
            }
            schedule();
        }
    }

    private synchronized @Nullable Move inFlight() {
        return inFlight;
    }

    /** The move to make now, or null: none in flight, the live members steady, and a gap of two in the role's group. */
    private @Nullable Move nextMove() {
        if (balance != Balance.SPREAD) {
            return null;
        }
        // One snapshot of the roles for the whole decision: the shares, who is alive, the rosters.
        Map<Role, RoleState> states = states();
        Shares shares = shares(states);
        long nowNanos = runtime.nanoTime();
        synchronized (this) {
            if (!shares.live().equals(lastLive)) {
                lastLive = shares.live();
                steadySinceNanos = nowNanos;
            }
            if (inFlight != null && !landed(inFlight, states, nowNanos)) {
                return null;
            }
            inFlight = null;
            if (nowNanos - steadySinceNanos < settle().toNanos()) {
                return null;
            }
            // The roles held longest first: a role just handed here (by an operator's handOver,
            // say) is the last to move on when this member is above its share.
            List<RoleContender> holding = contenders.values().stream()
                    .filter(c -> c.isRunning() && c.leadership().isPresent())
                    .sorted(Comparator.<RoleContender, Instant>comparing(c ->
                                    c.leadership().map(Leadership::grantedAt).orElse(Instant.MAX))
                            .thenComparing(c -> c.role().name()))
                    .toList();
            // Members that hold a lease first: the likelier to answer the probe every move begins with.
            Set<MemberId> holdersNow = holdersNow(states);
            Map<Role, Set<MemberId>> contending = contending(states, shares);
            Map<Set<MemberId>, Map<MemberId, Integer>> groups = new HashMap<>();
            Move best = null;
            int widest = 1;
            boolean bestAlive = false;
            for (RoleContender contender : holding) {
                RoleState state = states.get(contender.role());
                Set<MemberId> rivals = contending.get(contender.role());
                if (state == null || rivals == null) {
                    continue;
                }
                Map<MemberId, Integer> group =
                        groups.computeIfAbsent(rivals, members -> heldOfGroup(members, contending, states));
                int mine = group.getOrDefault(contender.member(), 0);
                for (RosterEntry standby : state.roster()) {
                    MemberId to = standby.member();
                    int gap = mine - group.getOrDefault(to, 0);
                    boolean alive = holdersNow.contains(to);
                    boolean better = alive != bestAlive ? alive : gap > widest;
                    if (!to.equals(contender.member())
                            && shares.live().contains(to)
                            && gap >= 2
                            && (best == null || better)) {
                        widest = gap;
                        bestAlive = alive;
                        best = new Move(contender, to, nowNanos);
                    }
                }
            }
            inFlight = best;
            return best;
        }
    }

    /** Per role counted in the shares, its live contenders: its live registered members and its holder. */
    private Map<Role, Set<MemberId>> contending(Map<Role, RoleState> states, Shares shares) {
        Map<Role, Set<MemberId>> contending = new HashMap<>();
        states.forEach((role, state) -> {
            if (!contenders.isEmpty() && !contenders.containsKey(role)) {
                return;
            }
            Set<MemberId> members = new HashSet<>();
            state.roster().stream()
                    .map(RosterEntry::member)
                    .filter(shares.live()::contains)
                    .forEach(members::add);
            state.lease().ifPresent(lease -> members.add(lease.member()));
            contending.put(role, Set.copyOf(members));
        });
        return contending;
    }

    /** How many roles each member holds of the group of {@code members}: the roles all of them contend for. */
    private static Map<MemberId, Integer> heldOfGroup(
            Set<MemberId> members, Map<Role, Set<MemberId>> contending, Map<Role, RoleState> states) {
        Map<MemberId, Integer> held = new HashMap<>();
        contending.forEach((role, of) -> {
            if (of.containsAll(members)) {
                Objects.requireNonNull(states.get(role))
                        .lease()
                        .ifPresent(lease -> held.merge(lease.member(), 1, Integer::sum));
            }
        });
        return held;
    }

    /** The members whose lease has not run out: alive without a probe. */
    private Set<MemberId> holdersNow(Map<Role, RoleState> states) {
        long now = runtime.clock().millis();
        Set<MemberId> holders = new HashSet<>();
        for (RoleState state : states.values()) {
            state.lease().filter(lease -> lease.deadline() >= now).ifPresent(lease -> holders.add(lease.member()));
        }
        return holders;
    }

    /** Whether the move's role shows another holder now, or has had a lease to get one. */
    private boolean landed(Move move, Map<Role, RoleState> states, long nowNanos) {
        RoleState state = states.get(move.contender().role());
        boolean taken = state != null
                && state.lease()
                        .filter(l -> !l.member().equals(move.contender().member()))
                        .isPresent();
        return taken || nowNanos - move.startedNanos() > config.duration().toNanos();
    }
}
