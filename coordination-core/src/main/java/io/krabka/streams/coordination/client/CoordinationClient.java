package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.SendBatching;
import io.krabka.streams.coordination.client.internal.Engine;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

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
 * what was committed since the last one. It forgets a role (its fold and all else it kept
 * of it) once no contender, call or leadership of this client uses it and its member left
 * the roster; the next use reads the partition from the start. Malformed records in the
 * partition are skipped with a warning and counted ({@link #malformedRecords()}); they never stop
 * the member and never change a roster or a lease.
 *
 * <p>One client serves one member per role: the transport holds one transactional producer
 * per role, and a second member of the role in the same transport would fence the first. Thread-safe.
 *
 * <p>Every call delegates to the client's {@link Engine}, in the internal package.
 */
public final class CoordinationClient implements AutoCloseable {

    private final Engine engine;
    private final CoordinationTransport transport;

    /** A client with the default lease timings on the shared runtime (the system clock and the library's daemon threads). */
    public CoordinationClient(CoordinationTransport transport) {
        this(transport, LeaseConfig.DEFAULTS, CoordinationRuntime.shared());
    }

    /** A client on the shared runtime's threads with {@code clock} as the wall clock leases are written in; the caller closes {@code transport} after it. */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, InstantSource clock) {
        this(transport, config, clock, SendBatching.DEFAULTS);
    }

    /** As {@link #CoordinationClient(CoordinationTransport, LeaseConfig, InstantSource)}; {@code sendBatching}: how {@link Leadership#send} groups sends. */
    public CoordinationClient(
            CoordinationTransport transport, LeaseConfig config, InstantSource clock, SendBatching sendBatching) {
        this(
                transport,
                config,
                CoordinationRuntime.shared().withClock(Objects.requireNonNull(clock, "clock")),
                sendBatching);
    }

    /** A client whose contenders, leaderships and pipelines run on {@code runtime} (its clock, ticker, timer, executors); the caller closes {@code transport} and {@code runtime} after it. */
    public CoordinationClient(CoordinationTransport transport, LeaseConfig config, CoordinationRuntime runtime) {
        this(transport, config, runtime, SendBatching.DEFAULTS);
    }

    /**
     * As {@link #CoordinationClient(CoordinationTransport, LeaseConfig, CoordinationRuntime)}; {@code sendBatching}: how {@link Leadership#send} groups sends.
     * Every constructor checks that {@code config} renews before its lease runs out.
     *
     * @throws IllegalArgumentException when the renew interval is not shorter than the lease duration: every
     *     holder's lease would run out before its first renewal
     */
    public CoordinationClient(
            CoordinationTransport transport,
            LeaseConfig config,
            CoordinationRuntime runtime,
            SendBatching sendBatching) {
        if (config.renewInterval().compareTo(config.duration()) >= 0) {
            throw new IllegalArgumentException("the lease's renewInterval (" + config.renewInterval()
                    + ") must be shorter than its duration (" + config.duration() + "): every holder's lease would run"
                    + " out before its first renewal (a third of the duration or less leaves two more tries)");
        }
        this.engine = new Engine(transport, config, runtime, sendBatching);
        this.transport = transport;
    }

    /** Wraps grants, renewals and guarded writes of this client's leaderships from now on (tracing, for one); set it before contending. */
    public CoordinationClient instrument(CoordinationInstrumentation instrumentation) {
        engine.instrument(instrumentation);
        return this;
    }

    /**
     * How this client's contenders share their roles with the other members' ({@link Balance});
     * set it before contending. {@link Balance#NONE} by default.
     *
     * @return this client
     */
    public CoordinationClient balance(Balance balance) {
        engine.balance(balance);
        return this;
    }

    /** How the roles {@code member} contends for through this client are shared out, as its own reads show them. */
    public RoleShare share(MemberId member) {
        return engine.share(member);
    }

    /** How {@link Leadership#send} groups sends into transactions. */
    public SendBatching sendBatching() {
        return engine.sendBatching();
    }

    /** The lease timings. */
    public LeaseConfig config() {
        return engine.config();
    }

    /** The wall clock leases are written in. */
    public InstantSource clock() {
        return engine.clock();
    }

    /** The time and threads this client's contenders, leaderships and pipelines run on. */
    public CoordinationRuntime runtime() {
        return engine.runtime();
    }

    /**
     * How many lease records this client found suspicious so far: a deadline further out
     * than any holder could claim, or a lease naming another member while the transaction
     * coordinator says the holder still holds the epoch. Each is logged once.
     */
    public long suspiciousRecords() {
        return engine.suspiciousRecords();
    }

    /** How many malformed records this client skipped so far. */
    public long malformedRecords() {
        return engine.malformedRecords();
    }

    /**
     * Registers {@code me} for {@code role} (the first time this client sees the pair),
     * then repeats election passes until {@code me} wins the role or {@code timeout}
     * passes. Between passes it waits on the coordination topic, so a release or a new
     * lease is seen as soon as it is committed; it never spins.
     *
     * @throws io.krabka.streams.coordination.CoordinationTimeoutException when the role was not won within {@code timeout}
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public Leadership acquire(Role role, MemberId me, Duration timeout) throws InterruptedException {
        return engine.acquire(role, me, timeout);
    }

    /**
     * Runs one election pass and never waits for a deadline: registers {@code me} if
     * needed, reads what is new, and challenges only if the succession rules say so now.
     *
     * @return the leadership if {@code me} won it in this pass
     * @throws IllegalStateException when this client already holds {@code role}
     */
    public Optional<Leadership> tryAcquire(Role role, MemberId me) {
        return engine.tryAcquire(role, me).map(Leadership.class::cast);
    }

    /**
     * Removes {@code me} from the roster of {@code role}, so it adds no stagger to later
     * failovers. Does nothing when this client has not registered {@code me} (or already
     * left): a member that never reached the cluster has nothing to remove.
     *
     * @return whether a registration was removed
     * @throws IllegalStateException when this client holds {@code role}: release the leadership instead
     */
    public boolean leave(Role role, MemberId me) {
        return engine.leaveUnlessHolding(role, me);
    }

    /**
     * Reads the role's partition and the transaction coordinator and reports the role.
     * Joins no group and takes no epoch.
     */
    public LeadershipStatus describe(Role role) {
        return engine.describe(role);
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
        return engine.describe(roles);
    }

    /**
     * The role as the coordination topic shows it, without asking the transaction
     * coordinator ({@link LeadershipStatus#coordinator()} is empty and
     * {@link LeadershipStatus#current()} false). Waits up to {@code maxWait} for something
     * new to be committed when nothing is, so an observer sees a new lease or a release
     * as soon as it is committed.
     */
    public LeadershipStatus observe(Role role, Duration maxWait) {
        return engine.observe(role, maxWait);
    }

    /**
     * Checks, once, that the cluster behind this client's transport fences as every
     * guarantee of this library assumes: the fencing probe ({@link FencingProbe}) on the
     * transport's connection settings, coordination topic and operation timeout, with its
     * role producers' transaction timeout (the lease duration) checked against the brokers'
     * maximum. Call it before contending, and stop on a FAIL:
     * <pre>{@code
     * client.probe().requireNoFailure(); // FencingProbeException: each FAIL, what it means, and its fix
     * }</pre>
     *
     * <p>What it writes, and where: never to the coordination topic, which it only reads the
     * settings of. Its live checks write to the probe topic {@code <topic>-probe} (created on
     * first use: one partition, {@code cleanup.policy=delete}, one hour of retention): two
     * transactions, one committed and one aborted, of a new transactional id
     * {@code <topic>-probe-<8 hex digits>}, and three small records. Its transactions end and
     * its clients (its own, not the transport's) close before it returns. A read-only run,
     * which writes nothing: {@code fencingProbe().readOnly(true).build().run()}.
     *
     * @return what each check found: {@link FencingReport#status()}, the cluster id it checked
     * @throws UnsupportedOperationException when the transport is not a
     *     {@link KafkaCoordinationTransport} created from settings
     *     ({@link KafkaCoordinationTransport#create(Map, io.krabka.streams.coordination.transport.TopicSpec, Duration, Duration)}):
     *     the probe builds clients of its own from them
     * @throws CoordinationException when the cluster cannot be reached at all: nothing was checked
     */
    public FencingReport probe() {
        return fencingProbe().build().run();
    }

    /**
     * The probe {@link #probe()} runs, to change before running it: {@code readOnly(true)},
     * {@code roles(n)} for the connection estimate, {@code probeTopic(...)}.
     *
     * @throws UnsupportedOperationException as {@link #probe()}
     */
    public FencingProbe.Builder fencingProbe() {
        if (transport instanceof KafkaCoordinationTransport kafka
                && kafka.settings().isPresent()) {
            return FencingProbe.builder(kafka);
        }
        throw new UnsupportedOperationException(
                "the fencing probe checks a Kafka cluster with clients of its own, built from"
                        + " the settings a KafkaCoordinationTransport was created from (KafkaCoordinationTransport.create); this"
                        + " client's transport is " + transport.location() + " ("
                        + transport.getClass().getSimpleName() + ")"
                        + ": run FencingProbe.builder(connection) instead");
    }

    /** What this client is made of: its contenders are built from it. */
    Engine engine() {
        return engine;
    }

    /** How many entries each per-role map of this client holds, by name; describe folds and the balancer's apart. */
    Map<String, Integer> roleEntries() {
        return engine.roleEntries();
    }

    /** How many roles' describe folds this client keeps (bounded: at most 4 096). */
    int describedFolds() {
        return engine.describedFolds();
    }

    /** Releases every role this client still holds. The transport stays open: its owner closes it. */
    @Override
    public void close() {
        engine.close();
    }
}
