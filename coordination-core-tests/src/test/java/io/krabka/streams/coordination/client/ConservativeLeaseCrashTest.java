package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, finding 5: after a transient failure (here a reconnect, then a describe that
 * fails) the holder's next leases carry the last epoch it knew, behind the coordinator's.
 * A holder that crashes then left standbys an epoch no lease explains, which they took for
 * a challenge in flight and waited out: a whole extra lease without a holder. The holder now
 * writes leases that carry the coordinator's epoch again at once, so its standby takes over
 * one lease (and its stagger) after the crash, as after any crash.
 */
class ConservativeLeaseCrashTest {

    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(500));
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Role ROLE = Role.of("controller");
    /** The scheduling slack of passes on the manual runtime: well under one lease. */
    private static final Duration SLACK = Duration.ofMillis(500);

    @Test
    void aHolderThatCrashesAfterATransientFailureCostsItsStandbyOneLeaseNotTwo() {
        try (ManualRuntime runtime = new ManualRuntime()) {
            InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofSeconds(1));
            CoordinationTransport memory = cluster.transport(TOPIC);
            AtomicBoolean failNextDescribe = new AtomicBoolean();
            CoordinationTransport holderTransport = proxy(CoordinationTransport.class, (method, args) -> {
                if (method.getName().equals("describeEpoch") && failNextDescribe.getAndSet(false)) {
                    throw new CoordinationTimeoutException("injected: one describe got no answer");
                }
                return call(memory, method, args);
            });
            MemberRuntime holderRuntime = new MemberRuntime(runtime);
            AtomicInteger renewals = new AtomicInteger();
            Contender holder = new Contender(
                    new CoordinationClient(holderTransport, CONFIG, holderRuntime),
                    ROLE,
                    MemberId.of("a"),
                    new Contender.Listener() {
                        @Override
                        public void granted(Leadership leadership) {}

                        @Override
                        public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}

                        @Override
                        public void renewed(Leadership leadership, Duration took) {
                            renewals.incrementAndGet();
                        }
                    });
            Contender standby = new Contender(
                    new CoordinationClient(cluster.transport(TOPIC), CONFIG, new MemberRuntime(runtime)),
                    ROLE,
                    MemberId.of("b"),
                    new Contender.Listener() {
                        @Override
                        public void granted(Leadership leadership) {}

                        @Override
                        public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
                    });
            holder.start();
            assertThat(runtime.advanceUntil(() -> holder.leadership().isPresent(), Duration.ofSeconds(10)))
                    .isTrue();
            standby.start();
            assertThat(runtime.advanceUntil(() -> renewals.get() >= 4, Duration.ofSeconds(10)))
                    .isTrue();

            // The next transaction runs on new connections (its epoch is learned by a describe), and that describe
            // fails.
            cluster.reconnectProducers();
            failNextDescribe.set(true);
            int before = renewals.get();
            assertThat(runtime.advanceUntil(
                            () -> renewals.get() >= before + 2 && !failNextDescribe.get(), Duration.ofSeconds(10)))
                    .isTrue();

            holderRuntime.freeze();
            Duration crashedAt = runtime.elapsed();
            assertThat(runtime.advanceUntil(
                            () -> standby.leadership().isPresent(),
                            CONFIG.duration().multipliedBy(4)))
                    .as("the standby takes over")
                    .isTrue();
            Duration gap = runtime.elapsed().minus(crashedAt);
            assertThat(gap)
                    .as("from the crash to the standby's grant")
                    .isLessThanOrEqualTo(
                            CONFIG.duration().plus(CONFIG.challengeStagger()).plus(SLACK));
        }
    }
}
