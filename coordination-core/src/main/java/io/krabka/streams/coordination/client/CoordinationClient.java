package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes roles and reports who holds them.
 *
 * <pre>{@code
 * try (CoordinationClient client = new CoordinationClient(transport);
 *      Leadership leadership = client.acquire(role, me, Duration.ofMinutes(1))) {
 *   while (running) {
 *     leadership.write(commandRecord);   // renews the lease in the same transaction
 *   }
 * } catch (FencedException lost) {
 *   controller.stop();
 * }
 * }</pre>
 *
 * <p>The client keeps one incremental fold per role: each election pass reads only
 * what was committed since the last one. Malformed records in the partition are
 * skipped with a warning and counted ({@link #malformedRecords()}); they never stop
 * the member and never change a roster or a lease.
 *
 * <p>One client serves one member per role: the transport holds one transactional
 * producer per role, and a second member of the same role in the same transport
 * would fence the first. Thread-safe.
 */
public final class CoordinationClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CoordinationClient.class);

    /** The longest a waiting {@link #acquire} sleeps in one read before it looks again. */
    static final Duration MAX_WAIT_PER_PASS = Duration.ofSeconds(1);
    /** The shortest wait between passes, so a lost race never becomes a busy loop. */
    static final Duration MIN_WAIT_PER_PASS = Duration.ofMillis(20);

    private final CoordinationTransport transport;
    private final LeaseConfig config;
    private final InstantSource clock;
    private final CoordinationRuntime runtime;
    private final SendBatching sendBatching;
    private volatile CoordinationInstrumentation instrumentation = CoordinationInstrumentation.NONE;
    private final RoleFolds folds;
    private final Registrations registrations;
    private final LeaseBounds leaseBounds;
    private final ChallengeCheck challengeCheck;
    private final ElectionPass election;
    private final Map<Role, Leadership> held = new ConcurrentHashMap<>();
    private final AtomicLong suspicious = new AtomicLong();
    private volatile boolean closed;

    /** A client with the default lease timings on the shared runtime (the system clock and the library's daemon threads). */
    public CoordinationClient(CoordinationTransport transport) {
        this(transport, LeaseConfig.DEFAULTS, CoordinationRuntime.shared());
    }

    /**
     * A client on the shared runtime's threads with {@code clock} as its wall clock.
     *
     * @param transport the cluster operations; the caller closes it after the client
     * @param config the lease timings
     * @param clock the wall clock that lease deadlines are written and compared in
     */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, InstantSource clock) {
        this(transport, config, clock, SendBatching.DEFAULTS);
    }

    /**
     * A client on the shared runtime's threads with {@code clock} as its wall clock.
     *
     * @param transport the cluster operations; the caller closes it after the client
     * @param config the lease timings
     * @param clock the wall clock that lease deadlines are written and compared in
     * @param sendBatching how {@link Leadership#send} groups sends into transactions
     */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, InstantSource clock,
            SendBatching sendBatching) {
        this(transport, config, CoordinationRuntime.shared().withClock(Objects.requireNonNull(clock, "clock")), sendBatching);
    }

    /**
     * A client whose contenders, leaderships and pipelines run on {@code runtime}: its
     * wall clock, ticker, timer and executors. The caller closes the runtime after the client.
     *
     * @param transport the cluster operations; the caller closes it after the client
     * @param config the lease timings
     * @param runtime time and threads
     */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, CoordinationRuntime runtime) {
        this(transport, config, runtime, SendBatching.DEFAULTS);
    }

    /**
     * A client whose contenders, leaderships and pipelines run on {@code runtime}.
     *
     * @param transport the cluster operations; the caller closes it after the client
     * @param config the lease timings
     * @param runtime time and threads; the caller closes it after the client
     * @param sendBatching how {@link Leadership#send} groups sends into transactions
     */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, CoordinationRuntime runtime,
            SendBatching sendBatching) {
        this.transport = Objects.requireNonNull(transport, "transport");
        this.config = Objects.requireNonNull(config, "config");
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.clock = runtime.clock();
        this.sendBatching = Objects.requireNonNull(sendBatching, "sendBatching");
        this.folds = new RoleFolds(transport);
        this.registrations = new Registrations(transport, clock);
        this.leaseBounds = new LeaseBounds(config, clock, transport, this::suspicious);
        this.challengeCheck = new ChallengeCheck(transport, config, clock, folds);
        this.election = new ElectionPass(this, transport, folds, registrations, leaseBounds, challengeCheck, held);
    }

    /**
     * Wraps grants, renewals and guarded writes of this client's leaderships from now on
     * (tracing, for one); set it before contending.
     *
     * @return this client
     */
    public CoordinationClient instrument(CoordinationInstrumentation instrumentation) {
        this.instrumentation = Objects.requireNonNull(instrumentation, "instrumentation");
        return this;
    }

    CoordinationInstrumentation instrumentation() {
        return instrumentation;
    }

    /** How {@link Leadership#send} groups sends into transactions. */
    public SendBatching sendBatching() {
        return sendBatching;
    }

    /** The lease timings. */
    public LeaseConfig config() {
        return config;
    }

    /** The wall clock leases are written in. */
    public InstantSource clock() {
        return clock;
    }

    /** The time and threads this client's contenders, leaderships and pipelines run on. */
    public CoordinationRuntime runtime() {
        return runtime;
    }

    /**
     * How many lease records this client found suspicious so far: a deadline further out
     * than any holder could claim, or a lease naming another member while the transaction
     * coordinator says the holder still holds the epoch. Each is logged once.
     */
    public long suspiciousRecords() {
        return suspicious.get();
    }

    /** How many malformed records this client skipped so far. */
    public long malformedRecords() {
        return folds.malformedRecords();
    }

    /**
     * Registers {@code me} for {@code role} (the first time this client sees the pair),
     * then repeats election passes until {@code me} wins the role or {@code timeout}
     * passes. Between passes it waits on the coordination topic, so a release or a new
     * lease is seen as soon as it is committed; it never spins.
     *
     * @throws CoordinationTimeoutException when the role was not won within {@code timeout}
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public Leadership acquire(Role role, MemberId me, Duration timeout) throws InterruptedException {
        long deadline = runtime.nanoTime() + timeout.toNanos();
        while (true) {
            Attempt attempt = attempt(role, me);
            if (attempt.leadership != null) {
                return attempt.leadership;
            }
            long remaining = deadline - runtime.nanoTime();
            if (remaining <= 0) {
                throw new CoordinationTimeoutException(me + " did not win role " + role + " within " + timeout
                        + "; last decision: " + attempt.decision);
            }
            Duration wait = MAX_WAIT_PER_PASS;
            if (attempt.decision instanceof Decision.Wait pending) {
                wait = min(wait, Duration.between(clock.instant(), pending.challengeAt()));
            }
            wait = max(MIN_WAIT_PER_PASS, min(wait, Duration.ofNanos(remaining)));
            try {
                refresh(role, wait);
            } catch (CoordinationException e) {
                if (Thread.interrupted()) {
                    throw new InterruptedException(me + " was interrupted while waiting for role " + role);
                }
                throw e;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException(me + " was interrupted while waiting for role " + role);
            }
        }
    }

    /**
     * Runs one election pass and never waits for a deadline: registers {@code me} if
     * needed, reads what is new, and challenges only if the succession rules say so now.
     *
     * @return the leadership if {@code me} won it in this pass
     * @throws IllegalStateException when this client already holds {@code role}
     */
    public Optional<Leadership> tryAcquire(Role role, MemberId me) {
        return Optional.ofNullable(attempt(role, me).leadership);
    }

    /** The outcome of one election pass: the leadership won in it, or what the rules said instead. */
    record Attempt(Leadership leadership, Decision decision) {
    }

    Attempt attempt(Role role, MemberId me) {
        return attempt(role, me, true);
    }

    /**
     * One election pass.
     *
     * @param confirm whether a grant also writes the confirming leases that make
     *     {@code current()} true before it returns; a contender confirms after it handed
     *     the grant on, to keep those writes off the handover's path
     */
    Attempt attempt(Role role, MemberId me, boolean confirm) {
        requireOpen();
        return election.attempt(role, me, confirm);
    }

    /** Counts and logs a record that no honest member would have written. */
    void suspicious(Role role, String what) {
        long count = suspicious.incrementAndGet();
        log.warn("Suspicious record for role {} ({} so far): {}", role, count, what);
    }

    /**
     * Calls {@code onNews} soon after a record of {@code role} is committed, until the
     * handle is closed; null when the transport cannot tell news.
     */
    AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
        return transport.watches() ? transport.watch(role, onNews) : null;
    }

    /**
     * Removes {@code me} from the roster of {@code role}, so it adds no stagger to later
     * failovers. Does nothing when this client has not registered {@code me} (or already
     * left): a member that never reached the cluster has nothing to remove.
     *
     * @return whether a registration was removed
     */
    public boolean leave(Role role, MemberId me) {
        requireOpen();
        if (!registrations.has(role)) {
            return false;
        }
        transport.deregister(role, me);
        registrations.forget(role);
        return true;
    }

    /**
     * Reads the role's partition and the transaction coordinator and reports the role.
     * Joins no group and takes no epoch.
     */
    public LeadershipStatus describe(Role role) {
        requireOpen();
        // The coordinator first: the topic, read after it, holds every lease written up to
        // that moment, and a deposition before this call always shows as a mismatch.
        Optional<ProducerState> coordinator = transport.describeEpoch(role);
        return LeadershipStatus.of(refresh(role, Duration.ZERO), coordinator);
    }

    /** How many roles' describe folds this client keeps (bounded: at most 4 096). */
    int describedFolds() {
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
        List<Role> distinct = List.copyOf(new LinkedHashSet<>(roles));
        if (distinct.isEmpty()) {
            return Map.of();
        }
        // The coordinator first, as for one role: the reads after it hold every lease
        // written up to that moment.
        Map<Role, Optional<ProducerState>> coordinator = transport.describeEpochs(distinct);
        Map<Role, RoleState> states = folds.readMany(distinct);
        Map<Role, LeadershipStatus> described = new LinkedHashMap<>();
        for (Role role : distinct) {
            Optional<ProducerState> reported = coordinator.get(role);
            if (reported == null) {
                throw new IllegalStateException("the transport described no epoch for role " + role + ": "
                        + transport.getClass().getName() + " breaks the contract of describeEpochs");
            }
            described.put(role, LeadershipStatus.of(states.get(role), reported));
        }
        return described;
    }

    /**
     * The role as the coordination topic shows it, without asking the transaction
     * coordinator ({@link LeadershipStatus#coordinator()} is empty and
     * {@link LeadershipStatus#current()} false). Waits up to {@code maxWait} for something
     * new to be committed when nothing is, so an observer sees a new lease or a release
     * as soon as it is committed.
     */
    public LeadershipStatus observe(Role role, Duration maxWait) {
        requireOpen();
        return LeadershipStatus.of(refresh(role, maxWait), Optional.empty());
    }

    /** The role's folded state, waiting up to {@code maxWait} for news: what a contender decides on. */
    RoleState awaitRoleState(Role role, Duration maxWait) {
        requireOpen();
        return refresh(role, maxWait);
    }

    /**
     * Whether a read of {@code role} now could find nothing that a watcher of the role
     * registered before this client's last read of it was not (or will not soon be) woken
     * for: the transport vouches that it tells every record committed since. A contender
     * then skips its fallback read instead of queueing for the member's one consumer.
     */
    boolean quietSinceRead(Role role) {
        return folds.quietSinceRead(role);
    }

    /** Whether this client holds a registration of some member for {@code role}. */
    boolean registered(Role role) {
        return registrations.has(role);
    }

    RoleState refresh(Role role, Duration maxWait) {
        return folds.refresh(role, maxWait);
    }

    void released(Leadership leadership) {
        held.remove(leadership.role(), leadership);
        registrations.forget(leadership.role());
    }

    void ended(Leadership leadership) {
        held.remove(leadership.role(), leadership);
    }

    Instant now() {
        return clock.instant();
    }

    /** Where the transport reaches the cluster, for messages. */
    String location() {
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
        for (Leadership leadership : List.copyOf(held.values())) {
            try {
                leadership.close();
            } catch (RuntimeException e) {
                log.warn("Releasing role {} on close failed", leadership.role(), e);
            }
        }
        closed = true;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
