package io.krabka.streams.coordination.succession;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.ManualClock;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole failovers driven by the pure rules and a {@link ManualClock}: members fold a
 * shared log incrementally and act on their decisions; a one-counter model of the
 * transaction coordinator refuses lease writes from a superseded epoch.
 */
class FailoverTest {

    private static final Role ROLE = Role.of("controller");
    private static final LeaseConfig CONFIG = LeaseConfig.DEFAULTS; // 30 s lease, 10 s renew, 5 s stagger
    private static final Duration STEP = Duration.ofMillis(100);

    private final ManualClock clock = new ManualClock();
    private final Log log = new Log();

    @Test
    void holderDiesAndRankZeroWinsJustAfterTheDeadline() {
        Cluster cluster = new Cluster(CONFIG, "a", "b", "c");
        cluster.runFor(Duration.ofSeconds(1));
        assertThat(cluster.holders()).containsExactly("a");
        Instant deadline = cluster.crash("a");

        Instant granted = cluster.runUntilHeldBy("b", Duration.ofMinutes(2));
        assertThat(granted).isBetween(deadline, deadline.plus(STEP));
        assertThat(cluster.member("c").challenges).isZero();
    }

    @Test
    void rankZeroAlsoDeadSoRankOneWinsOneStaggerLater() {
        Cluster cluster = new Cluster(CONFIG, "a", "b", "c");
        cluster.runFor(Duration.ofSeconds(1));
        Instant deadline = cluster.crash("a");
        cluster.crash("b");

        Instant granted = cluster.runUntilHeldBy("c", Duration.ofMinutes(2));
        Instant oneStaggerLater = deadline.plus(CONFIG.challengeStagger());
        assertThat(granted).isBetween(oneStaggerLater, oneStaggerLater.plus(STEP));
    }

    @Test
    void recoveredNodeLandsAtTheTailAndDoesNotFailBack() {
        Cluster cluster = new Cluster(CONFIG, "a", "b", "c");
        cluster.runFor(Duration.ofSeconds(1));
        cluster.crash("a");
        cluster.runUntilHeldBy("b", Duration.ofMinutes(2));
        cluster.restart("a");
        cluster.runFor(Duration.ofMinutes(5));

        assertThat(cluster.holders()).containsExactly("b");
        RoleState state = log.fold();
        assertThat(state.roster()).extracting(e -> e.member().value()).containsExactly("b", "c", "a");
        assertThat(state.rankOf(MemberId.of("a"))).hasValue(1);
        assertThat(cluster.member("a").challenges).isZero();
    }

    @Test
    void simultaneousChallengersWithZeroStaggerLeaveExactlyOneWriter() {
        Cluster cluster = new Cluster(CONFIG.withChallengeStagger(Duration.ZERO), "a", "b", "c");
        cluster.runFor(Duration.ofSeconds(1));
        // With no stagger even the first election is a three-way race; one member won it.
        assertThat(cluster.holders()).hasSize(1);
        String first = cluster.holders().get(0);
        cluster.crash(first);
        List<Cluster.Member> standbys = cluster.members.values().stream().filter(m -> m.alive).toList();
        Map<Cluster.Member, Integer> challengesBefore = new LinkedHashMap<>();
        standbys.forEach(m -> challengesBefore.put(m, m.challenges));
        int fencedBefore = cluster.fencedWrites;

        cluster.runFor(Duration.ofMinutes(1));

        standbys.forEach(m -> assertThat(m.challenges - challengesBefore.get(m)).as(m.id.value()).isEqualTo(1));
        assertThat(cluster.holders()).hasSize(1);
        String holder = cluster.holders().get(0);
        assertThat(log.fold().lease().orElseThrow().member().value()).isEqualTo(holder);
        // The loser learned it lost on its first write and went back to standby.
        assertThat(cluster.fencedWrites - fencedBefore).isEqualTo(1);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {7L, 99L, 2026L, 31337L})
    void randomCrashesAndRestartsKeepTermsRisingAndGapsBounded(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Cluster cluster = new Cluster(CONFIG, "a", "b", "c", "d");
        Instant lastHeld = clock.instant();
        Instant leaderlessSince = null;
        for (int step = 0; step < 30_000; step++) {
            if (random.nextInt(2_000) == 0) {
                List<String> alive = cluster.alive();
                if (alive.size() > 1) {
                    cluster.crash(alive.get(random.nextInt(alive.size())));
                }
            }
            if (random.nextInt(1_500) == 0) {
                cluster.dead().stream().findFirst().ifPresent(cluster::restart);
            }
            cluster.step();
            if (cluster.holders().isEmpty()) {
                leaderlessSince = leaderlessSince == null ? clock.instant() : leaderlessSince;
            } else {
                lastHeld = clock.instant();
                leaderlessSince = null;
            }
            // Bound: a lease, a stagger per roster entry ahead (dead ones included), a step.
            Duration bound = CONFIG.duration().plus(CONFIG.challengeStagger().multipliedBy(4)).plus(STEP.multipliedBy(2));
            assertThat(Duration.between(lastHeld, clock.instant())).as("seed %d step %d", seed, step).isLessThanOrEqualTo(bound);
        }
        assertThat(log.grantTerms()).as("grant terms").isSorted().doesNotHaveDuplicates().hasSizeGreaterThan(3);
    }

    /** The shared log of one role's partition. */
    private final class Log {
        final List<Object[]> records = new ArrayList<>();

        long append(CoordinationKey key, CoordinationRecord value) {
            records.add(new Object[] {key, value, clock.millis()});
            return records.size() - 1;
        }

        void foldInto(RoleStateBuilder builder) {
            for (long offset = builder.nextOffset(); offset < records.size(); offset++) {
                Object[] record = records.get((int) offset);
                builder.apply(offset, (long) record[2], (CoordinationKey) record[0],
                        Optional.ofNullable((CoordinationRecord) record[1]));
            }
        }

        RoleState fold() {
            RoleStateBuilder builder = RoleState.builder(ROLE);
            foldInto(builder);
            return builder.build();
        }

        List<Long> grantTerms() {
            List<Long> terms = new ArrayList<>();
            RoleStateBuilder builder = RoleState.builder(ROLE);
            for (long offset = 0; offset < records.size(); offset++) {
                Object[] record = records.get((int) offset);
                builder.apply(offset, (long) record[2], (CoordinationKey) record[0],
                        Optional.ofNullable((CoordinationRecord) record[1]));
                builder.build().lease().filter(l -> l.offset() == l.term()).ifPresent(l -> {
                    if (terms.isEmpty() || terms.get(terms.size() - 1) != l.term()) {
                        terms.add(l.term());
                    }
                });
            }
            return terms;
        }
    }

    /** Members plus a one-counter model of the coordinator: the newest InitProducerId owns the epoch. */
    private final class Cluster {
        final LeaseConfig config;
        final Map<String, Member> members = new LinkedHashMap<>();
        short epoch = -1;
        String epochOwner;
        int fencedWrites;

        Cluster(LeaseConfig config, String... ids) {
            this.config = config;
            for (String id : ids) {
                members.put(id, new Member(MemberId.of(id)));
            }
        }

        Member member(String id) {
            return members.get(id);
        }

        /**
         * One instant: every live member decides on the same log, then every challenger
         * asks for an epoch, then the writes happen. So challengers at one instant race
         * the way they do at a real coordinator.
         */
        void step() {
            clock.advance(STEP);
            List<Member> live = members.values().stream().filter(m -> m.alive).toList();
            Map<Member, Decision> decisions = new LinkedHashMap<>();
            live.forEach(m -> decisions.put(m, m.decide()));
            decisions.forEach((m, d) -> {
                if (d instanceof Decision.Challenge) {
                    m.initProducerId();
                }
            });
            decisions.forEach(Member::act);
        }

        void runFor(Duration duration) {
            Instant end = clock.instant().plus(duration);
            while (clock.instant().isBefore(end)) {
                step();
            }
        }

        Instant runUntilHeldBy(String id, Duration limit) {
            Instant end = clock.instant().plus(limit);
            while (!holders().equals(List.of(id))) {
                assertThat(clock.instant()).as("%s granted within %s", id, limit).isBefore(end);
                step();
            }
            return clock.instant();
        }

        Instant crash(String id) {
            Member member = members.get(id);
            member.alive = false;
            member.holding = false;
            return log.fold().lease().map(LeaseState::deadlineInstant).orElse(clock.instant());
        }

        void restart(String id) {
            members.put(id, new Member(MemberId.of(id)));
        }

        List<String> holders() {
            return members.values().stream().filter(m -> m.alive && m.holding).map(m -> m.id.value()).toList();
        }

        List<String> alive() {
            return members.values().stream().filter(m -> m.alive).map(m -> m.id.value()).toList();
        }

        List<String> dead() {
            return members.values().stream().filter(m -> !m.alive).map(m -> m.id.value()).toList();
        }

        /** A transactional lease write: commits only if the writer still owns the newest epoch. */
        boolean writeLease(Member member, long grantedAt) {
            if (!member.id.value().equals(epochOwner) || member.epoch != epoch) {
                fencedWrites++;
                return false;
            }
            log.append(CoordinationKey.lease(ROLE), new CoordinationRecord.Lease(member.id, 1000, epoch, grantedAt,
                    clock.instant().plus(config.duration()).toEpochMilli()));
            return true;
        }

        final class Member {
            final MemberId id;
            final RoleStateBuilder view = RoleState.builder(ROLE);
            boolean alive = true;
            boolean registered;
            boolean holding;
            short epoch = -1;
            long grantedAt;
            int challenges;

            Member(MemberId id) {
                this.id = id;
            }

            Decision decide() {
                if (!registered) {
                    // A starting member always registers, so a restarted one lands at the tail.
                    registered = true;
                    return new Decision.Register();
                }
                log.foldInto(view);
                return Succession.evaluate(view.build(), id, holding, config, clock.instant());
            }

            void initProducerId() {
                challenges++;
                Cluster.this.epoch++;
                epochOwner = id.value();
                epoch = Cluster.this.epoch;
            }

            void act(Decision decision) {
                if (decision instanceof Decision.Register) {
                    log.append(CoordinationKey.registration(ROLE, id), new CoordinationRecord.Registration(id, clock.millis()));
                } else if (decision instanceof Decision.Challenge) {
                    grantedAt = clock.millis();
                    holding = writeLease(this, grantedAt);
                } else if (decision instanceof Decision.Renew) {
                    holding = writeLease(this, grantedAt);
                } else if (decision instanceof Decision.StepDown) {
                    holding = false;
                }
            }
        }
    }
}
