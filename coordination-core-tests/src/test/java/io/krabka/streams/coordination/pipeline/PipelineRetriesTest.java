package io.krabka.streams.coordination.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 41, finding 7: a batch whose write keeps failing (its output partition has no
 * leader) is retried a few times with a growing pause, then the run fails, so the
 * leadership ends FAILED and shows, instead of the pipeline rewinding for ever. In memory,
 * on simulated time: no real broker fails a write the same way for as long as needed
 * without also stopping the renewals.
 */
class PipelineRetriesTest {

    private static final Role ROLE = Role.of("dispatcher");
    /**
     * No renewal falls within the test: a renewal waiting for the lock of a write blocked
     * on simulated time would block the simulation itself.
     */
    private static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofMinutes(4), Duration.ofMinutes(2), Duration.ofSeconds(5));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime).operationTimeout(Duration.ofMillis(500));
    private final List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();
    private final Contender contender = new Contender(
            new CoordinationClient(cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)), LEASE, runtime),
            ROLE,
            MemberId.of("n1"),
            new Contender.Listener() {
                @Override
                public void granted(Leadership leadership) {}

                @Override
                public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                    ends.add(cause);
                }
            });

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aBatchWhoseWriteKeepsFailingIsRetriedAFewTimesWithGrowingPausesThenTheRunFails() {
        cluster.produce(new ProducerRecord<>("requests", bytes("k"), bytes("r0")));
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(5)))
                .isTrue();
        Leadership leadership = contender.leadership().orElseThrow();
        List<Long> attempts = new CopyOnWriteArrayList<>();
        LeaderPipeline pipeline = new LeaderPipeline(
                PipelineSettings.of(ROLE, "requests"),
                () -> cluster.consumer(PipelineSettings.defaultGroupId(ROLE)),
                (batch, held) -> {
                    attempts.add(runtime.nanoTime());
                    return List.of(new ProducerRecord<>(
                            "commands", 0, batch.get(0).key(), batch.get(0).value()));
                },
                runtime);
        cluster.freezePartition(new TopicPartition("commands", 0));

        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        runtime.workers().execute(() -> {
            try {
                pipeline.run(leadership);
                ended.complete(null);
            } catch (Throwable failure) {
                ended.complete(failure);
            }
        });
        assertThat(runtime.advanceUntil(ended::isDone, Duration.ofMinutes(2)))
                .as("the run ended")
                .isTrue();

        assertThat(ended.join()).isInstanceOf(CoordinationException.class).hasMessageContaining("commands-0");
        assertThat(attempts).as("attempts of the batch").hasSize(5);
        for (int i = 2; i < attempts.size(); i++) {
            assertThat(attempts.get(i) - attempts.get(i - 1))
                    .as("pause before attempt %d", i + 1)
                    .isGreaterThan(attempts.get(i - 1) - attempts.get(i - 2));
        }
        assertThat(ends).isEmpty();
        assertThat(pipeline.processedRecords()).isZero();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
