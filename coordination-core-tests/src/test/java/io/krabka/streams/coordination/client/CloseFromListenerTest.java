package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code Contender.close()} called from the contender's own listener (a member that decides in
 * {@code granted()} it must not lead). close() waited for the listener to finish every callback
 * issued so far, the one it was called from included, so it waited out its whole 30 s timeout and
 * held the leadership's {@code ended()} back until then (an outside review).
 */
class CloseFromListenerTest {

    private static final Role ROLE = Role.of("dispatcher");

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final List<String> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void closeFromTheGrantCallbackReleasesWithoutWaitingForItself() {
        CoordinationClient client = new CoordinationClient(
                cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)), LeaseConfig.DEFAULTS, runtime);
        AtomicReference<Contender> self = new AtomicReference<>();
        CompletableFuture<Duration> closeTook = new CompletableFuture<>();
        Contender contender = new Contender(client, ROLE, MemberId.of("a"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                events.add(runtime.elapsed().toMillis() + " granted");
                long start = runtime.nanoTime();
                self.get().close();
                closeTook.complete(Duration.ofNanos(runtime.nanoTime() - start));
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                events.add(runtime.elapsed().toMillis() + " ended " + cause);
            }
        });
        self.set(contender);
        contender.start();
        assertThat(runtime.advanceUntil(closeTook::isDone, Duration.ofMinutes(2)))
                .isTrue();
        runtime.advance(Duration.ofSeconds(1));
        assertThat(closeTook.join())
                .as("close() called from granted(); events %s", events)
                .isLessThan(Duration.ofSeconds(5));
        assertThat(events).as("the listener is told once granted() returned").hasSize(2);
        assertThat(events.get(1)).endsWith("ended RELEASED");
        assertThat(contender.isRunning()).isFalse();
    }
}
