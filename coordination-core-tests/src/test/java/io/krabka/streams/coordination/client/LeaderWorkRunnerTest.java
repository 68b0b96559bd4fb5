package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.RoleContender;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The core runs a role's work itself (Curator's takeLeadership): its end is the leadership's end, and back. */
class LeaderWorkRunnerTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Role ROLE = Role.of("dispatcher");

    private final InMemoryCluster cluster = new InMemoryCluster();
    private final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
    private final CoordinationClient client =
            new CoordinationClient(transport, LeaseConfig.DEFAULTS, InstantSource.system());
    private final List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private Contender contender;

    @AfterEach
    void closeAll() {
        if (contender != null) {
            contender.close();
        }
        transport.close();
    }

    private Contender.Listener events() {
        return new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ends.add(cause);
                if (failure != null) {
                    failures.add(failure);
                }
            }
        };
    }

    @Test
    void workThatReturnsReleasesTheRoleAndRunsAgainForTheNextGrantUnderItsOwnThreadName() {
        AtomicReference<String> threadName = new AtomicReference<>();
        AtomicReference<Long> term = new AtomicReference<>();
        contender = Contender.running(
                client,
                ROLE,
                MemberId.of("n1"),
                leadership -> {
                    threadName.set(Thread.currentThread().getName());
                    term.set(leadership.term());
                    leadership.write(List.of());
                },
                events());
        contender.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> !ends.isEmpty());
        assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.RELEASED);
        assertThat(threadName.get()).isEqualTo("krabka-work-dispatcher");
        assertThat(term.get()).isPositive();
        // The member contends again after the pause, and the work runs again for the next leadership.
        await().atMost(Duration.ofSeconds(10)).until(() -> ends.size() >= 2);
        assertThat(ends).startsWith(LeadershipEndCause.RELEASED, LeadershipEndCause.RELEASED);
    }

    @Test
    void workThatThrowsEndsTheLeadershipAsFailedWithWhatItThrew() {
        IllegalStateException thrown = new IllegalStateException("the device refused");
        contender = Contender.running(
                client,
                ROLE,
                MemberId.of("n1"),
                leadership -> {
                    throw thrown;
                },
                events());
        contender.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> !ends.isEmpty());
        assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.FAILED);
        assertThat(failures).first().isSameAs(thrown);
    }

    /**
     * Work the cluster refuses (a pipeline without Read on its input or group) is refused
     * again on every grant: the member says so through {@code problem()} (health) and takes
     * the role again only after the refusal back-off, not every second (it crash-looped).
     */
    @Test
    void workTheClusterRefusesEndsFailedNamesTheRefusalAndIsRetriedOnlyAfterTheDenialBackOff() {
        io.krabka.streams.coordination.test.runtime.ManualRuntime runtime =
                new io.krabka.streams.coordination.test.runtime.ManualRuntime();
        try {
            InMemoryCluster simulated = new InMemoryCluster(runtime);
            CoordinationClient onRuntime =
                    new CoordinationClient(simulated.transport(TOPIC), LeaseConfig.DEFAULTS, runtime);
            List<Long> grantedAfterMillis = new CopyOnWriteArrayList<>();
            contender = Contender.running(
                    onRuntime,
                    ROLE,
                    MemberId.of("n1"),
                    leadership -> {
                        grantedAfterMillis.add(runtime.elapsed().toMillis());
                        throw new io.krabka.streams.coordination.CoordinationAuthorizationException(
                                "injected: Not authorized to access group: pipeline-router", null);
                    },
                    events());
            contender.start();

            assertThat(runtime.advanceUntil(() -> ends.size() == 1, Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.FAILED);
            assertThat(contender.problem())
                    .get()
                    .isInstanceOf(io.krabka.streams.coordination.CoordinationAuthorizationException.class);
            assertThat(runtime.advanceUntil(() -> grantedAfterMillis.size() == 2, Duration.ofSeconds(30)))
                    .isTrue();
            assertThat(grantedAfterMillis.get(1) - grantedAfterMillis.get(0))
                    .as("the second grant, not a second after the first")
                    .isGreaterThanOrEqualTo(RoleContender.DENIAL_BACKOFF.toMillis());
            contender.stop();
            assertThat(contender.awaitStopped(Duration.ofSeconds(30))).isTrue();
            contender = null;
        } finally {
            runtime.close();
        }
    }

    /**
     * Issue 41, finding 1: a run that outlives its stop bound must not take the next
     * leadership's run down with it. The first run ignores its interrupt past the 30 s the
     * end waits; the member is granted the role again and the second run starts; then the
     * first returns at last. The second leadership's end must still interrupt the second
     * run at once (it shared the runner's thread field with the first, whose end cleared
     * it, so the second run went on, never interrupted, while the member was a standby).
     */
    @Test
    void aRunThatOutlivesItsStopBoundDoesNotKeepTheNextLeadershipsRunFromBeingInterrupted() {
        io.krabka.streams.coordination.test.runtime.ManualRuntime runtime =
                new io.krabka.streams.coordination.test.runtime.ManualRuntime();
        try {
            InMemoryCluster simulated = new InMemoryCluster(runtime);
            CoordinationClient onRuntime =
                    new CoordinationClient(simulated.transport(TOPIC), LeaseConfig.DEFAULTS, runtime);
            java.util.concurrent.atomic.AtomicBoolean letTheFirstGo = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicBoolean firstReturned = new java.util.concurrent.atomic.AtomicBoolean();
            List<Leadership> leaderships = new CopyOnWriteArrayList<>();
            AtomicReference<Duration> secondInterruptedAt = new AtomicReference<>();
            contender = Contender.running(
                    onRuntime,
                    ROLE,
                    MemberId.of("n1"),
                    leadership -> {
                        leaderships.add(leadership);
                        if (leaderships.size() == 1) {
                            // Gives the role up itself, then ignores the interrupt until the test lets it go.
                            leadership.close();
                            while (!letTheFirstGo.get()) {
                                try {
                                    runtime.sleep(Duration.ofSeconds(1));
                                } catch (InterruptedException ignored) {
                                    // stubborn
                                }
                            }
                            firstReturned.set(true);
                            return;
                        }
                        try {
                            while (true) {
                                runtime.sleep(Duration.ofSeconds(10));
                            }
                        } catch (InterruptedException e) {
                            secondInterruptedAt.set(runtime.elapsed());
                        }
                    },
                    events());
            contender.start();

            // The end waits 30 s for the first run, gives up on it, and the member takes the role again.
            assertThat(runtime.advanceUntil(() -> leaderships.size() == 2, Duration.ofMinutes(2)))
                    .isTrue();
            assertThat(ends).containsExactly(LeadershipEndCause.RELEASED);
            letTheFirstGo.set(true);
            assertThat(runtime.advanceUntil(firstReturned::get, Duration.ofSeconds(5)))
                    .isTrue();
            runtime.advance(Duration.ofSeconds(1));
            assertThat(secondInterruptedAt.get())
                    .as("the second run, still in its leadership")
                    .isNull();

            Duration endedAt = runtime.elapsed();
            leaderships.get(1).close();
            assertThat(runtime.advanceUntil(() -> ends.size() == 2, Duration.ofMinutes(2)))
                    .isTrue();
            assertThat(secondInterruptedAt.get())
                    .as("the second leadership's end interrupted its run")
                    .isNotNull();
            assertThat(runtime.elapsed().minus(endedAt))
                    .as("its end did not wait out the stop bound")
                    .isLessThan(Duration.ofSeconds(5));
            contender.stop();
            assertThat(contender.awaitStopped(Duration.ofSeconds(30))).isTrue();
            contender = null;
        } finally {
            runtime.close();
        }
    }

    @Test
    void theLeadershipsEndInterruptsTheWorkAndThePoolThreadGetsItsNameBack() throws Exception {
        CountDownLatch working = new CountDownLatch(1);
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        AtomicReference<Thread> worker = new AtomicReference<>();
        contender = Contender.running(
                client,
                ROLE,
                MemberId.of("n1"),
                leadership -> {
                    worker.set(Thread.currentThread());
                    working.countDown();
                    try {
                        new CountDownLatch(1).await();
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                    }
                },
                events());
        contender.start();
        assertThat(working.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

        // Stopped, so no later grant reuses the pool thread before it is looked at.
        contender.stop();
        assertThat(contender.awaitStopped(Duration.ofSeconds(10))).isTrue();

        assertThat(ends.get(0)).isEqualTo(LeadershipEndCause.RELEASED);
        assertThat(interrupted.get()).as("the work was interrupted").isTrue();
        // The pool thread runs other tasks next: it must not carry the work's name into them.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> worker.get().getName().equals("krabka-coordination-work"));
    }
}
