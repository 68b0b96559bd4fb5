package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RosterEntry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A graceful handover of one role to a chosen standby, within the frozen record format.
 * Ranks are registration offsets, so the holder makes the target next in line before it
 * releases:
 * <ol>
 *   <li>The holder removes the target's registration and waits for it to register again.
 *       A live member does so within a pass (a member missing from a roster always
 *       registers again), which proves it alive and answering now, and puts it at the
 *       tail; a silent or overloaded one is left out of the roster, and the holder keeps
 *       the role.</li>
 *   <li>It removes the registration of every standby ahead of the target. Each sees
 *       itself missing and registers again, behind the target: no member is stranded, and
 *       a member on another balance setting or an older version does the same.</li>
 *   <li>It releases as usual. Any reader that sees the release sees the removals before
 *       it (one partition, one order), so the target is rank 0 to every standby and
 *       challenges at once; the gap is a graceful handover's, not a lease.</li>
 * </ol>
 * The release is an ordinary one: the broker's epoch still decides who writes, so a
 * handover that goes wrong costs a stagger, never a second writer.
 *
 * <p>The release runs on the holder's pass, so a renewal blocked on the cluster holds it
 * up: the handover then answers {@link HandoverResult#BUSY} and the holder keeps the role.
 * Blocked before step 1, nothing is changed; blocked after it, the target is left at the
 * tail where step 1 put it.
 */
public final class Handover {

    // The contender's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    /** How long the holder waits for the target to register again before it calls it silent. */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    private static final Duration PROBE_READ = Duration.ofMillis(200);

    /** How long a handover waits for the holder's pass to take the release up, before it gives up (the role stays). */
    public static final Duration RELEASE_WAIT = Duration.ofSeconds(10);

    private final Balancer balancer;
    private final RoleReader reader;
    private final CoordinationRuntime runtime;
    private final Role role;
    private final MemberId me;
    private final Supplier<Tenure> tenure;
    private final TenureEnd ending;
    private final Runnable passNow;
    private final BooleanSupplier renewalBlocked;
    private final AtomicBoolean underWay = new AtomicBoolean();
    // The release a handover asks the holder's pass for: it runs there, between renewals,
    // never beside a transaction of the role (one producer per role, one at a time).
    private final AtomicReference<Asked> asked = new AtomicReference<>();

    private record Asked(Tenure held, MemberId to, CompletableFuture<HandoverResult> done) {}

    /** How a handover reads the role: the client's fold of it, refreshed now, waiting up to {@code maxWait}. */
    @FunctionalInterface
    interface RoleReader {
        RoleState read(Role role, Duration maxWait);
    }

    Handover(
            Balancer balancer,
            RoleReader reader,
            CoordinationRuntime runtime,
            Role role,
            MemberId me,
            Supplier<Tenure> tenure,
            TenureEnd ending,
            Runnable passNow,
            BooleanSupplier renewalBlocked) {
        this.balancer = balancer;
        this.reader = reader;
        this.runtime = runtime;
        this.role = role;
        this.me = me;
        this.tenure = tenure;
        this.ending = ending;
        this.passNow = passNow;
        this.renewalBlocked = renewalBlocked;
    }

    /**
     * Hands the role over to {@code to}, one handover at a time: proves it alive and
     * answering, then has the holder's pass put it first and release.
     */
    HandoverResult to(MemberId to) {
        Tenure held = tenure.get();
        if (held == null || held.finished.get()) {
            return HandoverResult.NOT_HOLDING;
        }
        if (!underWay.compareAndSet(false, true)) {
            return HandoverResult.BUSY;
        }
        try {
            RoleState state = reader.read(role, Duration.ZERO);
            Optional<RosterEntry> target = state.entryOf(to);
            if (to.equals(me) || target.isEmpty()) {
                return HandoverResult.NOT_A_STANDBY;
            }
            // The pass that must release is stuck in that renewal: a probe now would only cost
            // the target its place in line, and the caller would wait for nothing.
            if (renewalBlocked.getAsBoolean()) {
                log.info(
                        "{} keeps role {}: a renewal of it is blocked on the cluster, so it cannot hand it to {} now",
                        me,
                        role,
                        to);
                return HandoverResult.BUSY;
            }
            // Even a member whose lease has not run out is probed: one still busy with its
            // first passes (a thousand roles at its start) took tens of seconds to act on a
            // release, and the role had no holder all that time. A target that answers
            // within the probe takes the role at once; one that does not is left alone.
            if (registeredAgain(to, target.get()) == null) {
                log.info(
                        "{} keeps role {}: {} did not register again within {} after its registration was removed, so it "
                                + "is out of the roster until it does",
                        me,
                        role,
                        to,
                        DurationText.of(PROBE_TIMEOUT));
                balancer.silent(to);
                return HandoverResult.TARGET_SILENT;
            }
            Asked ask = new Asked(held, to, new CompletableFuture<>());
            asked.set(ask);
            passNow.run();
            return released(ask);
        } finally {
            underWay.set(false);
        }
    }

    /**
     * Waits for the holder's pass to take {@code ask} up and release: up to
     * {@link #RELEASE_WAIT}, less once a renewal blocks (the pass is stuck in it) or the
     * leadership ends. An ask not taken by then is withdrawn, so it never runs late.
     */
    private HandoverResult released(Asked ask) {
        long deadline = runtime.nanoTime() + RELEASE_WAIT.toNanos();
        try {
            for (; ; ) {
                long left = deadline - runtime.nanoTime();
                if (ask.done().isDone() || left <= 0 || ask.held().finished.get() || renewalBlocked.getAsBoolean()) {
                    break;
                }
                runtime.await(ask.done(), RoleContender.min(PROBE_READ, Duration.ofNanos(left)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (asked.compareAndSet(ask, null)) {
            // Not taken up, and now it never will be: answer what is true now.
            boolean holding = tenure.get() == ask.held() && !ask.held().finished.get();
            if (holding) {
                log.info(
                        "{} keeps role {}: its pass did not get to the handover to {} (a renewal blocked, or {} passed)",
                        me,
                        role,
                        ask.to(),
                        DurationText.of(RELEASE_WAIT));
            }
            return holding ? HandoverResult.BUSY : HandoverResult.NOT_HOLDING;
        }
        // The pass took it up: the release is under way, and ends when its writes do.
        boolean interrupted = false;
        while (!ask.done().isDone()) {
            try {
                runtime.await(ask.done(), RELEASE_WAIT);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        try {
            return ask.done().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : e;
        }
    }

    /** Runs the release a handover asked for, on the holder's pass; whether there was one. */
    boolean runAsked() {
        Asked ask = asked.getAndSet(null);
        if (ask == null) {
            return false;
        }
        try {
            ask.done().complete(release(ask.held(), ask.to()));
        } catch (RuntimeException | Error e) {
            // The handover waits for this answer: it must never wait forever, an Error included.
            ask.done().completeExceptionally(e);
            throw e;
        }
        return true;
    }

    /**
     * Puts {@code to} first in line and releases (steps 2 and 3 above), on the calling
     * thread: the holder's pass, or the stop's leave (a drain).
     */
    HandoverResult release(Tenure held, MemberId to) {
        if (held.leadership.state() != Leadership.State.ACTIVE) {
            // Fenced or run out already: the listener hears how, and the standbys ahead of
            // {@code to} stay where they are, in a new holder's line.
            ending.finish(held, null, null);
            return HandoverResult.NOT_HOLDING;
        }
        if (!held.leadership.isActive()) {
            return HandoverResult.NOT_HOLDING; // another call is releasing it
        }
        RoleState state = reader.read(role, Duration.ZERO);
        if (state.entryOf(to).isEmpty()) {
            return HandoverResult.NOT_A_STANDBY;
        }
        for (RosterEntry entry : state.roster()) {
            if (entry.member().equals(to)) {
                break;
            }
            if (!entry.member().equals(me)) {
                balancer.evict(role, entry.member());
            }
        }
        if (!ending.release(held)) {
            return HandoverResult.NOT_HOLDING;
        }
        log.info("{} handed role {} over to {}", me, role, to);
        return HandoverResult.HANDED_OVER;
    }

    /** Removes {@code to}'s registration and waits for a newer one; the state that shows it, or null. */
    private @Nullable RoleState registeredAgain(MemberId to, RosterEntry before) {
        balancer.evict(role, to);
        long deadline = runtime.nanoTime() + PROBE_TIMEOUT.toNanos();
        for (; ; ) {
            long left = deadline - runtime.nanoTime();
            if (left <= 0) {
                return null;
            }
            RoleState state = reader.read(role, RoleContender.min(PROBE_READ, Duration.ofNanos(left)));
            if (state.entryOf(to)
                    .filter(entry -> entry.offset() > before.offset())
                    .isPresent()) {
                return state;
            }
        }
    }
}
