package io.krabka.coordination.chaos.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * A seeded list of fault steps: the same seed gives the same plan, so a failing run
 * can be replayed. Timing still varies with the machine; the plan does not.
 *
 * @param steps the faults in order
 */
public record FaultPlan(long seed, List<Step> steps) {

    /**
     * One fault. {@code lingerMillis} is how long the fault stays after it took effect
     * (a paused or cut holder stays so, a broker stays down); {@code calmMillis} is the
     * quiet time after it healed; {@code partitionLeader} picks the broker that leads the
     * role's coordination partition for {@link FaultKind#KILL_BROKER}.
     */
    public record Step(FaultKind kind, long lingerMillis, long calmMillis, boolean partitionLeader) {}

    /** Every kind once, in a seeded order: the smoke plan. */
    public static FaultPlan eachOnce(long seed, List<FaultKind> kinds, long leaseMillis) {
        Random random = new Random(seed);
        List<FaultKind> order = new ArrayList<>(kinds);
        Collections.shuffle(order, random);
        return new FaultPlan(
                seed,
                order.stream().map(kind -> step(kind, random, leaseMillis)).toList());
    }

    /** {@code count} steps drawn with weights that favour the leader faults (each one is a leadership change). */
    public static FaultPlan random(long seed, List<FaultKind> kinds, int count, long leaseMillis) {
        Random random = new Random(seed);
        List<FaultKind> weighted = new ArrayList<>();
        for (FaultKind kind : kinds) {
            int weight = switch (kind) {
                case KILL_LEADER, PAUSE_LEADER -> 4;
                case CUT_LEADER -> 3;
                case TERM_LEADER, RELEASE_LEADER, CLOCK_STEP, CUT_COORDINATOR -> 2;
                case KILL_BROKER, GARBAGE, PAUSE_BROKER, CHALLENGER, FORGE, EXPIRE_TRANSACTIONAL_ID -> 1;
            };
            for (int i = 0; i < weight; i++) {
                weighted.add(kind);
            }
        }
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            steps.add(step(weighted.get(random.nextInt(weighted.size())), random, leaseMillis));
        }
        return new FaultPlan(seed, steps);
    }

    private static Step step(FaultKind kind, Random random, long leaseMillis) {
        return new Step(
                kind, (long) (random.nextDouble() * leaseMillis / 2), 100 + random.nextInt(500), random.nextBoolean());
    }

    @Override
    public String toString() {
        return "seed " + seed + ": "
                + steps.stream().map(step -> step.kind().name()).collect(Collectors.joining(", "));
    }
}
