package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.ContenderState;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A standby's urgent pass (news that the holder releases) is handed to the urgent passes,
 * ahead of the other roles' queued passes. When its lane is busy at that moment (the thread
 * that delivers the news still runs it), the thread running the lane hands the pass itself
 * to the ordinary passes: it waits behind every queued pass after all.
 */
class BusyLaneUrgentPassTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void anUrgentPassStaysAheadOfQueuedPassesWhenItFindsItsLaneBusy() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster();
        Role role = Role.of("controller");
        List<String> order = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean recording = new java.util.concurrent.atomic.AtomicBoolean();

        CoordinationClient clientA =
                new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, InstantSource.system());
        Contender a = new Contender(clientA, role, MemberId.of("a"), new Quiet());

        // b's passes run on one pass thread, so the order of its queue is the order they run in.
        LaneHoldingRuntime runtimeB = new LaneHoldingRuntime(1);
        ForwardingTransport transportB = new ForwardingTransport(cluster.transport(TOPIC)) {
            @Override
            public RoleRecords read(Role read, long fromOffset, Duration maxWait) {
                if (recording.get() && read.equals(role)) {
                    order.add("b reads " + role);
                }
                return super.read(read, fromOffset, maxWait);
            }
        };
        CoordinationClient clientB = new CoordinationClient(transportB, LeaseConfig.DEFAULTS, runtimeB);
        Contender b = new Contender(clientB, role, MemberId.of("b"), new Quiet());
        try {
            a.start();
            await().atMost(WAIT).until(() -> a.leadership().isPresent());
            b.start();
            // b stands by, waiting for a's lease: its passes skip the read until news comes.
            await().atMost(WAIT)
                    .until(() -> b.state() instanceof ContenderState.Standby standby
                            && standby.decision() instanceof Decision.Wait);

            // The one pass thread of b's runtime is busy, and other roles' passes queue behind it.
            CountDownLatch plug = new CountDownLatch(1);
            CountDownLatch plugged = new CountDownLatch(1);
            CountDownLatch firstStarted = new CountDownLatch(1);
            CountDownLatch first = new CountDownLatch(1);
            runtimeB.passes().execute(() -> {
                plugged.countDown();
                awaitQuietly(plug);
            });
            // b's state says Wait from inside the pass that decided it, before that pass ends. News
            // coming while a pass is under way only marks it for that pass's end: the releaser would
            // then schedule nothing (the path this test is about never runs). Once the plug runs on
            // b's one pass thread, that pass (which ran there) has ended.
            assertThat(plugged.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            runtimeB.passes().execute(() -> {
                order.add("queued pass 1");
                firstStarted.countDown();
                awaitQuietly(first);
            });
            runtimeB.passes().execute(() -> order.add("queued pass 2"));
            runtimeB.passes().execute(() -> order.add("queued pass 3"));
            recording.set(true);

            // a releases on a thread of its own; the in-memory cluster tells b of it on that
            // thread, which schedules b's urgent pass from b's lane and is kept there a moment.
            Thread releaser = new Thread(a::release, "releaser");
            LaneHoldingRuntime.Gate inWake = runtimeB.arm(releaser, LaneHoldingRuntime.Gate.Hook.SCHEDULE);
            releaser.start();
            assertThat(inWake.awaitEntered(WAIT)).isTrue();
            // The timer hands that pass in. A count of urgent hand-ins would not do: b's first passes
            // may have been urgent too, and the plug must not go before this pass is queued, or
            // queued pass 1 runs first and the lane is free again when the urgent pass comes.
            assertThat(inWake.awaitScheduledRan(WAIT)).isTrue();
            // The urgent pass runs first on the pass thread (finding b's lane busy), then queued pass 1.
            plug.countDown();
            assertThat(firstStarted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            // The releaser lets b's lane go: it runs the pass's begin, and hands the pass on.
            inWake.open();
            await().atMost(WAIT)
                    .alias("the releaser hands b's pass on; order " + order + ", b " + b.state() + " urgentBy "
                            + runtimeB.urgentHandedInBy.stream()
                                    .map(Thread::getName)
                                    .toList() + " passesBy "
                            + runtimeB.handedInBy.stream().map(Thread::getName).toList() + " gateBy "
                            + inWake.enteredBy().getName() + " done " + runtimeB.passesDone)
                    .until(() ->
                            runtimeB.handedInBy.contains(releaser) || runtimeB.urgentHandedInBy.contains(releaser));
            first.countDown();

            await().atMost(WAIT).until(() -> order.contains("b reads " + role) && order.contains("queued pass 3"));
            assertThat(order.indexOf("b reads " + role))
                    .as("the urgent pass's read among %s", order)
                    .isLessThan(order.indexOf("queued pass 2"));
            await().atMost(WAIT).until(() -> b.leadership().isPresent());
        } finally {
            recording.set(false);
            b.stop();
            a.stop();
            b.awaitStopped(WAIT);
            a.awaitStopped(WAIT);
            runtimeB.close();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Quiet implements Contender.Listener {
        @Override
        public void granted(Leadership leadership) {}

        @Override
        public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
    }
}
