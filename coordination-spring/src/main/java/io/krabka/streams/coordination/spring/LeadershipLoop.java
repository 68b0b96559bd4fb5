package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.HandoverResult;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.RoleShare;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * The Spring side of contending: one core {@link Contender} per configured role, started
 * and stopped with the application context. Its listener starts and stops the role's
 * {@link OnLeadership} work, publishes {@link LeadershipGrantedEvent} and
 * {@link LeadershipEndedEvent}, and feeds the {@link CoordinationObserver}s. Every
 * election decision is the contender's.
 */
public final class LeadershipLoop implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LeadershipLoop.class);

    /**
     * Beyond stopping the work: time for the release, the listener and leaving the roster.
     * The transport's clients then close within about 1 s more, so a member is gone within
     * work-stop-timeout + 5 s even when the cluster does not answer (and inside
     * Kubernetes' 30 s grace with the defaults).
     */
    private static final Duration STOP_SLACK = Duration.ofMillis(2_500);

    /**
     * How long the end of a planned move waits at least for work that stopped before it:
     * the work returned already, and only has to leave its thread.
     */
    private static final Duration MOVED_WORK_GRACE = Duration.ofMillis(500);

    private final CoordinationClient client;
    private final MemberId member;
    private final List<Role> roles;
    private final OnLeadershipRegistry work;
    private final ApplicationEventPublisher events;
    private final CoordinationObserver observer;
    private final Duration workStopTimeout;
    private final boolean requireWork;
    private final Map<Role, Contender> contenders = new LinkedHashMap<>();
    // The planned moves under way: their work was stopped first, within its bound.
    private final Map<Role, Move> moves = new ConcurrentHashMap<>();
    private volatile boolean running;

    public LeadershipLoop(
            CoordinationClient client,
            MemberId member,
            List<Role> roles,
            OnLeadershipRegistry work,
            ApplicationEventPublisher events,
            CoordinationObserver observer,
            Duration workStopTimeout) {
        this(client, member, roles, work, events, observer, workStopTimeout, false);
    }

    /**
     * @param requireWork whether a role with no {@code @OnLeadership} or {@code @LeaderListener}
     *     work fails {@link #start()} instead of being reported with a WARN
     */
    public LeadershipLoop(
            CoordinationClient client,
            MemberId member,
            List<Role> roles,
            OnLeadershipRegistry work,
            ApplicationEventPublisher events,
            CoordinationObserver observer,
            Duration workStopTimeout,
            boolean requireWork) {
        this.requireWork = requireWork;
        this.client = client;
        this.member = member;
        this.roles = List.copyOf(roles);
        this.work = work;
        this.events = events;
        this.observer = observer;
        this.workStopTimeout = workStopTimeout;
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
        Contender contender = contenders.get(role);
        if (contender == null || !running) {
            return MemberRoleState.STOPPED;
        }
        return contender.leadership().isPresent() ? MemberRoleState.LEADER : MemberRoleState.STANDBY;
    }

    /**
     * The failure of the last cluster operation for {@code role}, while operations fail:
     * a {@link io.krabka.streams.coordination.CoordinationAuthorizationException} when the
     * cluster's ACLs refuse the role, another {@link CoordinationException} when it does
     * not answer.
     */
    public Optional<CoordinationException> problem(Role role) {
        Contender contender = contenders.get(role);
        return contender == null || !running ? Optional.empty() : contender.problem();
    }

    /** The leadership this member holds for {@code role}, if any. */
    public Optional<Leadership> leadership(Role role) {
        Contender contender = contenders.get(role);
        return contender == null ? Optional.empty() : contender.leadership();
    }

    /**
     * Releases {@code role} if this member holds it: the role's work is interrupted and
     * waited for (up to {@code work-stop-timeout}, then the release goes on without it),
     * the write in flight completes, a lease tombstone lets the next standby take over at
     * once, and the ended event is published before this returns. The member rejoins at
     * the tail of the roster.
     *
     * @return whether a held role was released by this call; false also while another move
     *     of the role is under way (the shutdown, or a release whose {@code Lifecycle.stop()}
     *     made this call), which lets it go
     */
    public boolean release(Role role) {
        return plannedMove(role, false, Contender::release);
    }

    /**
     * A planned move of {@code role} through {@code move}: its work stops first, the move is
     * made, the work then runs again or ends, and the move's ended event is published
     * before this returns.
     *
     * @param underWay the answer while another move of the role is under way, which lets it go
     */
    private <T> T plannedMove(Role role, T underWay, Function<Contender, T> move) {
        Contender contender = contenders.get(role);
        if (contender == null) {
            throw new IllegalArgumentException("role " + role + " is not configured here; configured: " + roles);
        }
        MoveStart start = stopWorkFirst(role, contender);
        if (start.underWay()) {
            return underWay;
        }
        T result;
        try {
            result = move.apply(contender);
        } finally {
            afterMove(role, start.held());
        }
        contender.awaitListener(workStopTimeout.plus(STOP_SLACK));
        return result;
    }

    /**
     * Before a planned move of {@code role}: stops its work, within {@code work-stop-timeout},
     * so no successor is granted while it runs.
     *
     * @return the leadership the move lets go, if this member holds the role, or that
     *     another move of that leadership is under way, which lets it go (this one must not)
     */
    private MoveStart stopWorkFirst(Role role, Contender contender) {
        long deadline = client.runtime().nanoTime() + workStopTimeout.toNanos();
        awaitGrantCallbacks(List.of(contender), deadline);
        Optional<Leadership> held = contender.leadership();
        if (held.isPresent()) {
            Move mine = new Move(held.get().term(), deadline);
            Move other = moves.putIfAbsent(role, mine);
            if (other != null && other.term() == mine.term()) {
                // Another move of this leadership is stopping its work (a release called from a
                // Lifecycle's stop(), which that move runs): stopping it again would call stop()
                // again, and so on. That move lets the role go.
                log.info(
                        "Role {} is being let go by a move already under way; this release or handover does nothing",
                        role);
                return new MoveStart(held, true);
            }
            if (other != null) {
                // A move of an earlier leadership, whose end did not clear it.
                moves.put(role, mine);
            }
            work.stopBeforeMove(List.of(role), left(deadline), client.runtime());
        }
        return new MoveStart(held, false);
    }

    /** How a planned move began: the leadership it lets go, or that another move of it is under way. */
    private record MoveStart(Optional<Leadership> held, boolean underWay) {}

    /**
     * Before a planned move: lets the listener calls issued so far run, within the move's
     * work bound. A leadership is visible ({@link #leadership}, {@link #state}) as soon as
     * it is granted, but its work is started by the grant's callback, which runs after
     * that on a callback thread: a move made in between would find no work of this
     * leadership to stop, and the work would then start while the role is let go.
     * From a callback itself this does not wait (the callbacks after it run only once it returns).
     */
    private void awaitGrantCallbacks(List<Contender> of, long deadline) {
        for (Contender contender : of) {
            contender.awaitListener(left(deadline));
        }
    }

    private Duration left(long deadline) {
        return RoleWork.left(deadline, client.runtime());
    }

    /** After a planned move of {@code role}: its work runs again if the member still holds the role, or ends. */
    private void afterMove(Role role, Optional<Leadership> held) {
        if (held.isEmpty()) {
            return;
        }
        if (held.get().isActive()) {
            moves.remove(role);
            work.resume(role);
        } else {
            work.moved(role);
        }
    }

    /**
     * Hands {@code role}, which this member holds, to {@code to}, a live standby of it: it
     * is made next in line, then the role is released, so it takes over within a graceful
     * handover's gap. The work stops first, as for {@link #release}, and the ended event is
     * published before this returns; when the role is not handed over after all (the
     * answer is not {@link HandoverResult#HANDED_OVER}) and this member still holds it, the
     * work runs again. While another move of the role is under way (see {@link #release})
     * this does nothing and answers {@link HandoverResult#NOT_HOLDING}.
     *
     * @throws IllegalArgumentException when the role is not configured here
     */
    public HandoverResult handOver(Role role, MemberId to) {
        return plannedMove(role, HandoverResult.NOT_HOLDING, contender -> contender.handOver(to));
    }

    /** How this member's roles are shared out with the other members', as its own reads show them. */
    public RoleShare share() {
        return client.share(member);
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        checkEveryRoleHasWork();
        work.preparePipelines();
        contenders.clear();
        for (Role role : roles) {
            contenders.put(role, new Contender(client, role, member, new RoleListener(role)));
        }
        running = true;
        contenders.values().forEach(Contender::start);
        log.info("Member {} contends for roles {}", member, roles);
    }

    /**
     * A role in the list that nothing works for would be held, renewed and reported healthy
     * while it does nothing: most often a typo in {@code krabka.coordination.roles}.
     */
    private void checkEveryRoleHasWork() {
        List<Role> idle = roles.stream().filter(work::idle).toList();
        if (idle.isEmpty()) {
            return;
        }
        String named = idle.size() <= 10
                ? idle.toString()
                : idle.subList(0, 10).toString().replace("]", ", … " + (idle.size() - 10) + " more]");
        String message = "Member " + member + " contends for " + (idle.size() == 1 ? "role " : "roles ") + named
                + " of krabka.coordination.roles, but no @OnLeadership or @LeaderListener works for "
                + (idle.size() == 1 ? "it" : "them") + ": it would hold " + (idle.size() == 1 ? "it" : "them")
                + " and do nothing there (a typo in the role list, or work that only listens for LeadershipGrantedEvent)";
        if (requireWork) {
            throw new IllegalStateException(
                    message + "; krabka.coordination.require-work=true makes this a startup failure");
        }
        log.warn("{}; set krabka.coordination.require-work=true to make this a startup failure", message);
    }

    /**
     * Stops every role at once, so stopping many takes about one work-stop-timeout, not one
     * per role. The work of the roles held stops first, within {@code work-stop-timeout},
     * and only then are the roles released.
     */
    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        long now = client.runtime().nanoTime();
        long deadline = now + workStopTimeout.plus(STOP_SLACK).toNanos();
        long workDeadline = now + workStopTimeout.toNanos();
        awaitGrantCallbacks(List.copyOf(contenders.values()), workDeadline);
        List<Role> held = new ArrayList<>();
        contenders.forEach((role, contender) -> contender.leadership().ifPresent(leadership -> {
            moves.put(role, new Move(leadership.term(), workDeadline));
            held.add(role);
        }));
        try {
            if (!held.isEmpty()) {
                work.stopBeforeMove(held, left(workDeadline), client.runtime());
            }
            contenders.values().forEach(Contender::stop);
            for (Contender contender : contenders.values()) {
                contender.awaitStopped(left(deadline));
            }
        } finally {
            held.forEach(work::moved);
            moves.clear();
        }
        running = false;
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

    /** A planned move of a role: the term it lets go, and when its work's stop bound runs out (ticker nanos). */
    private record Move(long term, long deadline) {}

    /** One role's work, events and meters, driven by its contender. */
    private final class RoleListener implements Contender.Listener {
        private final Role role;
        private volatile long contendingSince = client.runtime().nanoTime();

        RoleListener(Role role) {
            this.role = role;
        }

        @Override
        public void granted(Leadership leadership) throws Exception {
            observer.granted(role, Duration.ofNanos(client.runtime().nanoTime() - contendingSince));
            events.publishEvent(new LeadershipGrantedEvent(LeadershipLoop.this, leadership));
            if (!leadership.isActive()) {
                // A listener of the event released or handed the role over (or it was fenced meanwhile): the
                // work of an ended leadership never starts; it would run beside the successor's.
                return;
            }
            work.start(
                    leadership,
                    Objects.requireNonNull(contenders.get(role), "the contender of a granted role"),
                    client.runtime(),
                    workStopTimeout);
        }

        @Override
        public void ended(Leadership leadership, LeadershipEndCause cause, @Nullable Throwable failure) {
            // Work held for a planned move returns now; work that was stopped before the move had its bound.
            work.moved(role);
            Duration bound = workStopTimeout;
            Move move = moves.get(role);
            if (move != null && move.term() == leadership.term()) {
                moves.remove(role, move);
                long left = move.deadline() - client.runtime().nanoTime();
                bound = left > MOVED_WORK_GRACE.toNanos() ? Duration.ofNanos(left) : MOVED_WORK_GRACE;
            }
            work.stop(role, bound, client.runtime());
            contendingSince = client.runtime().nanoTime();
            observer.ended(role, cause);
            events.publishEvent(
                    new LeadershipEndedEvent(LeadershipLoop.this, role, member, leadership.token(), cause, failure));
        }

        @Override
        public void renewed(Leadership leadership, Duration took) {
            observer.renewed(role, took);
        }

        @Override
        public void renewFailed(Leadership leadership, CoordinationException failure) {
            observer.renewFailed(role);
        }
    }
}
