package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.LeaseSnapshot;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides where a {@link LeaderOnly} request goes, from the engine's public face only:
 * this member's own leadership ({@link LeadershipLoop#leadership}), the role's lease and
 * roster ({@link CoordinationClient#observe}, read at most every view-max-age), the
 * holder's advertised address ({@link MemberAddresses}) and the allowed targets.
 *
 * <p>{@link #local} routes nothing: a request is handled where this member holds the role
 * and refused ({@link Route.NoHolder}) elsewhere, without reading the cluster or any
 * address (routing off, or the test kit).
 */
public final class HolderRoutes {

    private static final Duration MIN_RETRY = Duration.ofSeconds(1);

    private final LeadershipLoop loop;
    private final CoordinationClient client;
    private final MemberAddresses addresses;
    private final TargetPolicy targets;
    private final long viewMaxAgeNanos;
    private final Duration grantWait;
    private final Map<Role, Viewed> views = new ConcurrentHashMap<>();
    /** Null when this member routes; else why it does not, for the refusals' detail. */
    private final String notRouting;

    private record Viewed(LeadershipStatus status, long readAt) {}

    /**
     * @param viewMaxAge how old the view of a role may get before a request reads it again
     * @param grantWait how long a request waits for a grant when the role has no live lease
     *     (a release or handover under way) before it is answered 503
     */
    public HolderRoutes(
            LeadershipLoop loop,
            CoordinationClient client,
            MemberAddresses addresses,
            TargetPolicy targets,
            Duration viewMaxAge,
            Duration grantWait) {
        this(loop, client, addresses, targets, viewMaxAge, grantWait, null);
    }

    private HolderRoutes(
            LeadershipLoop loop,
            CoordinationClient client,
            MemberAddresses addresses,
            TargetPolicy targets,
            Duration viewMaxAge,
            Duration grantWait,
            String notRouting) {
        this.notRouting = notRouting;
        this.grantWait = grantWait;
        this.loop = loop;
        this.client = client;
        this.addresses = addresses;
        this.targets = targets;
        this.viewMaxAgeNanos = viewMaxAge.toNanos();
    }

    /**
     * Routes that send nothing anywhere: a request is handled where this member holds its
     * role, and answered 503 ({@link Route.NoHolder}) elsewhere, with {@code why} (why this
     * member does not route) in the detail. Reads neither the cluster nor any address.
     */
    public static HolderRoutes local(LeadershipLoop loop, String why) {
        return new HolderRoutes(loop, null, null, null, Duration.ZERO, Duration.ZERO, why);
    }

    /** Whether this member sends requests to other members ({@link #local} does not). */
    public boolean routes() {
        return notRouting == null;
    }

    /** This member. */
    public MemberId member() {
        return loop.member();
    }

    /** This member's live leadership of {@code role}, if it holds it. */
    public Optional<Leadership> held(Role role) {
        return loop.leadership(role).filter(Leadership::isActive);
    }

    /** Where a request of {@code role} goes now. */
    public Route route(Role role) {
        Optional<Leadership> mine = held(role);
        if (mine.isPresent()) {
            return new Route.Here(mine.get());
        }
        if (notRouting != null) {
            return new Route.NoHolder(
                    MIN_RETRY,
                    "member " + loop.member() + " does not hold role " + role + " and does not send the request to "
                            + "the holder: " + notRouting);
        }
        LeadershipStatus status = view(role);
        if (!live(status)) {
            // A release or handover: the next standby takes over within tens of milliseconds.
            status = awaitGrant(role, status);
            mine = held(role);
            if (mine.isPresent()) {
                return new Route.Here(mine.get());
            }
        }
        Optional<LeaseSnapshot> lease = status.lease();
        Instant now = client.clock().instant();
        Duration stagger = client.config().challengeStagger();
        if (lease.isEmpty()) {
            return new Route.NoHolder(MIN_RETRY, "no member holds role " + role);
        }
        LeaseSnapshot held = lease.get();
        MemberId holder = held.holder();
        long term = held.token().term();
        if (!held.deadline().isAfter(now)) {
            return new Route.NoHolder(
                    atLeastOneSecond(stagger),
                    "the lease of role " + role + " (held by " + holder + ") ran out; a standby takes over");
        }
        Duration untilGrant =
                atLeastOneSecond(Duration.between(now, held.deadline()).plus(stagger));
        if (holder.equals(loop.member())) {
            return new Route.NoHolder(
                    MIN_RETRY,
                    "the lease of role " + role + " names this member, which does not hold it " + "(now or any more)");
        }
        if (status.roster().stream().map(RankedMember::member).noneMatch(holder::equals)) {
            return new Route.Refused(
                    holder, term, "the holder " + holder + " of role " + role + " is not in the role's roster");
        }
        Optional<MemberAddress> address = addresses.lookup(holder, grantWait);
        if (address.isEmpty()) {
            return new Route.NoHolder(
                    untilGrant,
                    "the holder " + holder + " of role " + role + " advertises no address "
                            + "(it routes nothing, or it stopped)");
        }
        URI base;
        try {
            base = address.get().uri();
        } catch (IllegalArgumentException e) {
            return new Route.Refused(
                    holder, term, "the address " + address.get().url() + " of holder " + holder + " is not a URI");
        }
        Optional<String> refusal = targets.refusal(base);
        if (refusal.isPresent()) {
            return new Route.Refused(
                    holder,
                    term,
                    "the address " + address.get().url() + " of holder " + holder + " is not an allowed target: "
                            + refusal.get());
        }
        return new Route.There(holder, term, base);
    }

    private boolean live(LeadershipStatus status) {
        return status.lease()
                .filter(lease -> lease.deadline().isAfter(client.clock().instant()))
                .isPresent();
    }

    /** Reads the role as news is committed, up to {@code grantWait}, until it has a live lease. */
    private LeadershipStatus awaitGrant(Role role, LeadershipStatus status) {
        long deadline = System.nanoTime() + grantWait.toNanos();
        LeadershipStatus seen = status;
        for (long left = grantWait.toNanos();
                left > 0 && !live(seen) && held(role).isEmpty();
                left = deadline - System.nanoTime()) {
            seen = client.observe(role, Duration.ofNanos(left));
            views.put(role, new Viewed(seen, System.nanoTime()));
        }
        return seen;
    }

    /** Forgets the view of {@code role}: the next request reads it again (the holder did not answer as one). */
    public void forget(Role role) {
        views.remove(role);
    }

    private LeadershipStatus view(Role role) {
        long now = System.nanoTime();
        Viewed viewed = views.get(role);
        if (viewed == null || now - viewed.readAt() > viewMaxAgeNanos) {
            viewed = new Viewed(client.observe(role, Duration.ZERO), now);
            views.put(role, viewed);
        }
        return viewed.status();
    }

    private static Duration atLeastOneSecond(Duration wait) {
        return wait.compareTo(MIN_RETRY) < 0 ? MIN_RETRY : wait;
    }
}
