package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A stopping holder's leave (its release) runs on the renewal threads, never behind the
 * contending roles' queued passes (PassLoop.stop: a member stopping with 1 000 roles had
 * 998 abandoned without a tombstone that way). When the leave finds its lane busy, the
 * thread running the lane hands the release to the pass threads after all.
 */
class BusyLaneHolderLeaveTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aStoppingHoldersReleaseNeverWaitsBehindQueuedPassesWhenItFindsItsLaneBusy() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        // One pass thread: the queue of passes is the order they run in.
        LaneHoldingRuntime runtime = new LaneHoldingRuntime(1);
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        Role role = Role.of("controller");
        List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();
        Contender holder = new Contender(client, role, MemberId.of("n1"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add(cause);
            }
        });
        CountDownLatch plug = new CountDownLatch(1);
        try {
            holder.start();
            await().atMost(WAIT).until(() -> holder.leadership().isPresent());
            // A grant is followed at once by the holder's first pass, on a renewal thread. Until
            // it has run, a stop would find a pass under way and leave on that pass's thread
            // when it ends: not the path this test is about. Wait for it.
            await().atMost(WAIT)
                    .until(() -> runtime.renewalsDoneHandedInBy.values().stream()
                                    .mapToInt(AtomicInteger::get)
                                    .sum()
                            > 0);
            // Other roles' passes keep the pass thread busy for a while (a member with many roles).
            // Once the plug runs, the grant's pass (which ran on that one thread) has ended too.
            CountDownLatch plugged = new CountDownLatch(1);
            runtime.passes().execute(() -> {
                plugged.countDown();
                try {
                    plug.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(plugged.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

            // The stop runs on a thread of its own. The thread that runs its lane event (the
            // stopper, or the thread running the lane then, which runs it after its own)
            // hands the leave to a renewal thread and is kept on the lane a moment after
            // that: the leave finds the lane busy.
            LaneHoldingRuntime.Gate inStop = runtime.arm(null, LaneHoldingRuntime.Gate.Hook.RENEWALS);
            Thread stopper = new Thread(holder::stop, "stopper");
            stopper.start();
            assertThat(inStop.awaitEntered(WAIT)).isTrue();
            await().atMost(WAIT)
                    .until(() -> runtime.renewalsDoneHandedInBy
                                    .getOrDefault(inStop.enteredBy(), new AtomicInteger())
                                    .get()
                            > 0);
            inStop.open();

            // The release must not wait for the pass thread. That thread stays plugged until the
            // finally block (30 s at most), so any wait shorter than that tells the paths apart:
            // the whole WAIT, not a few seconds a busy machine's release may take.
            assertThat(holder.awaitStopped(WAIT))
                    .as("stopped while the pass thread is busy")
                    .isTrue();
            assertThat(ends).containsExactly(LeadershipEndCause.RELEASED);
        } finally {
            plug.countDown();
            holder.stop();
            holder.awaitStopped(WAIT);
            transport.close();
            runtime.close();
        }
    }
}
