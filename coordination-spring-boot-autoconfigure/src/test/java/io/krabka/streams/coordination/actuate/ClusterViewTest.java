package io.krabka.streams.coordination.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The endpoint's view of the cluster on a ticker the test moves: its reads run when the test
 * says, so a read's start, its length and the requests around it are exact.
 */
class ClusterViewTest {

    private static final Duration MAX_AGE = Duration.ofSeconds(1);
    private static final Duration BUDGET = Duration.ofSeconds(2);

    private final AtomicLong ticker = new AtomicLong();
    private final List<Runnable> reads = new ArrayList<>();
    private final ClusterView view = new ClusterView(
            Map::of,
            reads::add,
            ticker::get,
            InstantSource.fixed(Instant.parse("2026-12-07T12:00:00Z")),
            MAX_AGE,
            BUDGET);

    private void at(double seconds) {
        ticker.set(Math.round(seconds * 1e9));
    }

    /** Lets the reads started so far return now. */
    private void readsReturn() {
        List<Runnable> due = List.copyOf(reads);
        reads.clear();
        due.forEach(Runnable::run);
    }

    @Test
    void theFirstRequestAfterAQuietSpellIsToldItsViewIsOldUntilItsReadReturns() {
        at(0);
        view.now();
        readsReturn();

        at(10);
        ClusterView.Seen quiet = view.now();
        assertThat(quiet.reading()).isTrue();
        assertThat(quiet.ageMillis()).isEqualTo(10_000L);
        assertThat(quiet.problem())
                .isEqualTo("the cluster's view is 10000 ms old (nothing asked for it lately);"
                        + " a new read is under way: ask again shortly");
        at(10.5);
        assertThat(view.now().problem()).startsWith("the cluster's view is 10500 ms old");

        readsReturn();
        ClusterView.Seen fresh = view.now();
        assertThat(fresh.problem()).isNull();
        assertThat(fresh.ageMillis()).as("the read began at 10 s").isEqualTo(500L);
    }

    /** Steady requests with slow reads: the view gets old, but nothing was left unasked. */
    @Test
    void slowReadsUnderSteadyRequestsAreNoQuietSpell() {
        at(0);
        view.now();
        readsReturn();

        at(1.0); // starts a read that takes 1.9 s
        assertThat(view.now().problem()).isNull();
        at(1.5);
        assertThat(view.now().problem()).isNull();
        at(2.9);
        readsReturn();
        at(3.0); // the view is 2 s old: a read starts, which takes 6 s
        assertThat(view.now().problem()).isNull();
        at(3.5);
        assertThat(view.now().problem()).isNull();
        at(5.0);
        assertThat(view.now().problem()).isEqualTo("the cluster did not answer within 2 s");
        at(9.0);
        readsReturn();

        at(9.2); // the view is 6.2 s old, but it returned 0.2 s ago
        ClusterView.Seen seen = view.now();
        assertThat(seen.ageMillis()).isEqualTo(6_200L);
        assertThat(seen.reading()).isTrue();
        assertThat(seen.problem()).isNull();
    }

    @Test
    void requestsEveryMaxAgeNeverSeeTheProblem() {
        at(0);
        view.now();
        readsReturn();
        for (int second = 1; second <= 20; second++) {
            at(second);
            assertThat(view.now().problem()).as("at %s s", second).isNull();
            at(second + 0.3);
            readsReturn();
        }
    }
}
