package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A member standing by for many roles queues their passes on its few pass threads when
 * its reads are slow (a busy broker on a loaded machine). A release of one of its roles
 * must not wait behind that queue: in the 1 000-role spread bench a handed-over role
 * waited 27 to 34 s for its target's pass. The pass that news of a release wakes goes
 * ahead of the queued ones.
 */
class UrgentPassSimulationTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(1));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(4);
    private static final Role RELEASED = Role.of("dispatcher");
    private static final List<Role> BUSY =
            IntStream.range(0, 40).mapToObj(i -> Role.of("busy-" + i)).toList();
    private static final Duration READ = Duration.ofMillis(500);
    private static final Duration TICK = Duration.ofMillis(50);

    private final ManualRuntime runtime = ManualRuntime.builder()
            .clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .passThreads(2)
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(30));
    private final MemberRuntime releaserRuntime = new MemberRuntime(runtime);
    private final MemberRuntime busyHolderRuntime = new MemberRuntime(runtime);

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aReleasedRoleIsTakenAheadOfTheStandbyPassesQueuedForOtherRoles() {
        CoordinationClient releaserClient = new CoordinationClient(cluster.transport(TOPIC), CONFIG, releaserRuntime);
        Contender releaser = start(releaserClient, RELEASED, "a");
        CoordinationClient busyHolderClient =
                new CoordinationClient(cluster.transport(TOPIC), CONFIG, busyHolderRuntime);
        List<Contender> busyHolders =
                BUSY.stream().map(role -> start(busyHolderClient, role, "c")).toList();
        runtime.advanceUntil(
                () -> releaser.leadership().isPresent()
                        && busyHolders.stream().allMatch(c -> c.leadership().isPresent()),
                Duration.ofSeconds(10));
        assertThat(busyHolders).allMatch(c -> c.leadership().isPresent());

        // Member b stands by for all of them; each of its reads takes half a second.
        CoordinationClient slow =
                new CoordinationClient(new SlowReads(cluster.transport(TOPIC), runtime), CONFIG, runtime);
        Contender taker = start(slow, RELEASED, "b");
        BUSY.forEach(role -> start(slow, role, "b"));
        runFor(Duration.ofSeconds(15));
        int queued = runtime.waiting(runtime.passes());
        assertThat(queued).as("passes queued behind b's two pass threads").isGreaterThanOrEqualTo(20);

        releaserRuntime.workers().execute(releaser::stop);
        Instant released = runtime.clock().instant();
        runtime.advanceUntil(() -> taker.leadership().isPresent(), Duration.ofSeconds(30));
        assertThat(taker.leadership()).as("b took the released role").isPresent();
        // Its own read and the grant, not the queue: the passes queued ahead of it needed
        // at least queued / 2 threads x 500 ms.
        assertThat(Duration.between(released, runtime.clock().instant()))
                .as("from the release to b's grant, %s passes queued", queued)
                .isLessThan(READ.multipliedBy(4));
    }

    private Contender start(CoordinationClient client, Role role, String member) {
        Contender contender = new Contender(client, role, MemberId.of(member), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
        contender.start();
        return contender;
    }

    private void runFor(Duration duration) {
        long until = runtime.nanoTime() + duration.toNanos();
        while (runtime.nanoTime() < until) {
            runtime.advance(TICK);
        }
    }

    /** The in-memory transport, whose every read of a role's partition takes {@link #READ} of the runtime's time. */
    private static final class SlowReads extends ForwardingTransport {

        private final CoordinationRuntime runtime;

        SlowReads(CoordinationTransport delegate, CoordinationRuntime runtime) {
            super(delegate);
            this.runtime = runtime;
        }

        @Override
        public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            try {
                runtime.sleep(READ);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while reading", e);
            }
            return delegate.read(role, fromOffset, maxWait);
        }
    }
}
