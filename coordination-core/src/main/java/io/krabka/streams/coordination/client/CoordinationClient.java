package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.MalformedRecordException;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RoleStateBuilder;
import io.krabka.streams.coordination.succession.RosterEntry;
import io.krabka.streams.coordination.succession.Succession;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
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
    private final Map<Role, RoleStateBuilder> views = new ConcurrentHashMap<>();
    // Each fold's next offset, readable without the fold's lock.
    private final Map<Role, Long> readUpTo = new ConcurrentHashMap<>();
    // The folds of describe(Collection), apart from the contenders': a contender holds its
    // fold's lock while its read queues for the member's one consumer, and a describe of
    // many roles must not wait for each of them in turn.
    private final Map<Role, RoleStateBuilder> describedViews = new ConcurrentHashMap<>();
    private final Map<Role, Registered> registrations = new ConcurrentHashMap<>();
    private final Map<Role, Leadership> held = new ConcurrentHashMap<>();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong suspicious = new AtomicLong();
    private final Map<Role, LeaseSighting> sightings = new ConcurrentHashMap<>();
    // The same for releases, keyed by the tombstone's timestamp instead of an offset.
    private final Map<Role, LeaseSighting> releaseSightings = new ConcurrentHashMap<>();
    // How long a standby waits for each role's lease: raised by new lease records, never
    // lowered; cleared by a tombstone.
    private final Map<Role, Long> leaseBounds = new ConcurrentHashMap<>();
    // The same for an epoch the coordinator reports that no visible lease explains (a
    // challenge in flight), keyed by the reported (producer id, epoch, state).
    private final Map<Role, LeaseSighting> epochSightings = new ConcurrentHashMap<>();
    // This client's last challenge of each role: what it saw when it challenged, and what it won.
    private final Map<Role, Challenged> challenged = new ConcurrentHashMap<>();
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
        return malformed.get();
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

    /** This client's newest registration of a member for a role: the offset and the time it wrote into it. */
    private record Registered(long offset, long registeredAt) {
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
        Leadership current = held.get(role);
        if (current != null && current.isActive()) {
            throw new IllegalStateException(me + " already holds role " + role + " through this client");
        }
        Registered registered = registrations.get(role);
        if (registered == null) {
            registered = register(role, me);
        }
        RoleState state = refresh(role, Duration.ZERO);
        if (state.entryOf(me).isEmpty() && state.nextOffset() > registered.offset()) {
            // A winner pruned this member as silent; it rejoins at the tail.
            log.info("{} is no longer in the roster of role {}; registering again", me, role);
            registered = register(role, me);
            state = refresh(role, Duration.ZERO);
        }
        if (state.entryOf(me).isEmpty()) {
            // Our registration is committed but sits behind an open transaction (a holder
            // frozen mid-write, or any role sharing the partition), which read_committed
            // cannot read past. It can only land after every entry we see, so rank from
            // the tail now: waiting for it to show would hold this standby off until
            // that transaction times out. The entry is the record we wrote, so the
            // challenge anchors on its time, never on now.
            state = withPendingRegistration(state, new RosterEntry(me, registered.offset(), registered.registeredAt()));
        }
        state = withBoundedLease(role, state);
        Decision decision = Succession.evaluate(state, me, false, config, clock.instant());
        if (decision instanceof Decision.Challenge due) {
            decision = unlessAlreadyChallenged(role, state, due);
        }
        if (decision instanceof Decision.Challenge) {
            return new Attempt(challenge(role, me, state, confirm), decision);
        }
        if (decision instanceof Decision.Wait next && next.rank() == 0) {
            // Next in line: build and connect the role's producer now, not at the challenge.
            transport.prepareEpoch(role);
        }
        return new Attempt(null, decision);
    }

    /**
     * A record this client saw: its identity (a lease's offset, a tombstone's timestamp),
     * when it first saw it on its own clock, and whether that was just now.
     */
    private record LeaseSighting(long key, long seenAt, boolean fresh) {
    }

    /** The sighting of the record {@code key} of {@code role}: the remembered one, or a fresh one from now. */
    private LeaseSighting sight(Map<Role, LeaseSighting> seen, Role role, long key) {
        LeaseSighting previous = seen.get(role);
        if (previous != null && previous.key() == key) {
            return new LeaseSighting(key, previous.seenAt(), false);
        }
        LeaseSighting fresh = new LeaseSighting(key, clock.millis(), true);
        seen.put(role, fresh);
        return fresh;
    }

    /**
     * The state with the lease's deadline cut to one lease duration after this client
     * first saw that lease record, and never earlier than the bound an earlier lease
     * record gave. Any member with Write on the topic can append a lease naming anyone
     * with any deadline; a standby that believed it would wait for ever, or challenge a
     * live holder at once. A live holder writes a new record every renew interval, well
     * inside the cut.
     */
    private RoleState withBoundedLease(Role role, RoleState state) {
        if (state.lease().isEmpty()) {
            leaseBounds.remove(role);
            return withBoundedRelease(role, state);
        }
        LeaseState lease = state.lease().get();
        LeaseSighting seen = sight(sightings, role, lease.offset());
        long cut = seen.seenAt() + config.duration().toMillis();
        if (seen.fresh() && lease.deadline() > cut + config.duration().toMillis()) {
            // Further out than the clocks of two members can plausibly differ: a forged or broken record.
            suspicious(role, "the lease at offset " + lease.offset() + " of " + transport.topic() + " names " + lease.member()
                    + " with deadline " + lease.deadlineInstant() + "; a standby waits at most until " + Instant.ofEpochMilli(cut));
        }
        // A new lease record may extend the wait, never shorten it: anyone with Write on the
        // topic can append one with a deadline already past (naming the live holder, whose
        // contender ignores leases naming itself), and only a tombstone ends a lease early.
        long bound = leaseBounds.merge(role, Math.min(lease.deadline(), cut), Math::max);
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
        LeaseSighting seen = sight(releaseSightings, role, releasedAt);
        if (releasedAt <= seen.seenAt()) {
            return state;
        }
        if (seen.fresh() && releasedAt > seen.seenAt() + config.duration().toMillis()) {
            suspicious(role, "a lease tombstone in " + transport.topic() + " is stamped " + Instant.ofEpochMilli(releasedAt)
                    + ", later than this member's clock says it arrived (" + Instant.ofEpochMilli(seen.seenAt()) + ")");
        }
        return new RoleState(state.role(), state.roster(), state.lease(), OptionalLong.of(seen.seenAt()), state.nextOffset());
    }

    /** Counts and logs a record that no honest member would have written. */
    void suspicious(Role role, String what) {
        long count = suspicious.incrementAndGet();
        log.warn("Suspicious record for role {} ({} so far): {}", role, count, what);
    }

    private static RoleState withPendingRegistration(RoleState state, RosterEntry pending) {
        List<RosterEntry> roster = new ArrayList<>(state.roster());
        roster.add(pending);
        return new RoleState(state.role(), roster, state.lease(), state.leaseReleasedAt(), state.nextOffset());
    }

    private Registered register(Role role, MemberId me) {
        long registeredAt = clock.millis();
        Registered registered = new Registered(transport.register(role, me, registeredAt), registeredAt);
        registrations.put(role, registered);
        return registered;
    }

    private Leadership challenge(Role role, MemberId me, RoleState state, boolean confirm) {
        AtomicLong term = new AtomicLong(-1);
        return instrumentation.around(CoordinationInstrumentation.Operation.GRANT, role, me, term::get, 0, () -> {
            Leadership won = challengeNow(role, me, state, confirm);
            if (won != null) {
                term.set(won.term());
            }
            return won;
        });
    }

    /**
     * What a challenge was made against: the visible lease (its offset), the release (its
     * tombstone's timestamp), or nothing visible; the leadership it won, if any; and what
     * the coordinator reported after it failed on its own (not to a later InitProducerId),
     * since that epoch is this member's own doing.
     */
    private record Challenged(long visibleOffset, long visibleRelease, Leadership won, ProducerState ownFailure) {

        static Challenged of(RoleState state, Leadership won, ProducerState ownFailure) {
            return new Challenged(state.lease().map(LeaseState::offset).orElse(-1L), state.leaseReleasedAt().orElse(-1L), won,
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
     * The challenge when no one else has challenged since the state this member sees;
     * otherwise a wait. Records can stay invisible for a while after their commit (slow
     * commit markers, or {@code read_committed} held back behind another role's open
     * transaction on the partition), so a grant in flight looks like no grant, and every
     * standby whose turn comes would fence it, and be fenced in turn, for as long as it
     * lasts. The coordinator cannot be fooled that way: an epoch no visible lease (nor this
     * member's own last challenge) explains means someone ran InitProducerId since, so it
     * is treated like a lease first seen now, with this member's stagger after it. A
     * record on the topic cannot forge it: only a member with Write on the role's
     * transactional id can move the epoch. Rank 0 does not ask the first time it challenges
     * a released or never-held role (a graceful handover stays one request shorter); it
     * does ask after a lease's deadline, since a lease that shows late (its records held
     * back) may name a holder that renews out of sight.
     */
    private Decision unlessAlreadyChallenged(Role role, RoleState state, Decision.Challenge due) {
        Challenged last = challenged.get(role);
        boolean again = last != null && last.against(state);
        if (due.rank() == 0 && !again && state.lease().isEmpty()) {
            return due;
        }
        Optional<ProducerState> reported = transport.describeEpoch(role);
        if (reported.isEmpty() || explained(state, reported.get(), again ? last : null) || carried(role, reported.get())) {
            epochSightings.remove(role);
            return due;
        }
        ProducerState epoch = reported.get();
        // Any move is news: a new epoch, a transaction's progress, or a new transaction (which
        // shows only in its start time under transaction version 1: an invisible holder renewing).
        long key = Objects.hash(epoch.producerId(), epoch.producerEpoch(), epoch.state(), epoch.transactionStartedAt());
        boolean episodeBegins = !epochSightings.containsKey(role);
        LeaseSighting seen = sight(epochSightings, role, key);
        Instant challengeAt = Succession.challengeAfter(Instant.ofEpochMilli(seen.seenAt()), due.rank(), config);
        if (!clock.instant().isBefore(challengeAt)) {
            return due;
        }
        if (episodeBegins) {
            log.info("Role {} has an epoch ({}/{}, {}) that no lease visible to this member explains: a challenge is in flight "
                    + "or its records are not visible yet; waiting until {}, and longer while it moves", role, epoch.producerId(),
                    epoch.producerEpoch(), epoch.state(), challengeAt);
        }
        return new Decision.Wait(due.rank(), challengeAt);
    }

    /**
     * Whether the visible state (or this member's own last challenge of it) explains the
     * epoch the coordinator reports: the lease's own epoch, or one more after an abort (the
     * coordinator aborting a dead holder's open transaction at its timeout).
     */
    private static boolean explained(RoleState state, ProducerState reported, Challenged ownLast) {
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
     * Remembers the epoch a challenge of this member left behind when it failed by itself
     * (its grant aborted, a timeout), so its next challenge does not take its own epoch
     * for someone else's challenge in flight. Best effort: without it, that costs a lease.
     */
    private void failedOnItsOwn(Role role, RoleState state) {
        try {
            challenged.put(role, Challenged.of(state, null, transport.describeEpoch(role).orElse(null)));
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
        RoleStateBuilder view = views.get(role);
        if (view == null) {
            return false;
        }
        synchronized (view) {
            return explainedBy(view::carried, reported);
        }
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

    private Leadership challengeNow(Role role, MemberId me, RoleState state, boolean confirm) {
        // Recorded before InitProducerId: a challenge that fails after it still moved the epoch.
        challenged.put(role, Challenged.of(state, null, null));
        RoleEpoch epoch = transport.initEpoch(role);
        try {
            Leadership leadership = Leadership.grant(this, transport, epoch, me, confirm, state.nextOffset());
            challenged.put(role, Challenged.of(state, leadership, null));
            if (leadership.isActive()) {
                held.put(role, leadership);
            } else {
                // Its commit was found committed only after the lease deadline: a grant (its
                // term is taken) whose producer cannot go on. The caller sees it ended.
                log.warn("{} was granted role {} with term {}, but the leadership ended at once ({})", me, role,
                        leadership.term(), leadership.state());
            }
            prune(role, me, state);
            return leadership;
        } catch (FencedException lostTheRace) {
            if (lostTheRace.endCause() == LeadershipEndCause.FENCED) {
                log.info("{} lost the challenge for role {} to a later InitProducerId", me, role);
            } else {
                log.info("{} did not win role {}: {}", me, role, lostTheRace.getMessage());
                failedOnItsOwn(role, state);
            }
            epoch.close();
            return null;
        } catch (RuntimeException e) {
            failedOnItsOwn(role, state);
            epoch.close();
            throw e;
        }
    }

    /**
     * Removes from the roster the members that should have taken the role before
     * {@code me} and did not: the previous holder and every standby ranked ahead. A
     * dead registration would otherwise add a stagger to every later failover. A member
     * pruned while merely slow sees itself missing and registers again, at the tail.
     */
    private void prune(Role role, MemberId me, RoleState state) {
        List<MemberId> silent = new ArrayList<>();
        state.lease().map(LeaseState::member).filter(holder -> !holder.equals(me)).ifPresent(silent::add);
        for (RosterEntry entry : state.roster()) {
            if (entry.member().equals(me)) {
                break;
            }
            if (!silent.contains(entry.member())) {
                silent.add(entry.member());
            }
        }
        for (MemberId member : silent) {
            try {
                transport.deregister(role, member);
                log.info("{} took role {} and removed {} from its roster: it did not take the role in its turn", me, role, member);
            } catch (CoordinationException e) {
                log.warn("{} could not remove silent member {} from role {}; it keeps its rank", me, member, role, e);
            }
        }
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
        if (!registrations.containsKey(role)) {
            return false;
        }
        transport.deregister(role, me);
        registrations.remove(role);
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
        Map<Integer, List<Role>> byPartition = new LinkedHashMap<>();
        int partitions = transport.partitionCount();
        for (Role role : distinct) {
            byPartition.computeIfAbsent(RolePartitioner.partitionFor(role, partitions), p -> new ArrayList<>()).add(role);
        }
        // One read per partition, from the oldest next offset of the roles on it.
        Map<Role, Long> from = new LinkedHashMap<>();
        for (List<Role> sharing : byPartition.values()) {
            long oldest = Long.MAX_VALUE;
            for (Role role : sharing) {
                RoleStateBuilder view = describedViews.computeIfAbsent(role, RoleState::builder);
                synchronized (view) {
                    oldest = Math.min(oldest, view.nextOffset());
                }
            }
            from.put(sharing.get(0), oldest);
        }
        Map<Role, RoleRecords> read = transport.readAll(from);
        Map<Role, RoleState> states = new HashMap<>();
        for (List<Role> sharing : byPartition.values()) {
            RoleRecords batch = read.get(sharing.get(0));
            if (batch == null) {
                throw new IllegalStateException("the transport read nothing for role " + sharing.get(0) + ": "
                        + transport.getClass().getName() + " breaks the contract of readAll");
            }
            states.putAll(foldSharing(sharing, batch));
        }
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
     * Folds one read of a partition into the folds of the roles on it, each from its own
     * next offset, and returns their states.
     */
    private Map<Role, RoleState> foldSharing(List<Role> sharing, RoleRecords batch) {
        Map<Role, List<RawRecord>> byRole = new HashMap<>();
        Set<Role> wanted = Set.copyOf(sharing);
        for (RawRecord raw : batch.records()) {
            Role owner;
            try {
                owner = CoordinationCodec.decodeKey(raw.key()).role();
            } catch (MalformedRecordException e) {
                // Counted and logged by each fold that reads it, as on the single-role path.
                owner = null;
            }
            if (owner == null) {
                sharing.forEach(role -> byRole.computeIfAbsent(role, r -> new ArrayList<>()).add(raw));
            } else if (wanted.contains(owner)) {
                byRole.computeIfAbsent(owner, r -> new ArrayList<>()).add(raw);
            }
        }
        Map<Role, RoleState> states = new HashMap<>();
        for (Role role : sharing) {
            RoleStateBuilder view = describedViews.get(role);
            synchronized (view) {
                // A concurrent describe may have folded past some of the batch; skip those.
                for (RawRecord raw : byRole.getOrDefault(role, List.of())) {
                    if (raw.offset() >= view.nextOffset()) {
                        fold(role, view, raw);
                    }
                }
                view.advanceTo(batch.nextOffset());
                states.put(role, view.build());
            }
        }
        return states;
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
        // Not the fold's lock: a read of the role may hold it for a whole timeout.
        Long next = readUpTo.get(role);
        return next != null && transport.tellsEverythingSince(role, next);
    }

    /** Whether this client holds a registration of some member for {@code role}. */
    boolean registered(Role role) {
        return registrations.containsKey(role);
    }

    RoleState refresh(Role role, Duration maxWait) {
        RoleStateBuilder view = views.computeIfAbsent(role, RoleState::builder);
        if (!maxWait.isZero()) {
            // Wait for news without the fold's lock, so a describe (the endpoint, health) is
            // never held up by a contender's wait; fold what came unless someone else has.
            long from;
            synchronized (view) {
                from = view.nextOffset();
            }
            RoleRecords waited = transport.read(role, from, maxWait);
            synchronized (view) {
                if (view.nextOffset() == from) {
                    return fold(role, view, waited);
                }
            }
        }
        synchronized (view) {
            return fold(role, view, transport.read(role, view.nextOffset(), Duration.ZERO));
        }
    }

    /** Folds a batch read from the view's next offset into it. Holds the view's lock. */
    private RoleState fold(Role role, RoleStateBuilder view, RoleRecords batch) {
        for (RawRecord raw : batch.records()) {
            fold(role, view, raw);
        }
        view.advanceTo(batch.nextOffset());
        readUpTo.put(role, view.nextOffset());
        return view.build();
    }

    private void fold(Role role, RoleStateBuilder view, RawRecord raw) {
        try {
            CoordinationKey key = CoordinationCodec.decodeKey(raw.key());
            if (!key.role().equals(role)) {
                return;
            }
            Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), raw.value());
            view.apply(raw.offset(), raw.timestamp(), key, value);
        } catch (MalformedRecordException e) {
            long count = malformed.incrementAndGet();
            log.warn("Skipping malformed record at offset {} of {} while reading role {} ({} skipped so far): {}",
                    raw.offset(), transport.topic(), role, count, e.getMessage());
        }
    }

    void released(Leadership leadership) {
        held.remove(leadership.role(), leadership);
        registrations.remove(leadership.role());
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
