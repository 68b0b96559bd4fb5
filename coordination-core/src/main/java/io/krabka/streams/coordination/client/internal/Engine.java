package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.client.RoleShare;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link io.krabka.streams.coordination.client.CoordinationClient} is made of: the
 * transport, the lease timings and runtime, and per role the fold, the registration,
 * the balancer's view and the grant times, with the rule for when it forgets a role.
 * The public client delegates every call here; contenders and leaderships get it at
 * construction.
 *
 * <p>Size: every per-role map of a client and the one rule that forgets them together.
 */
public final class Engine implements AutoCloseable, TermHost, RoleReads, RoleMembership {

    /** The logger of the client's lines: operators filter by this name. */
    public static final String LOGGER = "io.krabka.streams.coordination.client.CoordinationClient";

    private static final Logger log = LoggerFactory.getLogger(LOGGER);

    private final CoordinationTransport transport;
    private final LeaseConfig config;
    private final InstantSource clock;
    private final CoordinationRuntime runtime;
    private final SendBatching sendBatching;
    private volatile CoordinationInstrumentation instrumentation = CoordinationInstrumentation.NONE;
    private final RoleFolds folds;
    private final Registrations registrations;
    private final ElectionPass election;
    private final BlockingAcquire blockingAcquire;
    private final RoleReports reports;
    private final HeldLeaderships held = new HeldLeaderships();
    private final Balancer balancer;
    private final AtomicLong suspicious = new AtomicLong();
    // The granted_at of this client's last grant of each role: readers tell leaderships apart by (member, granted_at).
    private final Map<Role, Long> lastGrantedAt = new ConcurrentHashMap<>();
    // The latest granted_at of the roles forgotten since: a role granted again after it was
    // forgotten still gets a later one, though the clock stood still or stepped back.
    private final AtomicLong forgottenGrantedAt = new AtomicLong(Long.MIN_VALUE);
    // How many of this client's running contenders and calls use each role: what the client
    // keeps of a role goes when the last one ends and nothing holds or is registered for it.
    private final Map<Role, Integer> users = new ConcurrentHashMap<>();
    // The running contender of each role: one client serves one member per role, and a
    // second contender of it could only fail its every pass against the first one's grant.
    private final Map<Role, RoleContender> contenders = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** The client's parts; the caller closes {@code transport} and {@code runtime} after it. */
    public Engine(
            CoordinationTransport transport,
            LeaseConfig config,
            CoordinationRuntime runtime,
            SendBatching sendBatching) {
        this.transport = Objects.requireNonNull(transport, "transport");
        this.config = Objects.requireNonNull(config, "config");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.clock = runtime.clock();
        this.sendBatching = Objects.requireNonNull(sendBatching, "sendBatching");
        this.folds = new RoleFolds(transport);
        this.balancer = new Balancer(config, runtime, transport, folds);
        this.registrations = new Registrations(transport, clock);
        this.election =
                new ElectionPass(this, balancer, clock, this::suspicious, transport, folds, registrations, held);
        this.blockingAcquire = new BlockingAcquire(runtime, (role, me) -> attempt(role, me, true), folds);
        this.reports = new RoleReports(transport, folds, users::containsKey);
    }

    /** Wraps grants, renewals and guarded writes of this client's leaderships from now on (tracing, for one); set it before contending. */
    public void instrument(CoordinationInstrumentation instrumentation) {
        this.instrumentation = Objects.requireNonNull(instrumentation, "instrumentation");
    }

    @Override
    public CoordinationInstrumentation instrumentation() {
        return instrumentation;
    }

    /** As {@link CoordinationClient#balance}. */
    public void balance(Balance balance) {
        balancer.balance(Objects.requireNonNull(balance, "balance"));
    }

    /** How the roles {@code member} contends for through this client are shared out, as its own reads show them. */
    public RoleShare share(MemberId member) {
        return balancer.share(member);
    }

    public Balancer balancer() {
        return balancer;
    }

    /** How {@link Leadership#send} groups sends into transactions. */
    @Override
    public SendBatching sendBatching() {
        return sendBatching;
    }

    /** The lease timings. */
    @Override
    public LeaseConfig config() {
        return config;
    }

    /** The wall clock leases are written in. */
    public InstantSource clock() {
        return clock;
    }

    /** The time and threads this client's contenders, leaderships and pipelines run on. */
    @Override
    public CoordinationRuntime runtime() {
        return runtime;
    }

    /** As {@link CoordinationClient#suspiciousRecords}. */
    public long suspiciousRecords() {
        return suspicious.get();
    }

    /** How many malformed records this client skipped so far. */
    public long malformedRecords() {
        return folds.malformedRecords();
    }

    /** As {@link CoordinationClient#acquire}. */
    public LeadershipTerm acquire(Role role, MemberId me, Duration timeout) throws InterruptedException {
        using(role);
        try {
            return blockingAcquire.acquire(role, me, timeout);
        } finally {
            doneWith(role, false);
        }
    }

    /** As {@link CoordinationClient#tryAcquire}. */
    public Optional<LeadershipTerm> tryAcquire(Role role, MemberId me) {
        using(role);
        try {
            return Optional.ofNullable(attempt(role, me, true).leadership);
        } finally {
            doneWith(role, false);
        }
    }

    /**
     * One pass's outcome: the leadership won, or the decision, when to read again before the
     * turn (see {@link ContenderState.Standby}; null: not to come) and the lease decided on.
     */
    public record Attempt(
            @Nullable LeadershipTerm leadership,
            Decision decision,
            @Nullable Instant readAgainAt,
            @Nullable LeaseState lease) {}

    /** What a standby's pass asks of the client: one election pass. */
    @FunctionalInterface
    public interface Attempts {

        /** One election pass; {@code confirm}: see {@link ElectionPass#attempt}. */
        Attempt attempt(Role role, MemberId me, boolean confirm);
    }

    /** One election pass; {@code confirm}: see {@link ElectionPass#attempt}. */
    public Attempt attempt(Role role, MemberId me, boolean confirm) {
        requireOpen();
        return election.attempt(role, me, confirm);
    }

    /**
     * A standing misconfiguration of {@code role}: lease settings that disagree with the
     * holder's, members of the role on another coordination topic, then a topic altered to
     * break the guarantees ({@link CoordinationTransport#topicProblem}).
     */
    public Optional<CoordinationConfigurationException> configurationProblem(Role role) {
        return election.leaseDisagreement(role)
                .or(() -> election.foreignWriter(role))
                .or(() -> transport.topicProblem());
    }

    @Override
    public void suspicious(Role role, String what) {
        long count = suspicious.incrementAndGet();
        log.warn("Suspicious record for role {} ({} so far): {}", role, count, what);
    }

    @Override
    public @Nullable AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
        return transport.watches() ? transport.watch(role, onNews) : null;
    }

    /** As {@link CoordinationClient#leave}: refused while this client holds the role. */
    public boolean leaveUnlessHolding(Role role, MemberId me) {
        if (held.holdsActive(role)) {
            // Standbys read the registration's tombstone as the lease's end: one would take the
            // role at once while this member's leadership still looks active to it.
            throw new IllegalStateException(me + " holds role " + role + " through this client: release the"
                    + " leadership first (Leadership.close() or Contender.release()), which also leaves the roster");
        }
        return leave(role, me);
    }

    /** A contender's leave, after its release: a release racing it may not have begun yet, and it leaves too. */
    @Override
    public boolean leave(Role role, MemberId me) {
        requireOpen();
        transport.discardPrepared(role);
        boolean left = registrations.leave(role, me);
        forgetIfUnused(role);
        return left;
    }

    @Override
    public void discardPrepared(Role role) {
        transport.discardPrepared(role);
    }

    @Override
    public void renewedInNews(Role role, RoleNews news, long boundMillis) {
        folds.renewedInNews(role, news, boundMillis);
    }

    /** As {@link CoordinationClient#describe}. */
    public LeadershipStatus describe(Role role) {
        requireOpen();
        return reports.describe(role);
    }

    /** How many entries each per-role map of this client holds, by name; describe folds and the balancer's apart. */
    public Map<String, Integer> roleEntries() {
        Map<String, Integer> sizes = new TreeMap<>();
        folds.sizes(sizes);
        election.sizes(sizes);
        sizes.put("registrations", registrations.size());
        sizes.put("held", held.size());
        sizes.put("lastGrantedAt", lastGrantedAt.size());
        sizes.put("users", users.size());
        sizes.put("balancer.viewed", balancer.viewedRoles());
        return sizes;
    }

    /** How many roles' describe folds this client keeps (bounded: at most 4 096). */
    public int describedFolds() {
        return folds.describedFolds();
    }

    /**
     * Reports many roles at once, each as {@link #describe(Role)} would: the transaction
     * coordinator is asked about all of them in one call
     * ({@link CoordinationTransport#describeEpochs}: one DescribeTransactions on Kafka),
     * then every partition of the coordination topic that holds some of them is read once,
     * however many of them it holds, all in one {@link CoordinationTransport#readAll}.
     * It keeps folds of its own, so it never waits for a contender of this client: the
     * first describe of a role reads its partition from the start (as a contender's first
     * pass does), later ones only what is new. Joins no group and takes no epoch.
     *
     * @return the status of every distinct role of {@code roles}, in their order
     * @throws CoordinationException when the coordinator or a partition did not answer;
     *     no role is reported then
     */
    public Map<Role, LeadershipStatus> describe(Collection<Role> roles) {
        requireOpen();
        return reports.describe(roles);
    }

    /** As {@link CoordinationClient#observe}. */
    public LeadershipStatus observe(Role role, Duration maxWait) {
        requireOpen();
        return reports.observe(role, maxWait);
    }

    /** The role's folded state, waiting up to {@code maxWait} for news: what a contender decides on. */
    @Override
    public RoleState awaitRoleState(Role role, Duration maxWait) {
        requireOpen();
        return folds.refresh(role, maxWait);
    }

    /** Whether a read of {@code role} now could find nothing its watchers were not told of: see {@link RoleFolds#quietSinceRead}. */
    @Override
    public boolean quietSinceRead(Role role) {
        return folds.quietSinceRead(role);
    }

    /** A released leadership: its member left the roster, so its registration goes too. */
    @Override
    public void released(LeadershipTerm leadership) {
        held.ended(leadership);
        registrations.forget(leadership.role());
        forgetIfUnused(leadership.role());
    }

    @Override
    public void ended(LeadershipTerm leadership) {
        held.ended(leadership);
    }

    @Override
    public Instant now() {
        return clock.instant();
    }

    /** A new grant's {@code granted_at}: now, or past this client's last grant of {@code role} on a clock that did not move. */
    @Override
    public long grantTime(Role role) {
        long now = Math.max(clock.millis(), forgottenGrantedAt.get() + 1);
        return lastGrantedAt.merge(role, now, (last, at) -> Math.max(at, last + 1));
    }

    /**
     * {@code contender} starts, the only running contender of its role on this client until
     * {@link #stoppedContending}.
     *
     * @throws IllegalStateException when another contender of the role runs on this client
     */
    void startContending(Role role, RoleContender contender) {
        // One that was asked to stop gives way: a restart starts the next before the release ran.
        RoleContender running = contenders.merge(role, contender, (old, next) -> old.stopping() ? next : old);
        if (running != contender) {
            throw new IllegalStateException("a contender for role " + role + " already runs on this client (member "
                    + running.member() + "): one client contends for a role as one member; stop that contender first,"
                    + " or contend through a client of its own");
        }
    }

    /** {@code contender} stopped (or never started): another may contend for its role. */
    void stoppedContending(Role role, RoleContender contender) {
        contenders.remove(role, contender);
    }

    /** A contender of {@code role} starts, or a call on it begins: what the client keeps of the role stays until {@link #doneWith}. */
    public void using(Role role) {
        users.merge(role, 1, Integer::sum);
    }

    /**
     * A use of {@code role} ended. After the last, with no leadership or registration of the
     * role left, the client forgets the role. {@code stopped}: a contender's stop, which also
     * forgets a registration its leave could not remove (the next winner prunes it as silent).
     */
    public void doneWith(Role role, boolean stopped) {
        boolean[] forgot = {false};
        users.compute(role, (r, count) -> {
            if (count != null && count > 1) {
                return count - 1;
            }
            if (stopped) {
                registrations.forget(role);
            }
            forgot[0] = forgetUnlessHeld(role);
            return null;
        });
        if (forgot[0] && stopped) {
            // A producer built for a challenge that will not come (a leave that was skipped did not close it).
            try {
                transport.discardPrepared(role);
            } catch (RuntimeException e) {
                log.debug("Could not close the producer prepared for role {}: {}", role, e.toString());
            }
        }
    }

    /** After a release or a leave: forgets the role unless some contender or call of this client still uses it. */
    private void forgetIfUnused(Role role) {
        users.compute(role, (r, count) -> {
            if (count == null) {
                forgetUnlessHeld(role);
            }
            return count;
        });
    }

    /** Forgets the role unless a leadership or a registration of it is left; under the role's lock in {@link #users}. */
    private boolean forgetUnlessHeld(Role role) {
        if (held.holds(role) || registrations.has(role)) {
            return false;
        }
        folds.forget(role);
        election.forget(role);
        Long granted = lastGrantedAt.remove(role);
        if (granted != null) {
            forgottenGrantedAt.accumulateAndGet(granted, Math::max);
        }
        return true;
    }

    @Override
    public String location() {
        return transport.location();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the coordination client is closed");
        }
    }

    /** Releases every role this client still holds. The transport stays open: its owner closes it. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        held.releaseAll();
        closed = true;
    }
}
