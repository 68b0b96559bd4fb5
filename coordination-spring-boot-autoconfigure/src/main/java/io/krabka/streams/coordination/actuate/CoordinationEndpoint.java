package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.client.RoleShare;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/coordination}: this member and, per configured role, who holds it
 * (from {@link CoordinationClient#describe(java.util.Collection)}), whether the holder
 * still holds the epoch, the token, the lease times, this member's state and the roster
 * with ranks.
 *
 * <p>The configured roles are described together: one describe of their epochs and one
 * read per partition of the coordination topic, however many roles there are. It answers
 * within {@link #ANSWER_WITHIN} whatever the cluster does: when that describe has not
 * returned by then, every role is reported with a {@code problem}, a role this member
 * holds with what its own leadership knows (holder, term, lease times) and the others
 * with this member's state alone; the describe still running is reused by the next
 * request rather than started again.
 *
 * <p>Anyone who can reach it may ask for any role name, so what a flood of names can make
 * the member do is bounded, and leaves nothing behind once answered: at most
 * {@value #DESCRIBE_THREADS} describes of names it does not contend for run at once (each
 * one DescribeTransactions and a read of the name's partition, from the start for a name
 * not described lately) and {@value #DESCRIBES_QUEUED} more wait; further names are
 * answered at once with a {@code problem} ("ask again later"). The answers are kept for
 * {@link #OTHER_ROLE_FRESH}, {@value #OTHER_ROLES_CACHED} at most, and the client keeps a
 * describe fold for at most 4 096 names, least recently described first out. This
 * member's own roles are described on threads of their own, one describe per role at a
 * time, so no flood of other names delays or refuses them.
 */
@Endpoint(id = "coordination")
public class CoordinationEndpoint implements DisposableBean {

    /** How long a request waits for the cluster before it answers without it. */
    static final Duration ANSWER_WITHIN = Duration.ofSeconds(2);
    private static final String NO_ANSWER = "the cluster did not answer within " + ANSWER_WITHIN.toSeconds() + " s";

    private final CoordinationClient client;
    private final LeadershipLoop loop;
    private final Show showDetails;
    private final Set<String> roles;
    private final Map<Role, CompletableFuture<LeadershipStatus>> describing = new ConcurrentHashMap<>();
    // The describe of every configured role under way, if any; requests share it.
    private final AtomicReference<CompletableFuture<Map<Role, LeadershipStatus>>> describingAll = new AtomicReference<>();
    // Answers for roles this member does not contend for, newest last: at most
    // OTHER_ROLES_CACHED of them, each reused for OTHER_ROLE_FRESH. Guarded by itself.
    private final LinkedHashMap<Role, Answer> otherRoles = new LinkedHashMap<>(16, 0.75f, true);
    /**
     * Describes of roles this member does not contend for: a few threads and a short
     * queue, so a flood of requests for role names (each new one reads its partition) is
     * refused with a problem, never a thread or a fold per name.
     */
    private final ThreadPoolExecutor describer = describer(new ArrayBlockingQueue<>(DESCRIBES_QUEUED));
    /**
     * Describes of this member's own roles, apart from the others: a flood of names
     * cannot delay them. Its queue needs no bound of its own: at most one describe of each
     * configured role, and one of all of them, is under way at a time.
     */
    private final ThreadPoolExecutor ownDescriber = describer(new LinkedBlockingQueue<>());
    /** When the answers' ages are measured. */
    private final LongSupplier ticker;

    /** How many describes of roles this member does not contend for run at once, and how many more may wait. */
    public static final int DESCRIBE_THREADS = 2;
    public static final int DESCRIBES_QUEUED = 16;
    /** How many answers for roles this member does not contend for are kept, and for how long. */
    public static final int OTHER_ROLES_CACHED = 256;
    static final Duration OTHER_ROLE_FRESH = Duration.ofSeconds(5);

    private record Answer(LeadershipStatus status, long atNanos) {
    }

    /**
     * An endpoint.
     *
     * @param showDetails when the roster, registration times, producer ids and epochs and
     *     the transaction state are shown; the holder, {@code current}, the term and the
     *     lease times always are
     * @param roles the roles that make a user authorized, for {@link Show#WHEN_AUTHORIZED};
     *     empty means any authenticated user
     */
    public CoordinationEndpoint(CoordinationClient client, LeadershipLoop loop, Show showDetails, Set<String> roles) {
        this.client = client;
        this.loop = loop;
        this.showDetails = showDetails;
        this.roles = Set.copyOf(roles);
        this.ticker = client.runtime()::nanoTime;
    }

    private static ThreadPoolExecutor describer(BlockingQueue<Runnable> queue) {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(DESCRIBE_THREADS, DESCRIBE_THREADS, 30, TimeUnit.SECONDS, queue,
                task -> {
                    Thread thread = new Thread(task, "krabka-coordination-endpoint");
                    thread.setDaemon(true);
                    return thread;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    @ReadOperation
    public CoordinationReport coordination(SecurityContext securityContext) {
        boolean details = showDetails.isShown(securityContext, roles);
        long deadline = ticker.getAsLong() + ANSWER_WITHIN.toNanos();
        CompletableFuture<Map<Role, LeadershipStatus>> call = describeAll();
        Map<Role, LeadershipStatus> statuses = null;
        String problem = null;
        try {
            statuses = call.get(Math.max(0, deadline - ticker.getAsLong()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            problem = NO_ANSWER;
        } catch (ExecutionException e) {
            problem = e.getCause().getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem = "interrupted";
        }
        Map<String, RoleReport> reports = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            LeadershipStatus status = statuses == null ? null : statuses.get(role);
            reports.put(role.name(), status != null ? report(role, status, details)
                    : withoutCluster(role, problem != null ? problem : "the cluster did not describe the role", details));
        }
        return new CoordinationReport(loop.member().value(), ShareReport.of(loop.share()), reports);
    }

    /**
     * One role: any role of the coordination topic, not only those this member contends
     * for (operators look roles up from any member). A role nobody ever registered for or
     * held, or a name that is not a valid role, answers 404.
     */
    @ReadOperation
    @Nullable
    public RoleReport role(SecurityContext securityContext, @Selector String role) {
        Role target;
        try {
            target = Role.of(role);
        } catch (IllegalArgumentException notARole) {
            return null;
        }
        boolean details = showDetails.isShown(securityContext, roles);
        long deadline = ticker.getAsLong() + ANSWER_WITHIN.toNanos();
        CompletableFuture<LeadershipStatus> call = describe(target);
        RoleReport report = report(target, call, deadline, details);
        if (loop.roles().contains(target) || report.problem() != null) {
            return report;
        }
        LeadershipStatus status = call.getNow(null);
        boolean known = status != null
                && (status.lease().isPresent() || !status.roster().isEmpty() || status.coordinator().isPresent());
        return known ? report : null;
    }

    private CompletableFuture<Map<Role, LeadershipStatus>> describeAll() {
        while (true) {
            CompletableFuture<Map<Role, LeadershipStatus>> running = describingAll.get();
            if (running != null) {
                return running;
            }
            CompletableFuture<Map<Role, LeadershipStatus>> call = new CompletableFuture<>();
            if (describingAll.compareAndSet(null, call)) {
                call.whenComplete((statuses, failure) -> describingAll.compareAndSet(call, null));
                try {
                    ownDescriber.execute(() -> {
                        try {
                            call.complete(client.describe(loop.roles()));
                        } catch (Throwable failure) {
                            call.completeExceptionally(failure);
                        }
                    });
                } catch (RejectedExecutionException shutDown) {
                    call.completeExceptionally(shutDown);
                }
                return call;
            }
        }
    }

    /**
     * A configured role while the cluster's view is missing: what this member's own
     * leadership knows when it holds the role (it wrote the newest lease it knows of),
     * this member's state alone otherwise. {@code current} stays false: only the
     * coordinator can say the epoch is still this member's.
     */
    private RoleReport withoutCluster(Role role, String problem, boolean details) {
        String state = state(role);
        Leadership own = loop.leadership(role).filter(Leadership::isActive).orElse(null);
        FencingToken token = own == null ? FencingToken.NO_EPOCH : own.token();
        if (!token.isMinted()) {
            return RoleReport.unavailable(state, problem);
        }
        return new RoleReport(own.member().value(), false, TokenReport.of(token, details), own.grantedAt(), own.deadline(),
                state, null, null, null, problem + "; holder, token and lease times are this member's own");
    }

    /**
     * One role's status: a configured role's from the client's own view; another role's
     * from the describe reader the contenders do not use, reused for
     * {@link #OTHER_ROLE_FRESH}, so a dashboard polling a role costs the cluster one
     * describe per five seconds however often it asks.
     */
    private CompletableFuture<LeadershipStatus> describe(Role role) {
        boolean configured = loop.roles().contains(role);
        if (!configured) {
            synchronized (otherRoles) {
                Answer cached = otherRoles.get(role);
                if (cached != null && ticker.getAsLong() - cached.atNanos() < OTHER_ROLE_FRESH.toNanos()) {
                    return CompletableFuture.completedFuture(cached.status());
                }
            }
        }
        // Not computeIfAbsent: completing the call removes it from the map, and a call
        // refused at once completes on this thread, which must not be inside the map then.
        CompletableFuture<LeadershipStatus> call = new CompletableFuture<>();
        CompletableFuture<LeadershipStatus> running = describing.putIfAbsent(role, call);
        if (running != null) {
            return running;
        }
        call.whenComplete((status, failure) -> {
            describing.remove(role, call);
            if (status != null && !configured) {
                remember(role, status);
            }
        });
        try {
            (configured ? ownDescriber : describer).execute(() -> {
                try {
                    call.complete(configured ? client.describe(role) : client.describe(List.of(role)).get(role));
                } catch (Throwable failure) {
                    call.completeExceptionally(failure);
                }
            });
        } catch (RejectedExecutionException busy) {
            call.completeExceptionally(new IllegalStateException(describer.isShutdown() ? "the endpoint is closed"
                    : "this member is describing " + DESCRIBE_THREADS + " roles it does not contend for and "
                            + DESCRIBES_QUEUED + " more wait; ask again later"));
        }
        return call;
    }

    private void remember(Role role, LeadershipStatus status) {
        synchronized (otherRoles) {
            otherRoles.put(role, new Answer(status, ticker.getAsLong()));
            if (otherRoles.size() > OTHER_ROLES_CACHED) {
                Role eldest = otherRoles.keySet().iterator().next();
                otherRoles.remove(eldest);
            }
        }
    }

    /**
     * How many single-role describes are under way or waiting now: at most one per
     * configured role plus {@value #DESCRIBE_THREADS} + {@value #DESCRIBES_QUEUED} for other
     * names, and none once they are answered.
     */
    public int describesUnderway() {
        return describing.size();
    }

    /** How many answers for roles this member does not contend for are kept now (at most {@value #OTHER_ROLES_CACHED}). */
    public int cachedOtherRoles() {
        synchronized (otherRoles) {
            return otherRoles.size();
        }
    }

    private RoleReport report(Role role, CompletableFuture<LeadershipStatus> call, long deadlineNanos, boolean details) {
        try {
            return report(role, call.get(Math.max(0, deadlineNanos - ticker.getAsLong()), TimeUnit.NANOSECONDS), details);
        } catch (TimeoutException e) {
            return withoutCluster(role, NO_ANSWER, details);
        } catch (ExecutionException e) {
            return withoutCluster(role, e.getCause().getMessage(), details);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return withoutCluster(role, "interrupted", details);
        }
    }

    /** This member's state for {@code role}: leader, standby, stopped, or not-configured. */
    private String state(Role role) {
        return loop.roles().contains(role) ? loop.state(role).name().toLowerCase(Locale.ROOT) : "not-configured";
    }

    @Override
    public void destroy() {
        describer.shutdownNow();
        ownDescriber.shutdownNow();
    }

    private RoleReport report(Role role, LeadershipStatus status, boolean details) {
        FencingToken token = status.token();
        List<RosterMember> roster = !details ? null : status.roster().stream()
                .map(m -> new RosterMember(m.member().value(), m.holder() ? null : m.rank(), m.holder(), m.registeredAt()))
                .toList();
        ProducerState coordinator = status.coordinator().orElse(null);
        return new RoleReport(
                status.holder().map(Object::toString).orElse(null),
                status.current(),
                token.isMinted() ? TokenReport.of(token, details) : null,
                status.grantedAt().orElse(null),
                status.deadline().orElse(null),
                state(role),
                roster,
                coordinator == null || !details ? null : coordinator.state(),
                status.lease().map(l -> TokenReport.of(l.token(), details)).orElse(null),
                null);
    }

    /**
     * The whole report.
     *
     * @param share how this member's roles are shared out with the other members'
     */
    public record CoordinationReport(String member, ShareReport share, Map<String, RoleReport> roles) {
    }

    /**
     * This member's share of its roles, as its own reads show them.
     *
     * @param balance none or spread
     * @param held how many of its roles it holds
     * @param fairShare the most one live member holds in an even share
     * @param liveMembers how many members it counts as alive among those contending for its roles
     * @param moves how many roles it handed over on its own to even out the shares
     */
    public record ShareReport(String balance, int held, int fairShare, int liveMembers, long moves) {

        static ShareReport of(RoleShare share) {
            return new ShareReport(share.balance().name().toLowerCase(Locale.ROOT), share.held(), share.fairShare(),
                    share.liveMembers(), share.movesOut());
        }
    }

    /**
     * One role.
     *
     * @param holder the member the newest lease names, or null
     * @param current whether that member still holds the role's newest epoch
     * @param token the term (compare these) and the epoch the coordinator reports, or null
     * @param grantedAt when the holder's leadership began, on its clock
     * @param deadline the holder's lease deadline, on its clock
     * @param state this member's state: leader, standby, stopped, or not-configured for a
     *     role it does not contend for
     * @param roster the registered members in registration order; null when details are hidden
     * @param transactionState the transaction coordinator's state for the role; null when
     *     details are hidden
     * @param leaseToken the token the newest lease record carries; equal to {@code token}
     *     exactly when {@code current}
     * @param problem why the cluster's view is missing (it did not answer in time, or
     *     refused); null when the report is complete
     */
    public record RoleReport(String holder, boolean current, TokenReport token, Instant grantedAt, Instant deadline,
            String state, List<RosterMember> roster, String transactionState, TokenReport leaseToken, String problem) {

        static RoleReport unavailable(String state, String problem) {
            return new RoleReport(null, false, null, null, null, state, null, null, null, problem);
        }
    }

    /**
     * A fencing token.
     *
     * @param term the grant order; always shown
     * @param producerId the producer id, or null when details are hidden
     * @param producerEpoch the producer epoch, or null when details are hidden
     */
    public record TokenReport(long term, Long producerId, Short producerEpoch) {

        static TokenReport of(FencingToken token, boolean details) {
            return details ? new TokenReport(token.term(), token.producerId(), token.producerEpoch())
                    : new TokenReport(token.term(), null, null);
        }
    }

    /**
     * A registered member.
     *
     * @param rank its rank among the standbys (0 challenges first); null for the holder
     */
    public record RosterMember(String member, Integer rank, boolean holder, Instant registeredAt) {
    }


}
