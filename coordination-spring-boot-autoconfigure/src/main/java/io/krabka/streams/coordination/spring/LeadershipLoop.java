package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationClient;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Leadership;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.Succession;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * Contends for every configured role, one named thread per role: registers, runs
 * election passes, renews when due, starts and stops role-scoped work, and publishes
 * {@link LeadershipGrantedEvent} and {@link LeadershipFencedEvent}.
 *
 * <p>While it holds a role, the thread waits on the coordination topic instead of
 * sleeping, so a newer lease (another member took the role) stops the work as soon as
 * it is committed. When renewals keep failing and the deadline passes, the work stops,
 * the fenced event says {@link LeadershipEndCause#EXPIRED}, and the member contends
 * again as a standby. On shutdown, held roles are released so a standby takes over at once.
 */
public final class LeadershipLoop implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LeadershipLoop.class);

    /** The longest a holding thread waits on the topic before it looks at its lease again. */
    private static final Duration MAX_HOLD_WAIT = Duration.ofSeconds(1);
    private static final Duration ERROR_BACKOFF = Duration.ofSeconds(1);
    /** How long the loop waits after the cluster's ACLs refused it: that does not heal by itself. */
    private static final Duration DENIAL_BACKOFF = ERROR_BACKOFF.multipliedBy(10);
    /** How long a holder waits after a failed renewal before the next attempt. */
    private static final Duration RENEW_RETRY = Duration.ofMillis(250);
    /** How often the watchdog looks for leases that expired while their renewal blocks. */
    private static final Duration WATCHDOG_TICK = Duration.ofMillis(200);

    private final CoordinationClient client;
    private final MemberId member;
    private final List<Role> roles;
    private final OnLeadershipRegistry work;
    private final ApplicationEventPublisher events;
    private final CoordinationObserver observer;
    private final Duration acquireTimeout;
    private final Duration workStopTimeout;
    private final Map<Role, RoleRuntime> runtimes = new LinkedHashMap<>();
    private volatile boolean running;
    private ScheduledExecutorService watchdog;

    public LeadershipLoop(CoordinationClient client, MemberId member, List<Role> roles, OnLeadershipRegistry work,
            ApplicationEventPublisher events, CoordinationObserver observer, Duration acquireTimeout, Duration workStopTimeout) {
        this.client = client;
        this.member = member;
        this.roles = List.copyOf(roles);
        this.work = work;
        this.events = events;
        this.observer = observer;
        this.acquireTimeout = acquireTimeout;
        this.workStopTimeout = workStopTimeout;
        for (Role role : this.roles) {
            runtimes.put(role, new RoleRuntime(role));
        }
    }

    /** This member. */
    public MemberId member() {
        return member;
    }

    /** The roles this member contends for. */
    public List<Role> roles() {
        return roles;
    }

    /** What this member is doing for {@code role}. */
    public MemberRoleState state(Role role) {
        RoleRuntime runtime = runtimes.get(role);
        if (runtime == null || !running) {
            return MemberRoleState.STOPPED;
        }
        return runtime.leadership != null ? MemberRoleState.LEADER : MemberRoleState.STANDBY;
    }

    /**
     * Why the cluster refuses this member {@code role}, while it does: the message of the
     * authorization failure that ended the member's last attempt. Empty once an attempt
     * gets through (or times out waiting for its turn) again.
     */
    public Optional<String> authorizationFailure(Role role) {
        RoleRuntime runtime = runtimes.get(role);
        return runtime == null || !running ? Optional.empty() : Optional.ofNullable(runtime.authorizationFailure);
    }

    /** The leadership this member holds for {@code role}, if any. */
    public Optional<Leadership> leadership(Role role) {
        RoleRuntime runtime = runtimes.get(role);
        return runtime == null ? Optional.empty() : Optional.ofNullable(runtime.leadership);
    }

    /**
     * Releases {@code role} if this member holds it: stops its work and writes the lease
     * tombstone. The member stays a contender and rejoins at the tail of the roster.
     *
     * @return whether a held role was released
     */
    public boolean release(Role role) {
        RoleRuntime runtime = runtimes.get(role);
        if (runtime == null) {
            throw new IllegalArgumentException("role " + role + " is not configured here; configured: " + roles);
        }
        synchronized (runtime) {
            if (runtime.leadership == null) {
                return false;
            }
            end(runtime, LeadershipEndCause.RELEASED);
            return true;
        }
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        watchdog = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "krabka-coordination-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        watchdog.scheduleWithFixedDelay(this::stopExpiredWork, WATCHDOG_TICK.toMillis(), WATCHDOG_TICK.toMillis(),
                TimeUnit.MILLISECONDS);
        for (RoleRuntime runtime : runtimes.values()) {
            Thread thread = new Thread(() -> run(runtime), "krabka-coordination-" + runtime.role);
            thread.setDaemon(true);
            runtime.thread = thread;
            thread.start();
        }
        log.info("Member {} contends for roles {}", member, roles);
    }

    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        watchdog.shutdownNow();
        for (RoleRuntime runtime : runtimes.values()) {
            Thread thread = runtime.thread;
            if (thread == null) {
                continue;
            }
            // A contender may be waiting in acquire: interrupt it. A holder waits at most
            // MAX_HOLD_WAIT before it sees the flag; do not interrupt a write in flight.
            if (runtime.leadership == null) {
                thread.interrupt();
            }
            try {
                thread.join(MAX_HOLD_WAIT.multipliedBy(3).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                thread.interrupt();
            }
        }
        for (RoleRuntime runtime : runtimes.values()) {
            synchronized (runtime) {
                Leadership held = runtime.leadership;
                boolean releasing = held != null && held.isActive();
                if (held != null) {
                    // Reports RELEASED, or how the work's own write ended it if the loop had not seen that yet.
                    end(runtime, LeadershipEndCause.RELEASED);
                }
                if (!releasing) {
                    // Releasing leaves the roster itself.
                    leaveRoster(runtime.role);
                }
            }
        }
        log.info("Member {} stopped contending for roles {}", member, roles);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Late in startup (after the beans that do the work), early in shutdown. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1000;
    }

    private void run(RoleRuntime runtime) {
        boolean reportedDenial = false;
        while (running) {
            try {
                if (runtime.leadership == null) {
                    contend(runtime);
                } else {
                    hold(runtime);
                }
                reportedDenial = false;
                runtime.authorizationFailure = null;
            } catch (InterruptedException e) {
                break;
            } catch (CoordinationAuthorizationException e) {
                runtime.authorizationFailure = e.getMessage();
                if (!reportedDenial && e instanceof CoordinationAuthenticationException) {
                    log.error("Member {} could not authenticate to the cluster while contending for role {}: {} "
                            + "Check the SASL credentials and TLS trust settings (spring.kafka.security.*, spring.kafka.ssl.*, "
                            + "spring.kafka.properties.sasl.*). It tries again every {} s and does not log this again "
                            + "until an attempt gets through", member, runtime.role, sentence(e.getMessage()),
                            DENIAL_BACKOFF.toSeconds());
                    reportedDenial = true;
                } else if (!reportedDenial) {
                    log.error("Member {} is not authorized to take role {}: {} A member of the role needs Write on TransactionalId:{} "
                            + "and Read, Write and DescribeConfigs on the coordination topic (Create too if it creates it). "
                            + "It tries again every {} s and does not log this again until an attempt gets through",
                            member, runtime.role, sentence(e.getMessage()), runtime.role, DENIAL_BACKOFF.toSeconds());
                    reportedDenial = true;
                }
                if (!pause(DENIAL_BACKOFF)) {
                    break;
                }
            } catch (RuntimeException e) {
                if (!running) {
                    break;
                }
                log.warn("Leadership loop of role {} failed; trying again in {}: {}", runtime.role, ERROR_BACKOFF, e.toString());
                if (!pause(ERROR_BACKOFF)) {
                    break;
                }
            }
        }
    }

    private void contend(RoleRuntime runtime) throws InterruptedException {
        long start = System.nanoTime();
        Leadership leadership;
        try {
            leadership = client.acquire(runtime.role, member, acquireTimeout);
        } catch (CoordinationTimeoutException notYet) {
            log.debug("Role {} not won yet: {}", runtime.role, notYet.getMessage());
            return;
        }
        synchronized (runtime) {
            if (!running) {
                leadership.close();
                return;
            }
            runtime.workStopped = false;
            runtime.leadership = leadership;
        }
        observer.granted(runtime.role, Duration.ofNanos(System.nanoTime() - start));
        log.info("Member {} holds role {} with {}", member, runtime.role, leadership.token());
        events.publishEvent(new LeadershipGrantedEvent(this, leadership));
        work.start(leadership);
    }

    private void hold(RoleRuntime runtime) {
        Leadership leadership = runtime.leadership;
        if (leadership == null) {
            return;
        }
        if (!leadership.isActive()) {
            // The role's work ended it with a write of its own (fenced, or the producer
            // failed) or closed it: say so, stop the work, and contend again.
            endUnlessReleased(runtime, leadership, causeOf(leadership.state()));
            return;
        }
        boolean retryDue = runtime.retryAt == null || !client.clock().instant().isBefore(runtime.retryAt);
        if (leadership.renewDue() && retryDue) {
            runtime.retryAt = null;
            long start = System.nanoTime();
            try {
                leadership.renew();
                observer.renewed(runtime.role, Duration.ofNanos(System.nanoTime() - start));
            } catch (FencedException fenced) {
                endUnlessReleased(runtime, leadership, LeadershipEndCause.FENCED);
                return;
            } catch (IllegalStateException ended) {
                if (leadership.isActive()) {
                    throw ended;
                }
                // Ended meanwhile by another thread: released by the endpoint or shutdown
                // (then this does nothing), or by the work, as above.
                endUnlessReleased(runtime, leadership, causeOf(leadership.state()));
                return;
            } catch (CoordinationException failed) {
                observer.renewFailed(runtime.role);
                if (!leadership.isActive()) {
                    log.warn("Role {} ended: {}", runtime.role, failed.getMessage());
                    endUnlessReleased(runtime, leadership, causeOf(leadership.state()));
                    return;
                }
                log.warn("Renewing role {} failed; trying again in {}: {}", runtime.role, RENEW_RETRY, failed.getMessage());
                runtime.retryAt = client.clock().instant().plus(RENEW_RETRY);
            }
        }
        if (leadership.expired()) {
            endUnlessReleased(runtime, leadership, LeadershipEndCause.EXPIRED);
            return;
        }
        Instant now = client.clock().instant();
        Instant next = leadership.renewAt();
        if (runtime.retryAt != null && runtime.retryAt.isAfter(next)) {
            next = runtime.retryAt;
        }
        Duration untilRenew = Duration.between(now, next);
        Duration wait = untilRenew.isNegative() ? Duration.ZERO : untilRenew.compareTo(MAX_HOLD_WAIT) < 0 ? untilRenew : MAX_HOLD_WAIT;
        RoleState state = client.awaitRoleState(runtime.role, wait);
        Decision decision = Succession.evaluate(state, member, true, client.config(), client.clock().instant());
        if (decision instanceof Decision.StepDown stepDown) {
            // A newer lease by another member was committed: its InitProducerId fenced us.
            log.info("Role {} was taken by {}", runtime.role, stepDown.newHolder());
            endUnlessReleased(runtime, leadership, LeadershipEndCause.FENCED);
        }
    }

    /**
     * A renewal can block on an unresponsive cluster for up to the operation timeout,
     * and with it the role's thread. Role-scoped work must still stop when the lease
     * deadline passes, so this watchdog stops it; the role's thread publishes the
     * EXPIRED event when it regains control.
     */
    private void stopExpiredWork() {
        for (RoleRuntime runtime : runtimes.values()) {
            Leadership leadership = runtime.leadership;
            if (leadership != null && !runtime.workStopped && leadership.expired()) {
                runtime.workStopped = true;
                log.warn("The lease of role {} passed its deadline while a renewal was still pending; stopping its work",
                        runtime.role);
                work.stop(runtime.role, workStopTimeout);
            }
        }
    }

    private static LeadershipEndCause causeOf(Leadership.State ended) {
        return switch (ended) {
            case FENCED -> LeadershipEndCause.FENCED;
            case FAILED -> LeadershipEndCause.FAILED;
            case RELEASED -> LeadershipEndCause.RELEASED;
            case ACTIVE -> throw new IllegalArgumentException("an active leadership has not ended");
        };
    }

    private void endUnlessReleased(RoleRuntime runtime, Leadership leadership, LeadershipEndCause cause) {
        synchronized (runtime) {
            if (runtime.leadership == leadership) {
                end(runtime, cause);
            }
        }
    }

    /** Stops the work first, then gives the leadership up the way {@code cause} says. Holds the runtime's lock. */
    private void end(RoleRuntime runtime, LeadershipEndCause seen) {
        Leadership leadership = runtime.leadership;
        // Another thread may have ended it first (a write of the work, or its close): that is the cause.
        LeadershipEndCause cause = leadership.isActive() ? seen : causeOf(leadership.state());
        // The token as it is now: its epoch moved with every transaction since the grant.
        FencingToken token = leadership.token();
        work.stop(runtime.role, workStopTimeout);
        try {
            if (cause == LeadershipEndCause.RELEASED) {
                leadership.close();
            } else {
                leadership.abandon();
            }
        } catch (RuntimeException e) {
            log.warn("Giving up role {} ({}) failed: {}", runtime.role, cause, e.toString());
        }
        runtime.leadership = null;
        runtime.retryAt = null;
        observer.ended(runtime.role, cause);
        log.info("Member {} no longer holds role {} ({}): {}", member, runtime.role, token, cause);
        events.publishEvent(new LeadershipFencedEvent(this, runtime.role, member, token, cause));
    }

    /** A standby that stops leaves the roster, so it adds no stagger to later failovers. */
    private void leaveRoster(Role role) {
        try {
            client.leave(role, member);
        } catch (RuntimeException e) {
            log.warn("Member {} could not leave the roster of role {}: {}", member, role, e.toString());
        }
    }

    private static String sentence(String text) {
        return text == null ? "(no reason given)." : text.endsWith(".") ? text : text + ".";
    }

    private static boolean pause(Duration duration) {
        try {
            TimeUnit.MILLISECONDS.sleep(duration.toMillis());
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    private static final class RoleRuntime {
        final Role role;
        volatile Leadership leadership;
        volatile Thread thread;
        volatile Instant retryAt;
        volatile boolean workStopped;
        volatile String authorizationFailure;

        RoleRuntime(Role role) {
            this.role = role;
        }
    }
}
