package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.ManualRuntime;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.memory.InMemoryCluster;
import io.krabka.streams.coordination.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Balance#SPREAD} among members that contend for different sets of roles (a rolling
 * deploy that adds a role makes them): the moves stop once the shares settle, whatever
 * the sets. Whole members on one {@link ManualRuntime}, as in {@link SpreadSimulationTest}.
 */
class SpreadOverDifferentRoleSetsSimulationTest {

    private static final LeaseConfig CONFIG = new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500),
            Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final List<Role> ROLES = IntStream.range(0, 12).mapToObj(i -> Role.of("role-" + i)).toList();
    private static final Duration TICK = Duration.ofMillis(50);
    /** How long the members run after the last one joined: many settles and leases. */
    private static final Duration RUN = Duration.ofSeconds(60);
    /** The tail of the run that must see no grant: the shares settled long before. */
    private static final Duration QUIET = Duration.ofSeconds(30);

    private final ManualRuntime runtime = ManualRuntime.builder().clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(2));
    private final Map<String, Member> members = new LinkedHashMap<>();
    /** Every grant: when (simulated nanos), who, which role. */
    private final List<Grant> grants = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    private record Grant(long atNanos, String member, Role role) {
    }

    @AfterEach
    void close() {
        runtime.close();
    }

    /**
     * b contends for eight roles, a for four of them. Counted over its own roles, a sees b
     * hold none of the shared four and hands it two; b, counting over its eight, then sees
     * a two below it and hands two back, and so on for ever.
     */
    @Test
    void aMemberOnASubsetOfTheRolesAndOneOnAllOfThemStopMovingOnceTheSharedRolesAreEven() {
        List<Role> shared = ROLES.subList(0, 4);
        start("a", shared);
        runUntil(() -> held("a") == 4, Duration.ofSeconds(10));
        start("b", ROLES.subList(0, 8));

        long joined = runtime.nanoTime();
        runFor(RUN);

        assertSettled(joined, 4);
        // The shared roles are even between the two; b holds the four only it contends for.
        int bShared = (int) shared.stream().filter(role -> holds("b", role)).count();
        assertThat(Math.abs(held("a") - bShared)).as("shared roles: a %s, b %s", held("a"), bShared).isLessThanOrEqualTo(1);
        assertThat(held("a") + held("b")).isEqualTo(8);
    }

    /**
     * Three members on overlapping sets, with roles two of them contend for and roles all
     * three do: a on roles 0-8, b on 3-11, c on 0-2 and 6-11.
     */
    @Test
    void threeMembersOnOverlappingRoleSetsStopMovingOnceTheSharesSettle() {
        start("a", ROLES.subList(0, 9));
        runUntil(() -> held("a") == 9, Duration.ofSeconds(10));
        start("b", ROLES.subList(3, 12));
        List<Role> cRoles = new ArrayList<>(ROLES.subList(0, 3));
        cRoles.addAll(ROLES.subList(6, 12));
        start("c", cRoles);

        long joined = runtime.nanoTime();
        runFor(RUN);

        assertSettled(joined, 12);
        assertThat(held("a") + held("b") + held("c")).isEqualTo(ROLES.size());
        // Roles 6-8 are the only ones all three contend for; the others spread too.
        assertThat(members.keySet()).allSatisfy(id -> assertThat(held(id)).as("%s holds some: %s", id, shares()).isPositive());
    }

    /** No grant in the last {@link #QUIET} of the run, and no more handovers than the roles that may move. */
    private void assertSettled(long joinedNanos, int roles) {
        long end = runtime.nanoTime();
        List<Grant> afterJoin = grants.stream().filter(g -> g.atNanos() >= joinedNanos).toList();
        List<Grant> late = afterJoin.stream().filter(g -> end - g.atNanos() < QUIET.toNanos()).toList();
        long moves = members.values().stream().mapToLong(m -> m.client.share(MemberId.of(m.id)).movesOut()).sum();
        String summary = String.format("%d grants and %d handovers in %s after the join, %d in the last %s; shares %s",
                afterJoin.size(), moves, Duration.ofNanos(end - joinedNanos), late.size(), QUIET, shares());
        assertThat(late).as(summary).isEmpty();
        assertThat(moves).as(summary).isLessThanOrEqualTo(roles);
        assertThat(violations).isEmpty();
    }

    private Map<String, Integer> shares() {
        Map<String, Integer> shares = new LinkedHashMap<>();
        members.keySet().forEach(id -> shares.put(id, held(id)));
        return shares;
    }

    private boolean holds(String member, Role role) {
        Contender contender = members.get(member).contenders.get(role);
        return contender != null && contender.leadership().isPresent();
    }

    private int held(String member) {
        return (int) members.get(member).contenders.values().stream().filter(c -> c.leadership().isPresent()).count();
    }

    private void runUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            assertThat(Duration.ofNanos(runtime.nanoTime() - start)).as("waiting; shares %s", shares())
                    .isLessThanOrEqualTo(within);
            tick();
        }
    }

    private void runFor(Duration duration) {
        long until = runtime.nanoTime() + duration.toNanos();
        while (runtime.nanoTime() < until) {
            tick();
        }
    }

    /** One step of simulated time; never two members believing they hold one role. */
    private void tick() {
        runtime.advance(TICK);
        for (Role role : ROLES) {
            List<String> holding = members.keySet().stream().filter(id -> holds(id, role)).toList();
            if (holding.size() > 1) {
                violations.add("+" + runtime.elapsed() + " " + holding + " each believe they hold " + role);
            }
        }
        if (!violations.isEmpty()) {
            throw new AssertionError(violations.toString());
        }
    }

    private void start(String id, List<Role> roles) {
        Member member = new Member(id, roles);
        members.put(id, member);
        member.contenders.values().forEach(Contender::start);
    }

    private final class Member {
        final String id;
        final MemberRuntime runtime = new MemberRuntime(SpreadOverDifferentRoleSetsSimulationTest.this.runtime);
        final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        final CoordinationClient client;
        final Map<Role, Contender> contenders = new LinkedHashMap<>();

        Member(String id, List<Role> roles) {
            this.id = id;
            this.client = new CoordinationClient(transport, CONFIG, runtime).balance(Balance.SPREAD);
            for (Role role : roles) {
                contenders.put(role, new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        grants.add(new Grant(SpreadOverDifferentRoleSetsSimulationTest.this.runtime.nanoTime(), id, role));
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                    }
                }));
            }
        }
    }
}
