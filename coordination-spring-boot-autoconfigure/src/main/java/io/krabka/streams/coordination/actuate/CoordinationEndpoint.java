package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.client.RoleShare;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
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
 * <p>It answers at once, from what the member already knows: its own state for each role
 * and the last cluster-wide view of its roles, with that view's age
 * ({@link ClusterViewReport}). A request that finds the view {@code clusterViewMaxAge} old
 * or older starts one read of it in the background and does not wait for it; one read at
 * a time runs, on a thread of the endpoint's own, however many requests come. The
 * configured roles are read together: one describe of their epochs and one read per
 * partition of the coordination topic, however many roles there are. A read that has not
 * returned within {@link #ANSWER_WITHIN} makes every role report a {@code problem}, as does
 * one that failed, until a read returns. What the member knows of itself is never older
 * than the request: a role it holds under a newer term than the view shows is reported
 * with its own holder, term and lease times, and one it no longer holds is not
 * {@code current}.
 *
 * <p>Anyone who can reach it may ask for any role name, so what a flood of names can make
 * the member do is bounded, and leaves nothing behind once answered: at most
 * {@value #DESCRIBE_THREADS} describes of names it does not contend for run at once (each
 * one DescribeTransactions and a read of the name's partition, from the start for a name
 * not described lately) and {@value #DESCRIBES_QUEUED} more wait; further names are
 * answered at once with a {@code problem} ("ask again later"). Such a name's answer waits
 * for its describe, at most {@link #ANSWER_WITHIN}, and is kept for
 * {@link #OTHER_ROLE_FRESH}, {@value #OTHER_ROLES_CACHED} at most; the client keeps a
 * describe fold for at most 4 096 names, least recently described first out. This member's
 * own roles are read apart from those, so no flood of other names delays or refuses them.
 */
@Endpoint(id = "coordination")
public class CoordinationEndpoint implements DisposableBean {

    /** How long a read of the cluster may take before the answers say it did not answer. */
    static final Duration ANSWER_WITHIN = Duration.ofSeconds(2);

    private static final String NO_ANSWER = "the cluster did not answer within " + ANSWER_WITHIN.toSeconds() + " s";
    /** How old the cluster's view of this member's roles may get before a request reads it again, by default. */
    public static final Duration DEFAULT_CLUSTER_VIEW_MAX_AGE = Duration.ofSeconds(1);

    private final CoordinationClient client;
    private final LeadershipLoop loop;
    private final Show showDetails;
    private final Set<String> roles;
    private final Map<Role, CompletableFuture<Answer>> describing = new ConcurrentHashMap<>();
    // Answers for roles this member does not contend for, newest last: at most
    // OTHER_ROLES_CACHED of them, each reused for OTHER_ROLE_FRESH. Guarded by itself.
    private final LinkedHashMap<Role, Answer> otherRoles = new LinkedHashMap<>(16, 0.75f, true);
    /**
     * Describes of roles this member does not contend for: a few threads and a short
     * queue, so a flood of requests for role names (each new one reads its partition) is
     * refused with a problem, never a thread or a fold per name.
     */
    private final ThreadPoolExecutor describer = executor(DESCRIBE_THREADS, new ArrayBlockingQueue<>(DESCRIBES_QUEUED));
    /**
     * Reads of this member's own roles, apart from the others: a flood of names cannot
     * delay them. One thread and no bound of its own: the view runs one read at a time.
     */
    private final ThreadPoolExecutor viewReader = executor(1, new LinkedBlockingQueue<>());
    /** The cluster's view of this member's roles. */
    private final ClusterView view;
    /** When the answers' ages are measured. */
    private final LongSupplier ticker;

    private volatile StartupFencingProbe probe;
    /** Where a member answers HTTP, as it advertises itself (routing to the holder); nothing by default. */
    private volatile Function<MemberId, Optional<String>> urls = member -> Optional.empty();

    /** How many describes of roles this member does not contend for run at once, and how many more may wait. */
    public static final int DESCRIBE_THREADS = 2;

    public static final int DESCRIBES_QUEUED = 16;
    /** How many answers for roles this member does not contend for are kept, and for how long. */
    public static final int OTHER_ROLES_CACHED = 256;

    static final Duration OTHER_ROLE_FRESH = Duration.ofSeconds(5);

    /** A describe of a role this member does not contend for, begun at {@code asOf} ({@code atNanos} on the ticker). */
    private record Answer(LeadershipStatus status, Instant asOf, long atNanos) {}

    /**
     * An endpoint whose cluster view is read again once it is
     * {@link #DEFAULT_CLUSTER_VIEW_MAX_AGE} old.
     *
     * @param showDetails when the roster, registration times, producer ids and epochs and
     *     the transaction state are shown; the holder, {@code current}, the term and the
     *     lease times always are
     * @param roles the roles that make a user authorized, for {@link Show#WHEN_AUTHORIZED};
     *     empty means any authenticated user
     */
    public CoordinationEndpoint(CoordinationClient client, LeadershipLoop loop, Show showDetails, Set<String> roles) {
        this(client, loop, showDetails, roles, DEFAULT_CLUSTER_VIEW_MAX_AGE);
    }

    /**
     * An endpoint.
     *
     * @param showDetails when the roster, registration times, producer ids and epochs and
     *     the transaction state are shown; the holder, {@code current}, the term and the
     *     lease times always are
     * @param roles the roles that make a user authorized, for {@link Show#WHEN_AUTHORIZED};
     *     empty means any authenticated user
     * @param clusterViewMaxAge how old the cluster's view of this member's roles may get
     *     before a request starts reading it again; zero reads it again on every request
     *     that finds no read under way
     * @throws IllegalArgumentException when {@code clusterViewMaxAge} is negative
     */
    public CoordinationEndpoint(
            CoordinationClient client,
            LeadershipLoop loop,
            Show showDetails,
            Set<String> roles,
            Duration clusterViewMaxAge) {
        if (clusterViewMaxAge.isNegative()) {
            throw new IllegalArgumentException("clusterViewMaxAge must not be negative: " + clusterViewMaxAge);
        }
        this.client = client;
        this.loop = loop;
        this.showDetails = showDetails;
        this.roles = Set.copyOf(roles);
        this.ticker = client.runtime()::nanoTime;
        this.view = new ClusterView(
                () -> client.describe(loop.roles()),
                viewReader,
                ticker,
                client.clock(),
                clusterViewMaxAge,
                ANSWER_WITHIN);
    }

    /**
     * Shows each holder's advertised URL ({@code holderUrl}), looked up with {@code urls}:
     * the starter passes the member addresses when routing is on.
     */
    public void showHolderUrls(Function<MemberId, Optional<String>> urls) {
        this.urls = java.util.Objects.requireNonNull(urls, "urls");
    }

    private RoleReport withUrl(RoleReport report) {
        if (report == null || report.holder() == null) {
            return report;
        }
        String url;
        try {
            url = urls.apply(MemberId.of(report.holder())).orElse(null);
        } catch (IllegalArgumentException notAMember) {
            url = null;
        }
        return url == null ? report : report.withHolderUrl(url);
    }

    private static ThreadPoolExecutor executor(int threads, BlockingQueue<Runnable> queue) {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, queue, task -> {
            Thread thread = new Thread(task, "krabka-coordination-endpoint");
            thread.setDaemon(true);
            return thread;
        });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Shows what {@code startupProbe} found in the report. */
    public CoordinationEndpoint withProbe(StartupFencingProbe startupProbe) {
        this.probe = startupProbe;
        return this;
    }

    /** Every configured role, from what this member knows now and the last cluster view; never waits for the cluster. */
    @ReadOperation
    public CoordinationReport coordination(SecurityContext securityContext) {
        boolean details = showDetails.isShown(securityContext, roles);
        ClusterView.Seen seen = view.now();
        Map<String, RoleReport> reports = new LinkedHashMap<>();
        for (Role role : loop.roles()) {
            reports.put(role.name(), withUrl(configured(role, seen, details)));
        }
        return new CoordinationReport(
                loop.member().value(),
                ShareReport.of(loop.share()),
                reports,
                ClusterViewReport.of(seen),
                probe == null
                        ? null
                        : details ? probe.outcome() : probe.outcome().summary());
    }

    /**
     * One role: any role of the coordination topic, not only those this member contends
     * for (operators look roles up from any member). A configured role answers at once, as
     * in {@link #coordination}; another waits for its describe, at most
     * {@link #ANSWER_WITHIN}. A role nobody ever registered for or held, or a name that is
     * not a valid role, is null (over HTTP, a 404 with a problem detail:
     * {@link CoordinationEndpointWebExtension#role}).
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
        if (loop.roles().contains(target)) {
            return withUrl(configured(target, view.now(), details));
        }
        long deadline = ticker.getAsLong() + ANSWER_WITHIN.toNanos();
        Answer answer;
        try {
            answer = describe(target).get(Math.max(0, deadline - ticker.getAsLong()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return RoleReport.unavailable(state(target), NO_ANSWER);
        } catch (ExecutionException e) {
            return RoleReport.unavailable(state(target), e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RoleReport.unavailable(state(target), "interrupted");
        }
        LeadershipStatus status = answer.status();
        boolean known = status.lease().isPresent()
                || !status.roster().isEmpty()
                || status.coordinator().isPresent();
        if (!known) {
            return null;
        }
        long ageMillis = Math.max(
                0, Duration.ofNanos(ticker.getAsLong() - answer.atNanos()).toMillis());
        return withUrl(report(target, status, details, false, null, answer.asOf(), ageMillis));
    }

    /**
     * A configured role: the cluster's view as {@code seen}, corrected by what this member
     * knows now of itself.
     */
    private RoleReport configured(Role role, ClusterView.Seen seen, boolean details) {
        ClusterView.Snapshot snapshot = seen.snapshot();
        LeadershipStatus status = snapshot == null ? null : snapshot.statuses().get(role);
        Leadership own = loop.leadership(role).filter(Leadership::isActive).orElse(null);
        String problem = seen.problem();
        if (status == null) {
            String why = problem != null
                    ? problem
                    : snapshot != null
                            ? "the cluster did not describe the role"
                            : "no read of the cluster has returned yet; ask again shortly";
            return withoutCluster(role, own, why, details);
        }
        Long ageMillis = seen.ageMillis();
        long viewTerm = status.lease().map(lease -> lease.token().term()).orElse(0L);
        if (own != null && own.token().isMinted() && own.term() > viewTerm) {
            // Granted since the view was read: its own lease is the newest there is.
            String why = "this member holds the role under term " + own.term() + ", newer than the cluster's view of "
                    + ageMillis + " ms ago shows; holder, token and lease times are its own";
            return new RoleReport(
                    own.member().value(),
                    false,
                    TokenReport.of(own.token(), details),
                    own.grantedAt(),
                    own.deadline(),
                    state(role),
                    roster(status, details),
                    null,
                    null,
                    problem == null ? why : problem + "; " + why,
                    snapshot.asOf(),
                    ageMillis);
        }
        boolean viewedAsHolder = status.holder().filter(loop.member()::equals).isPresent();
        if (viewedAsHolder && (own == null || own.term() != viewTerm)) {
            String why = "this member no longer holds the term " + viewTerm + " the cluster's view of " + ageMillis
                    + " ms ago shows it holding";
            return report(
                    role,
                    status,
                    details,
                    true,
                    problem == null ? why : problem + "; " + why,
                    snapshot.asOf(),
                    ageMillis);
        }
        return report(role, status, details, problem != null, problem, snapshot.asOf(), ageMillis);
    }

    /**
     * A configured role while the cluster's view of it is missing: what this member's own
     * leadership knows when it holds the role (it wrote the newest lease it knows of),
     * this member's state alone otherwise. {@code current} stays false: only the
     * coordinator can say the epoch is still this member's.
     */
    private RoleReport withoutCluster(Role role, @Nullable Leadership own, String problem, boolean details) {
        String state = state(role);
        FencingToken token = own == null ? FencingToken.NO_EPOCH : own.token();
        if (!token.isMinted()) {
            return RoleReport.unavailable(state, problem);
        }
        return new RoleReport(
                own.member().value(),
                false,
                TokenReport.of(token, details),
                own.grantedAt(),
                own.deadline(),
                state,
                null,
                null,
                null,
                problem + "; holder, token and lease times are this member's own",
                null,
                null);
    }

    /**
     * A role this member does not contend for, from the describe reader the contenders do
     * not use, reused for {@link #OTHER_ROLE_FRESH}, so a dashboard polling a role costs the
     * cluster one describe per five seconds however often it asks.
     */
    private CompletableFuture<Answer> describe(Role role) {
        synchronized (otherRoles) {
            Answer cached = otherRoles.get(role);
            if (cached != null && ticker.getAsLong() - cached.atNanos() < OTHER_ROLE_FRESH.toNanos()) {
                return CompletableFuture.completedFuture(cached);
            }
        }
        // Not computeIfAbsent: completing the call removes it from the map, and a call
        // refused at once completes on this thread, which must not be inside the map then.
        CompletableFuture<Answer> call = new CompletableFuture<>();
        CompletableFuture<Answer> running = describing.putIfAbsent(role, call);
        if (running != null) {
            return running;
        }
        call.whenComplete((answer, failure) -> {
            describing.remove(role, call);
            if (answer != null) {
                remember(role, answer);
            }
        });
        try {
            describer.execute(() -> {
                try {
                    Instant asOf = client.clock().instant().truncatedTo(ChronoUnit.MILLIS);
                    long atNanos = ticker.getAsLong();
                    call.complete(new Answer(client.describe(List.of(role)).get(role), asOf, atNanos));
                } catch (Throwable failure) {
                    call.completeExceptionally(failure);
                }
            });
        } catch (RejectedExecutionException busy) {
            call.completeExceptionally(new IllegalStateException(
                    describer.isShutdown()
                            ? "the endpoint is closed"
                            : "this member is describing " + DESCRIBE_THREADS + " roles it does not contend for and "
                                    + DESCRIBES_QUEUED + " more wait; ask again later"));
        }
        return call;
    }

    private void remember(Role role, Answer answer) {
        synchronized (otherRoles) {
            otherRoles.put(role, answer);
            if (otherRoles.size() > OTHER_ROLES_CACHED) {
                Role eldest = otherRoles.keySet().iterator().next();
                otherRoles.remove(eldest);
            }
        }
    }

    /**
     * How many describes of roles this member does not contend for are under way or
     * waiting now: at most {@value #DESCRIBE_THREADS} + {@value #DESCRIBES_QUEUED}, and none
     * once they are answered.
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

    /** This member's state for {@code role}: leader, standby, stopped, or not-configured. */
    private String state(Role role) {
        return loop.roles().contains(role) ? loop.state(role).name().toLowerCase(Locale.ROOT) : "not-configured";
    }

    @Override
    public void destroy() {
        describer.shutdownNow();
        viewReader.shutdownNow();
    }

    /**
     * A role as {@code status} shows it.
     *
     * @param unconfirmed whether {@code current} is false whatever the status says: the view
     *     has a problem, or this member knows it is out of date
     */
    private RoleReport report(
            Role role,
            LeadershipStatus status,
            boolean details,
            boolean unconfirmed,
            @Nullable String problem,
            Instant asOf,
            Long ageMillis) {
        FencingToken token = status.token();
        ProducerState coordinator = status.coordinator().orElse(null);
        // The epoch alone stays current until someone challenges it: a holder whose lease
        // ran out (and that ended its leadership) is not current, though nobody has yet.
        // Judged as of the view, not now: the view may be older than a renew interval (the
        // endpoint answers with the last one while it reads again), and the holder renewed
        // since. A live holder renews well before its deadline, so only such a lease is affected.
        Instant viewTime = asOf != null ? asOf : client.clock().instant();
        boolean expired = status.deadline()
                .filter(deadline -> deadline.isBefore(viewTime))
                .isPresent();
        return new RoleReport(
                status.holder().map(Object::toString).orElse(null),
                status.current() && !unconfirmed && !expired,
                token.isMinted() ? TokenReport.of(token, details) : null,
                status.grantedAt().orElse(null),
                status.deadline().orElse(null),
                state(role),
                roster(status, details),
                coordinator == null || !details ? null : coordinator.state(),
                status.lease().map(l -> TokenReport.of(l.token(), details)).orElse(null),
                problem,
                asOf,
                ageMillis);
    }

    @Nullable
    private static List<RosterMember> roster(LeadershipStatus status, boolean details) {
        return !details
                ? null
                : status.roster().stream()
                        .map(m -> new RosterMember(
                                m.member().value(), m.holder() ? null : m.rank(), m.holder(), m.registeredAt()))
                        .toList();
    }

    /**
     * The whole report.
     *
     * @param share how this member's roles are shared out with the other members'
     * @param clusterView how fresh the cluster's view behind {@code roles} is
     * @param probe what the fencing probe found at startup (its report only when details are
     *     shown); null without one
     */
    public record CoordinationReport(
            String member,
            ShareReport share,
            Map<String, RoleReport> roles,
            ClusterViewReport clusterView,
            StartupFencingProbe.Outcome probe) {}

    /**
     * The cluster-wide view of this member's roles that the report shows.
     *
     * @param asOf when the read that produced it began (all it shows was so at or after
     *     that); null until a read has returned
     * @param ageMillis how long ago that was; null until a read has returned
     * @param readMillis how long that read took; null until a read has returned
     * @param refreshing whether a read is under way now
     * @param problem why the view may be out of date: the one under way has not returned
     *     within 2 s, or else the last read failed (its error); null when the last read
     *     returned and none is overdue
     */
    public record ClusterViewReport(Instant asOf, Long ageMillis, Long readMillis, boolean refreshing, String problem) {

        static ClusterViewReport of(ClusterView.Seen seen) {
            ClusterView.Snapshot snapshot = seen.snapshot();
            return new ClusterViewReport(
                    snapshot == null ? null : snapshot.asOf(),
                    seen.ageMillis(),
                    snapshot == null
                            ? null
                            : Duration.ofNanos(snapshot.tookNanos()).toMillis(),
                    seen.reading(),
                    seen.problem());
        }
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
            return new ShareReport(
                    share.balance().name().toLowerCase(Locale.ROOT),
                    share.held(),
                    share.fairShare(),
                    share.liveMembers(),
                    share.movesOut());
        }
    }

    /**
     * One role.
     *
     * @param holder the member the newest lease names, or null
     * @param current whether that member still holds the role: nobody challenged the
     *     role's newest epoch, and the lease's deadline had not passed on this member's
     *     clock when the view was read ({@code asOf}; a holder whose lease ran out ends its
     *     leadership, though nobody has challenged it yet)
     * @param token the term (compare these) and the epoch the coordinator reports, or null
     * @param grantedAt when the holder's leadership began, on its clock
     * @param deadline the holder's lease deadline, on its clock
     * @param state this member's state: leader, standby, stopped, or not-configured for a
     *     role it does not contend for
     * @param roster the registered members in registration order; null when details are hidden
     * @param transactionState the transaction coordinator's state for the role; null when
     *     details are hidden
     * @param leaseToken the token the newest lease record carries; equal to {@code token}
     *     exactly when nobody challenged the epoch (then {@code current} unless the
     *     lease ran out)
     * @param problem why the cluster's view is missing or out of date (it did not answer in
     *     time, or refused; this member's own leadership is newer than it), and which
     *     fields are this member's own then; null when the report is the cluster's view
     * @param asOf when the read of the cluster behind the report began; null when nothing
     *     in it comes from the cluster
     * @param ageMillis how long ago that was; null with {@code asOf}
     * @param holderUrl where the holder answers HTTP, as it advertises itself for routing
     *     ({@code krabka.coordination.advertised-url}); null when it advertises nothing
     */
    public record RoleReport(
            String holder,
            boolean current,
            TokenReport token,
            Instant grantedAt,
            Instant deadline,
            String state,
            List<RosterMember> roster,
            String transactionState,
            TokenReport leaseToken,
            String problem,
            Instant asOf,
            Long ageMillis,
            String holderUrl) {

        /** A report without the holder's URL. */
        public RoleReport(
                String holder,
                boolean current,
                TokenReport token,
                Instant grantedAt,
                Instant deadline,
                String state,
                List<RosterMember> roster,
                String transactionState,
                TokenReport leaseToken,
                String problem,
                Instant asOf,
                Long ageMillis) {
            this(
                    holder,
                    current,
                    token,
                    grantedAt,
                    deadline,
                    state,
                    roster,
                    transactionState,
                    leaseToken,
                    problem,
                    asOf,
                    ageMillis,
                    null);
        }

        /** This report, naming where its holder answers. */
        public RoleReport withHolderUrl(String url) {
            return new RoleReport(
                    holder,
                    current,
                    token,
                    grantedAt,
                    deadline,
                    state,
                    roster,
                    transactionState,
                    leaseToken,
                    problem,
                    asOf,
                    ageMillis,
                    url);
        }

        static RoleReport unavailable(String state, String problem) {
            return new RoleReport(null, false, null, null, null, state, null, null, null, problem, null, null);
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
            return details
                    ? new TokenReport(token.term(), token.producerId(), token.producerEpoch())
                    : new TokenReport(token.term(), null, null);
        }
    }

    /**
     * A registered member.
     *
     * @param rank its rank among the standbys (0 challenges first); null for the holder
     */
    public record RosterMember(String member, Integer rank, boolean holder, Instant registeredAt) {}
}
