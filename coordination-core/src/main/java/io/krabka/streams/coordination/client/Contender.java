package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ContenderState;
import io.krabka.streams.coordination.client.internal.RoleContender;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Contends for one role on behalf of one member for as long as it runs: registers, waits
 * for its turn, challenges, holds and renews, steps down, rejoins after every end, and
 * releases on {@link #close()}. The counterpart of Curator's {@code LeaderSelector}; the
 * succession rules decide every move, this class only carries them out.
 *
 * <pre>{@code
 * Contender contender = new Contender(client, Role.of("controller"), MemberId.of("node-1"),
 *         new Contender.Listener() {
 *             public void granted(Leadership leadership) { dispatcher.start(leadership); }
 *             public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) { dispatcher.stop(); }
 *         });
 * contender.start();
 * ...
 * contender.close();   // stops, releases the role with a tombstone, leaves the roster
 * }</pre>
 *
 * <h2>Threads and callbacks</h2>
 * No thread per contender: everything runs on the client's {@link CoordinationRuntime}.
 * Passes run on its few pass threads when their timer says (at most a second away) or at
 * once when the transport reports a committed record of the role. A holder's passes (its renewals) run apart, on the runtime's renewal threads,
 * and never read the topic there; a renewal blocked longer than
 * {@link RenewalWatch#STUCK_RENEWAL} is reported to the runtime, which runs the next role's
 * renewal beside it: a stuck commit or a slow read holds up no other role's renewal.
 * Listener callbacks run one at a time per contender, in order, on the runtime's callback
 * threads: a listener that blocks never delays a renewal. A timer at each lease's deadline
 * ends a leadership whose renewal still blocks on an unresponsive cluster, so
 * {@link Listener#ended} comes at the deadline, not when the blocked call returns.
 *
 * <h2>The work ends, the leadership ends</h2>
 * A leadership never outlives the reason it was taken for. When the role's work is
 * done or failed, its owner calls {@link #relinquish}; when {@link Listener#granted}
 * throws, the contender does it itself. Either way the leadership is released with a
 * lease tombstone (a standby takes over at once), the listener hears
 * {@link LeadershipEndCause#RELEASED} (the work returned) or
 * {@link LeadershipEndCause#FAILED} (it threw), and the member contends again from the
 * tail of the roster after a one-second pause (so work that ends at once is not granted
 * again at once, over and over). Like Curator's {@code LeaderSelector}, returning from
 * the work gives the leadership up.
 *
 * <p>Thread-safe.
 *
 * <p>Size: the contender's whole public face and the contract of each call; each
 * delegates to its {@link RoleContender}, in the internal package.
 */
public final class Contender implements AutoCloseable {

    /** How long {@link #close()} waits for the release and the listener, by default. */
    static final Duration DEFAULT_CLOSE_TIMEOUT = RoleContender.DEFAULT_CLOSE_TIMEOUT;

    /**
     * What a contender tells its owner. Callbacks of one contender run one at a time and
     * in order, never on a pass thread: a grant is always reported before its end.
     */
    public interface Listener {

        /**
         * The role was granted. Start the role's work here (without blocking for long:
         * the next end waits for this to return). Throwing ends the leadership as
         * {@link LeadershipEndCause#FAILED}.
         */
        void granted(Leadership leadership) throws Exception;

        /**
         * The leadership ended; stop the role's work. Its guarded writes already fail
         * with {@link FencedException}.
         *
         * @param leadership the leadership that ended; its token is the last one it had
         * @param cause how it ended
         * @param failure what ended it when it ended {@code FENCED} or {@code FAILED} (when known);
         *     always null for {@code RELEASED} and {@code EXPIRED}, which are no failure
         */
        void ended(Leadership leadership, LeadershipEndCause cause, @Nullable Throwable failure);

        /** A renewal succeeded after {@code took}. Runs on a pass thread: must not block. */
        default void renewed(Leadership leadership, Duration took) {}

        /** A renewal failed without ending the leadership. Runs on a pass thread: must not block. */
        default void renewFailed(Leadership leadership, CoordinationException failure) {}
    }

    private final RoleContender engine;

    /** A contender whose listener runs on the shared callback threads, one callback at a time. */
    public Contender(CoordinationClient client, Role role, MemberId member, Listener listener) {
        this(client, role, member, listener, null);
    }

    /**
     * A contender whose listener runs on {@code callbacks}, or on the shared callback
     * threads when that is null. The callbacks of one contender run one at a time and in
     * order either way.
     */
    public Contender(
            CoordinationClient client, Role role, MemberId member, Listener listener, @Nullable Executor callbacks) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(listener, "listener");
        this.engine = new RoleContender(
                client.engine(),
                Objects.requireNonNull(role, "role"),
                Objects.requireNonNull(member, "member"),
                listener,
                callbacks);
    }

    /**
     * A contender that runs {@code work} itself for each leadership, on the client
     * runtime's workers, on a thread named {@code krabka-work-<role>} while it runs
     * (Curator's {@code takeLeadership}): the work's return releases the role, its
     * exception ends the leadership as FAILED, and the leadership's end interrupts it (the
     * end waits up to 30 s for it to return).
     */
    public static Contender running(CoordinationClient client, Role role, MemberId member, LeaderWork work) {
        return running(client, role, member, work, null);
    }

    /**
     * The same, also telling {@code events} of each grant and end (after the work started,
     * and after it stopped); null for none.
     */
    public static Contender running(
            CoordinationClient client, Role role, MemberId member, LeaderWork work, @Nullable Listener events) {
        WorkListener listener = new WorkListener(new LeaderWorkRunner("krabka-work-" + role, work), events);
        return listener.bind(new Contender(client, role, member, listener));
    }

    public Role role() {
        return engine.role();
    }

    public MemberId member() {
        return engine.member();
    }

    /** The time and threads it runs on: its client's. */
    CoordinationRuntime runtime() {
        return engine.runtime();
    }

    /** Whether {@link #start()} was called and {@link #close()} not yet. */
    public boolean isRunning() {
        return engine.isRunning();
    }

    /** The leadership this member holds now, if any: granted, and not ended. */
    public Optional<Leadership> leadership() {
        return engine.leadership();
    }

    /**
     * The failure of this contender's last cluster operation, while operations fail:
     * a {@link CoordinationAuthorizationException} when the ACLs refuse this member the
     * role, a {@link io.krabka.streams.coordination.CoordinationTimeoutException} when the
     * cluster does not answer. Empty once an operation succeeds again. Between failures, a
     * standing misconfiguration: members that disagree on the lease, members of the role
     * on another coordination topic (someone else moves the role's epoch), or a topic
     * altered to break the guarantees
     * ({@link io.krabka.streams.coordination.transport.CoordinationTransport#topicProblem}).
     */
    public Optional<CoordinationException> problem() {
        return engine.problem();
    }

    /**
     * Starts contending: passes run on the shared pass threads, woken early when a record
     * of the role is committed.
     */
    public void start() {
        engine.start();
    }

    /**
     * Releases the role if this member holds it: no new guarded write starts, the one in
     * flight completes, a lease tombstone lets the next standby take over at once, and
     * the listener hears {@link LeadershipEndCause#RELEASED}. The member keeps contending,
     * from the tail of the roster.
     *
     * @return whether a held leadership was released
     */
    public boolean release() {
        return engine.release();
    }

    /**
     * Hands the held role to {@code to}, a live standby of it: makes it next in line, then
     * releases ({@link Handover}). Blocks up to about 5 s for {@code to} to show it is
     * alive, up to 10 s more for this member's pass to begin the release, then while the
     * release writes. A renewal of the role blocked on the cluster holds that pass up: the
     * member then keeps the role and this answers {@link HandoverResult#BUSY}, at once if
     * the renewal was blocked already (leaving {@code to} where it stood in line).
     */
    public HandoverResult handOver(MemberId to) {
        return engine.handOver(Objects.requireNonNull(to, "to"));
    }

    /**
     * Gives {@code leadership} up because the work it was taken for ended: released
     * with a tombstone when {@code failure} is null (the listener hears RELEASED), ended
     * as FAILED otherwise. A leadership that already ended is reported as it ended; one
     * that is not this contender's current leadership is left alone.
     *
     * @param failure what the work threw, or null when it returned
     */
    public void relinquish(Leadership leadership, @Nullable Throwable failure) {
        engine.relinquish(leadership, failure);
    }

    /**
     * Waits until the listener ran every callback issued so far. Called from one of this
     * contender's own callbacks it does not wait, since the callbacks after that one run
     * only once it returns, and answers false.
     *
     * @return whether it did within {@code timeout}
     */
    public boolean awaitListener(Duration timeout) {
        return engine.awaitListener(timeout);
    }

    /**
     * Asks the contender to stop, without waiting: it releases a held role, leaves the
     * roster, and stops passing. {@link #awaitStopped} waits for that; stopping many
     * contenders this way takes as long as the slowest, not their sum.
     */
    public void stop() {
        engine.stop();
    }

    /**
     * Waits up to {@code timeout} for a stopped contender to release, leave the roster and
     * tell the listener. Past it, a held leadership is abandoned without a tombstone (the
     * cluster did not answer: standbys wait for its deadline) and the thread is left to end
     * with the transport. Called from one of this contender's own callbacks (a
     * {@code close()} in {@code granted}), it waits for the release and the leave but not
     * for the listener, which is told how the leadership ended once that callback returns.
     *
     * @return whether everything finished within {@code timeout}; false from a callback
     */
    public boolean awaitStopped(Duration timeout) {
        return engine.awaitStopped(timeout);
    }

    /** Stops, releasing a held role, and waits up to 30 s for that. */
    @Override
    public void close() {
        engine.close();
    }

    /** Where this contender stands now. */
    ContenderState state() {
        return engine.state();
    }

    /**
     * One pass of the state machine at the clock's current instant, never waiting for
     * the topic: the pass threads call it when the timer or news says, a simulation calls
     * it directly.
     *
     * @return how long to wait for news before the next pass
     */
    Duration step() {
        return engine.step();
    }

    @Override
    public String toString() {
        return engine.toString();
    }
}
