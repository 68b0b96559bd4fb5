package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.Handover;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A handover asked for while the holder's renewal blocks on a frozen transaction
 * coordinator (the lease has not run out): the holder's pass, which must do the release,
 * is stuck in that renewal. The handover must answer what is true (the member still
 * holds, so never NOT_HOLDING), within the bound {@link Contender#handOver} documents, and
 * leave the target's place in line as it was; the holder renews again once the cluster
 * answers.
 */
class HandoverBlockedRenewalSimulationTest {

    private static final LeaseConfig CONFIG = LeaseConfig.DEFAULTS;
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Role ROLE = Role.of("controller");
    private static final Duration TICK = Duration.ofMillis(50);

    private static final int RENEWAL_THREADS = 4;

    private final ManualRuntime runtime =
            ManualRuntime.builder().renewalThreads(RENEWAL_THREADS).build();
    // Longer than the handover's waits, shorter than what is left of the lease when it blocks.
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(15));
    private final Map<String, Contender> contenders = new LinkedHashMap<>();
    private final List<String> ends = new CopyOnWriteArrayList<>();
    private final AtomicLong lastRenewalNanos = new AtomicLong();
    private final CoordinationClient observer = new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aHandoverWhileTheRenewalBlocksAnswersBusyAtOnceAndLeavesTheTargetsPlaceInLine() {
        Contender holder = holdingWithTwoStandbys();
        // Freeze a's coordinator after a renewal: the next one blocks, well before the deadline.
        InMemoryCluster.Fault frozen = cluster.freezeCoordinator(ROLE);
        long frozenAfter = lastRenewalNanos.get();
        runtime.advance(CONFIG.renewInterval().plusSeconds(1));
        assertThat(lastRenewalNanos.get())
                .as("no renewal while the coordinator is frozen")
                .isEqualTo(frozenAfter);
        assertThat(runtime.renewalLimit())
                .as("the renewal was reported blocked")
                .isGreaterThan(RENEWAL_THREADS);

        Answer answer = handOver(holder, "b");

        SoftAssertions.assertSoftly(softly -> {
            softly.assertThat(answer.holding())
                    .as("a holds when the handover answers")
                    .isTrue();
            softly.assertThat(answer.result())
                    .as("the answer after %s", answer.blocked())
                    .isEqualTo(HandoverResult.BUSY);
            softly.assertThat(answer.blocked())
                    .as("how long handOver blocked")
                    .isLessThanOrEqualTo(Handover.PROBE_TIMEOUT);
            softly.assertThat(standbys())
                    .as("the standbys' order after the handover")
                    .containsExactly("b", "c");
            softly.assertThat(ends).as("ends").isEmpty();
        });

        // The cluster answers again: a renews and keeps the role, b and c keep their places.
        frozen.close();
        assertRenewsAndHolds(holder);
        assertThat(standbys()).containsExactly("b", "c");
    }

    @Test
    void aRenewalThatBlocksOnlyAfterTheProbeMakesTheHandoverAnswerBusySoonAndTheHolderKeepsTheRole() {
        Contender holder = holdingWithTwoStandbys();
        // Half a second before a's next renewal: not blocked yet, so the probe runs. Each
        // registration takes a second, so the probe (b removed, b registered again) ends
        // after that renewal blocked on the frozen coordinator.
        long renewAt = lastRenewalNanos.get() + CONFIG.renewInterval().toNanos();
        runtime.advance(Duration.ofNanos(renewAt - runtime.nanoTime()).minusMillis(500));
        InMemoryCluster.Fault slow = cluster.latency(InMemoryCluster.Operation.REGISTER, Duration.ofSeconds(1));
        InMemoryCluster.Fault frozen = cluster.freezeCoordinator(ROLE);

        Answer answer = handOver(holder, "b");

        SoftAssertions.assertSoftly(softly -> {
            softly.assertThat(answer.holding())
                    .as("a holds when the handover answers")
                    .isTrue();
            softly.assertThat(answer.result())
                    .as("the answer after %s", answer.blocked())
                    .isEqualTo(HandoverResult.BUSY);
            softly.assertThat(answer.blocked())
                    .as("how long handOver blocked")
                    .isLessThanOrEqualTo(Handover.PROBE_TIMEOUT);
            softly.assertThat(ends).as("ends").isEmpty();
        });

        slow.close();
        frozen.close();
        assertRenewsAndHolds(holder);
        // The probe put b at the tail; nobody was left out of the line.
        assertThat(standbys()).containsExactly("c", "b");
    }

    private record Answer(HandoverResult result, Duration blocked, boolean holding) {}

    /** a holds the role and has just renewed; b, then c, stand by. */
    private Contender holdingWithTwoStandbys() {
        start("a");
        advanceUntil(() -> contenders.get("a").leadership().isPresent(), Duration.ofSeconds(5));
        start("b");
        start("c");
        advanceUntil(() -> standbys().equals(List.of("b", "c")), Duration.ofSeconds(5));
        long before = lastRenewalNanos.get();
        advanceUntil(
                () -> lastRenewalNanos.get() != before, CONFIG.renewInterval().plusSeconds(1));
        return contenders.get("a");
    }

    /** Runs {@code holder.handOver(to)} in a task, as an operator's call would, until it answers. */
    private Answer handOver(Contender holder, String to) {
        AtomicReference<Answer> answer = new AtomicReference<>();
        runtime.workers().execute(() -> {
            long start = runtime.nanoTime();
            HandoverResult result = holder.handOver(MemberId.of(to));
            answer.set(new Answer(
                    result,
                    Duration.ofNanos(runtime.nanoTime() - start),
                    holder.leadership().isPresent()));
        });
        // Past every wait the handover may have, so the unfixed one answers too.
        advanceUntil(
                () -> answer.get() != null,
                Handover.PROBE_TIMEOUT.plus(Handover.RELEASE_WAIT).plusSeconds(1));
        return answer.get();
    }

    private void assertRenewsAndHolds(Contender holder) {
        long before = lastRenewalNanos.get();
        advanceUntil(() -> lastRenewalNanos.get() != before, CONFIG.renewInterval());
        assertThat(holder.leadership()).isPresent();
        assertThat(ends).isEmpty();
    }

    /** The registered members other than the holder, first in line first. */
    private List<String> standbys() {
        return observer.observe(ROLE, Duration.ZERO).roster().stream()
                .map(RankedMember::member)
                .map(MemberId::value)
                .filter(member -> !member.equals("a"))
                .toList();
    }

    private void advanceUntil(BooleanSupplier condition, Duration within) {
        long start = runtime.nanoTime();
        while (!condition.getAsBoolean()) {
            assertThat(Duration.ofNanos(runtime.nanoTime() - start))
                    .as("waiting; ends %s", ends)
                    .isLessThanOrEqualTo(within);
            runtime.advance(TICK);
        }
    }

    private void start(String id) {
        CoordinationClient client = new CoordinationClient(cluster.transport(TOPIC), CONFIG, runtime);
        Contender contender = new Contender(client, ROLE, MemberId.of(id), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add("+" + runtime.elapsed() + " " + id + " " + cause);
            }

            @Override
            public void renewed(Leadership leadership, Duration took) {
                lastRenewalNanos.set(runtime.nanoTime());
            }
        });
        contenders.put(id, contender);
        contender.start();
    }
}
