package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeadershipReleasedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a listener is told when a leadership ends: a cause exception only when something failed. */
class EndCauseTest {

    private static final Role ROLE = Role.of("dispatcher");

    private record End(LeadershipEndCause cause, Optional<Throwable> failure) {}

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final List<End> ends = new CopyOnWriteArrayList<>();
    private final Contender contender = new Contender(
            new CoordinationClient(
                    cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)), LeaseConfig.DEFAULTS, runtime),
            ROLE,
            MemberId.of("n1"),
            new Contender.Listener() {
                @Override
                public void granted(Leadership leadership) {}

                @Override
                public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                    ends.add(new End(cause, Optional.ofNullable(failure)));
                }
            });

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void workThatStopsBecauseItsLeadershipWasReleasedReportsARelease() {
        Leadership leadership = granted();
        leadership.close();
        // The work's next write failed as every write of an ended leadership does, and the
        // work gave the role up with that exception, before the contender's next pass.
        FencedException ended = assertWriteFails(leadership);
        contender.relinquish(leadership, ended);
        runtime.advance(Duration.ofMillis(100));

        assertThat(ends).containsExactly(new End(LeadershipEndCause.RELEASED, Optional.empty()));
    }

    @Test
    void workThatFailsOnItsOwnReportsItsFailure() {
        Leadership leadership = granted();
        IllegalStateException broken = new IllegalStateException("the device refused the command");
        contender.relinquish(leadership, broken);
        runtime.advance(Duration.ofMillis(100));

        assertThat(ends).containsExactly(new End(LeadershipEndCause.FAILED, Optional.of(broken)));
    }

    @Test
    void aWriteAfterAPlannedEndThrowsLeadershipReleasedExceptionAndAfterAFenceAPlainFencedException() {
        Leadership released = granted();
        released.close();
        FencedException planned = assertWriteFails(released);
        assertThat(planned).isInstanceOf(LeadershipReleasedException.class);
        assertThat(planned.endCause()).isEqualTo(LeadershipEndCause.RELEASED);

        runtime.advanceUntil(
                () -> contender.leadership().filter(Leadership::isActive).isPresent(), Duration.ofSeconds(5));
        Leadership fenced = contender.leadership().orElseThrow();
        // Another member's InitProducerId for the role: the broker refuses this epoch from now on.
        cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)).initEpoch(ROLE);
        FencedException deposed = assertWriteFails(fenced);
        assertThat(deposed).isNotInstanceOf(LeadershipReleasedException.class);
        assertThat(deposed.endCause()).isEqualTo(LeadershipEndCause.FENCED);
    }

    private Leadership granted() {
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(5)))
                .isTrue();
        return contender.leadership().orElseThrow();
    }

    private static FencedException assertWriteFails(Leadership leadership) {
        try {
            leadership.write(List.of());
        } catch (FencedException e) {
            return e;
        }
        throw new AssertionError("a write of a released leadership succeeded");
    }
}
