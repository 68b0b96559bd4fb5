package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ReadFreshness;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A standby does not read the role's partition at every renewal of the holder it knows:
 * the news of the renewal carries the lease's new deadline, which moves its turn later.
 * At a few hundred roles per member those reads (every standby of every role, at every
 * renewal) queued the challenge of a handover's target for seconds. What it must still do
 * on time: take over after a crash at the last renewal's deadline, and at once after a
 * release.
 */
class StandbyReadsSimulationTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(1));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final Role ROLE = Role.of("dispatcher");
    private static final Duration TICK = Duration.ofMillis(50);

    private final ManualRuntime runtime = ManualRuntime.builder()
            .clock(new ManualClock(Instant.ofEpochMilli(1_700_000_000_000L)))
            .build();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(2));
    private final MemberRuntime holderRuntime = new MemberRuntime(runtime);
    private final CountingReads standbyTransport = new CountingReads(cluster.transport(TOPIC));
    private final AtomicInteger renewals = new AtomicInteger();
    private final Contender holder =
            contender(new CoordinationClient(cluster.transport(TOPIC), CONFIG, holderRuntime), "a");
    private final Contender standby = contender(new CoordinationClient(standbyTransport, CONFIG, runtime), "b");

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aStandbyReadsAboutOncePerLeaseNotAtEveryRenewalAndStillTakesOverAtItsTurnAfterACrash() {
        holder.start();
        runtime.advanceUntil(() -> holder.leadership().isPresent(), Duration.ofSeconds(5));
        standby.start();
        runtime.advance(CONFIG.duration());
        int renewalsBefore = renewals.get();
        int readsBefore = standbyTransport.reads.get();

        Duration watched = CONFIG.renewInterval().multipliedBy(20);
        runFor(watched);

        int renewed = renewals.get() - renewalsBefore;
        int reads = standbyTransport.reads.get() - readsBefore;
        assertThat(renewed).as("renewals").isGreaterThanOrEqualTo(19);
        // The renewals come in the news: it reads only for its fallback against a missed wake-up, every
        // ReadFreshness.QUIET_READ (this transport does not vouch that none was missed; Kafka's watcher does).
        assertThat(reads)
                .as("the standby's reads during %s renewals", renewed)
                .isPositive()
                .isLessThanOrEqualTo((int) (watched.toMillis() / ReadFreshness.QUIET_READ.toMillis()) + 1);

        // The holder dies just after a renewal: the standby takes over at that lease's deadline, as before.
        Instant lastDeadline = holder.leadership().orElseThrow().deadline();
        holderRuntime.freeze();
        runtime.advanceUntil(
                () -> standby.leadership().isPresent(), CONFIG.duration().plus(CONFIG.challengeStagger()));
        assertThat(standby.leadership()).isPresent();
        assertThat(runtime.clock().instant())
                .as("taken over at the dead holder's deadline")
                .isAfterOrEqualTo(lastDeadline)
                .isBefore(lastDeadline.plus(CONFIG.renewInterval()));
    }

    @Test
    void aStandbyThatSkippedTheRenewalsStillTakesOverAtOnceAfterARelease() {
        holder.start();
        runtime.advanceUntil(() -> holder.leadership().isPresent(), Duration.ofSeconds(5));
        standby.start();
        runFor(CONFIG.renewInterval().multipliedBy(7));
        assertThat(standby.leadership()).isEmpty();

        holderRuntime.workers().execute(holder::stop);
        Instant released = runtime.clock().instant();
        runtime.advanceUntil(() -> standby.leadership().isPresent(), CONFIG.challengeStagger());
        assertThat(standby.leadership()).isPresent();
        assertThat(Duration.between(released, runtime.clock().instant()))
                .as("a handover's gap, not a stagger")
                .isLessThan(CONFIG.challengeStagger());
    }

    private void runFor(Duration duration) {
        long until = runtime.nanoTime() + duration.toNanos();
        while (runtime.nanoTime() < until) {
            runtime.advance(TICK);
        }
    }

    private Contender contender(CoordinationClient client, String member) {
        return new Contender(client, ROLE, MemberId.of(member), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void renewed(Leadership leadership, Duration took) {
                renewals.incrementAndGet();
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
    }

    /** The in-memory transport, counting the reads of the role's partition. */
    private static final class CountingReads extends ForwardingTransport {

        final AtomicInteger reads = new AtomicInteger();

        CountingReads(CoordinationTransport delegate) {
            super(delegate);
        }

        @Override
        public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            reads.incrementAndGet();
            return delegate.read(role, fromOffset, maxWait);
        }
    }
}
