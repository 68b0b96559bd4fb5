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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A grant whose state change is queued on a lane another thread runs (the lane is busy
 * for a moment: the watcher's news, a stop, the expiry timer, any thread the OS parks
 * there). The pass goes on and tells the listener at once, while the contender's state
 * still said Standby (found by review). Now the grant is told from the lane event that
 * makes the state hold it, so nobody hears of a grant the state does not show. Forced here
 * with a runtime that parks the thread running the lane.
 */
class BusyLaneGrantTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * Parks {@code holder} inside the lane so that the contender's first pass begins, and then runs
     * elsewhere while {@code holder} still holds the lane; returns the gate that lets it go.
     */
    private static LaneHoldingRuntime.Gate startWithLaneHeld(LaneHoldingRuntime runtime, Contender contender)
            throws InterruptedException {
        return startWithLaneHeld(runtime, contender, new int[1]);
    }

    /** As above; {@code passesSoFar[0]}: the passes done before the granting pass, which then runs while the lane is held. */
    private static LaneHoldingRuntime.Gate startWithLaneHeld(
            LaneHoldingRuntime runtime, Contender contender, int[] passesSoFar) throws InterruptedException {
        int passesBefore = runtime.passesDone.get();
        Thread[] holder = new Thread[1];
        holder[0] = new Thread(contender::start, "lane-holder");
        // 1. The start event schedules the first pass, then the holder parks there: the pass's
        //    begin event finds the lane busy and is queued.
        LaneHoldingRuntime.Gate inStart = runtime.arm(holder[0], LaneHoldingRuntime.Gate.Hook.SCHEDULE);
        holder[0].start();
        assertThat(inStart.awaitEntered(WAIT)).isTrue();
        await().atMost(WAIT).until(() -> runtime.passesDone.get() > passesBefore);
        passesSoFar[0] = runtime.passesDone.get();
        // 2. The holder runs the begin event, hands the pass to a pass thread and parks again,
        //    still inside the lane: the pass runs while the lane is busy.
        LaneHoldingRuntime.Gate inBegin = runtime.arm(holder[0], LaneHoldingRuntime.Gate.Hook.PASSES);
        inStart.open();
        assertThat(inBegin.awaitEntered(WAIT)).isTrue();
        return inBegin;
    }

    @Test
    void workThatReturnsAtOnceGivesTheRoleUpEvenWhenTheGrantWaitedOnABusyLane() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        LaneHoldingRuntime runtime = new LaneHoldingRuntime();
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        Role role = Role.of("dispatcher");
        // Each end, with the leadership that ended, in the order told.
        List<Map.Entry<Leadership, LeadershipEndCause>> ends = new CopyOnWriteArrayList<>();
        // The leadership of the first run of the work (the grant that waited on the busy lane).
        CompletableFuture<Leadership> workReturned = new CompletableFuture<>();
        Contender contender =
                Contender.running(client, role, MemberId.of("n1"), workReturned::complete, new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {}

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add(Map.entry(leadership, cause));
                    }
                });
        try {
            int workersBefore = runtime.workersDone.get();
            int[] passesSoFar = new int[1];
            LaneHoldingRuntime.Gate inBegin = startWithLaneHeld(runtime, contender, passesSoFar);
            // The pass wins the role and ends while the lane is held.
            await().atMost(WAIT).until(() -> runtime.passesDone.get() > passesSoFar[0]);
            inBegin.open();
            // Then the work starts, returns at once and relinquishes the leadership.
            Leadership first = workReturned.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> runtime.workersDone.get() > workersBefore);

            // "A role is never held without its work": the leadership must end, RELEASED.
            // Wait for the end of that leadership, not for "no leadership and one end": alone, the
            // member is granted the role again a second after (RoleContender.ERROR_BACKOFF), that
            // work returns at once too, and a test thread a second late never sees that state.
            await().atMost(WAIT).until(() -> !ends.isEmpty());
            assertThat(ends.get(0)).as("the first end told").isEqualTo(Map.entry(first, LeadershipEndCause.RELEASED));
            assertThat(first.state()).isEqualTo(Leadership.State.RELEASED);
            assertThat(contender.leadership())
                    .as("the leadership whose work returned")
                    .isNotEqualTo(Optional.of(first));
        } finally {
            contender.stop();
            contender.awaitStopped(WAIT);
            transport.close();
            runtime.close();
        }
    }

    @Test
    void theGrantListenerSeesTheLeadershipItWasGranted() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        LaneHoldingRuntime runtime = new LaneHoldingRuntime();
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        Role role = Role.of("controller");
        CompletableFuture<Optional<Leadership>> seenInGrant = new CompletableFuture<>();
        CompletableFuture<Boolean> releasedInGrant = new CompletableFuture<>();
        Contender[] self = new Contender[1];
        // The listener's calls wait here until the test runs them: what was told, and when, is exact.
        List<Runnable> told = new CopyOnWriteArrayList<>();
        self[0] = new Contender(
                client,
                role,
                MemberId.of("n1"),
                new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        seenInGrant.complete(self[0].leadership());
                        // An operator's release right after the grant (a drain, a health check that fails).
                        releasedInGrant.complete(self[0].release());
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
                },
                told::add);
        try {
            int[] passesSoFar = new int[1];
            LaneHoldingRuntime.Gate inBegin = startWithLaneHeld(runtime, self[0], passesSoFar);
            // The granting pass ends while the lane is held: nothing may tell of a grant the state does not hold yet.
            await().atMost(WAIT).until(() -> runtime.passesDone.get() > passesSoFar[0]);
            assertThat(told)
                    .as("listener calls issued while the grant waited on the lane")
                    .isEmpty();
            inBegin.open();
            await().atMost(WAIT).until(() -> !told.isEmpty());
            told.remove(0).run();
            Optional<Leadership> seen = seenInGrant.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            boolean released = releasedInGrant.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertThat(seen)
                    .as("Contender.leadership() inside Listener.granted")
                    .isPresent();
            assertThat(released)
                    .as("Contender.release() inside Listener.granted")
                    .isTrue();
        } finally {
            self[0].stop();
            // The listener calls the test left queued (the release's end) are run now: waiting
            // on them kept the stop from completing for all of WAIT, ten idle seconds a build.
            long until = System.nanoTime() + WAIT.toNanos();
            do {
                while (!told.isEmpty()) {
                    told.remove(0).run();
                }
            } while (!self[0].awaitStopped(Duration.ofMillis(20)) && System.nanoTime() < until);
            transport.close();
            runtime.close();
        }
    }

    /**
     * {@code awaitListener} is what a caller uses to know every listener call so far has
     * run (the Spring loop does, before it stops the work). With the grant's state change
     * still queued on a busy lane, the grant's listener call is not even issued yet: it
     * must not say "all told" then, and must say it once the grant was told.
     */
    @Test
    void awaitListenerWaitsForAGrantStillQueuedOnABusyLane() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        LaneHoldingRuntime runtime = new LaneHoldingRuntime();
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        List<Leadership> granted = new CopyOnWriteArrayList<>();
        Contender contender = new Contender(client, Role.of("scheduler"), MemberId.of("n1"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                granted.add(leadership);
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
        try {
            int[] passesSoFar = new int[1];
            LaneHoldingRuntime.Gate inBegin = startWithLaneHeld(runtime, contender, passesSoFar);
            await().atMost(WAIT).until(() -> runtime.passesDone.get() > passesSoFar[0]);
            // The lane is held by a parked thread: nothing posted to it can run, however long this waits.
            assertThat(contender.awaitListener(Duration.ofMillis(200)))
                    .as("all told, with the grant queued")
                    .isFalse();
            assertThat(granted).isEmpty();
            inBegin.open();
            assertThat(contender.awaitListener(WAIT))
                    .as("all told, once the lane ran")
                    .isTrue();
            assertThat(granted).as("told before awaitListener returned").hasSize(1);
        } finally {
            contender.stop();
            contender.awaitStopped(WAIT);
            transport.close();
            runtime.close();
        }
    }
}
