package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ListenerLog;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code Contender.release()} answers whether a held leadership was released. For one a
 * challenger had already fenced (its own write found it FENCED) it answered true, and
 * {@code handOver} answered HANDED_OVER, having also evicted the standbys ahead of the target
 * from the new holder's line (an outside review). Both now say the member was not holding.
 */
class ReleaseAfterFenceTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(5));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport rival = cluster.transport(TOPIC);
    private final ListenerLog log = new ListenerLog();

    @AfterEach
    void close() throws Exception {
        rival.close();
        runtime.close();
    }

    @Test
    void releaseOfALeadershipAlreadyFencedAnswersThatNothingWasReleased() {
        cluster.createTopic("out", 1);
        Contender contender =
                new Contender(new CoordinationClient(transport, CONFIG, runtime), ROLE, MemberId.of("a"), log.of("a"));
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(10)))
                .isTrue();
        Leadership held = contender.leadership().orElseThrow();

        // Another member's InitProducerId fences a; a's next guarded write says so.
        RoleEpoch challenger = rival.initEpoch(ROLE);
        assertThatThrownBy(() -> held.write(new ProducerRecord<>("out", bytes("k"), bytes("v"))))
                .isInstanceOf(FencedException.class);
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);

        boolean released = contender.release();
        runtime.advance(Duration.ofMillis(100));
        contender.awaitListener(Duration.ofSeconds(1));

        assertThat(log.ends()).containsExactly(LeadershipEndCause.FENCED);
        assertThat(released)
                .as("release() of a leadership that was fenced, not released (the listener heard %s)", log)
                .isFalse();
        challenger.close();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void handOverOfALeadershipAlreadyFencedAnswersNotHolding() {
        cluster.createTopic("out", 1);
        Contender a =
                new Contender(new CoordinationClient(transport, CONFIG, runtime), ROLE, MemberId.of("a"), log.of("a"));
        InMemoryCoordinationTransport bTransport = cluster.transport(TOPIC);
        Contender b =
                new Contender(new CoordinationClient(bTransport, CONFIG, runtime), ROLE, MemberId.of("b"), log.of("b"));
        a.start();
        assertThat(runtime.advanceUntil(() -> a.leadership().isPresent(), Duration.ofSeconds(10)))
                .isTrue();
        b.start();
        runtime.advance(Duration.ofSeconds(2));
        Leadership held = a.leadership().orElseThrow();

        RoleEpoch challenger = rival.initEpoch(ROLE);
        assertThatThrownBy(() -> held.write(new ProducerRecord<>("out", bytes("k"), bytes("v"))))
                .isInstanceOf(FencedException.class);

        java.util.concurrent.CompletableFuture<HandoverResult> result = new java.util.concurrent.CompletableFuture<>();
        runtime.workers().execute(() -> result.complete(a.handOver(MemberId.of("b"))));
        assertThat(runtime.advanceUntil(result::isDone, Duration.ofSeconds(20))).isTrue();
        a.awaitListener(Duration.ofSeconds(1));

        assertThat(log.ends()).containsExactly(LeadershipEndCause.FENCED);
        assertThat(result.join())
                .as("handOver of a leadership that a challenger had fenced (the listener heard %s)", log)
                .isEqualTo(HandoverResult.NOT_HOLDING);
        challenger.close();
    }
}
