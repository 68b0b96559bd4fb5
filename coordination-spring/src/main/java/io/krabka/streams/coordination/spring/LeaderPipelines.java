package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.pipeline.BatchProcessor;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;

/**
 * The {@link LeaderListener} pipelines of this member, built on Spring Kafka's factories:
 * the consumer factory's settings (connection, security) for the input, its
 * deserializers and the producer factory's serializers for the listener methods.
 */
public final class LeaderPipelines implements DisposableBean {

    private final ConsumerFactory<?, ?> consumers;
    private final ProducerFactory<?, ?> producers;
    private final CoordinationRuntime runtime;
    private final InputConsumers inputs;
    // Built when first asked for (serdes()): an application without listeners needs no serializers.
    private @Nullable PipelineSerdes serdes;
    private final List<Entry> entries = new ArrayList<>();

    private static final Logger log = LoggerFactory.getLogger(LeaderPipelines.class);

    /** One pipeline, with the role it runs under and the listener it serves. */
    public record Entry(Role role, String listener, LeaderPipeline pipeline) {}

    /**
     * Where a pipeline's input consumers come from: byte-array consumers configured as
     * {@link LeaderPipeline#consumerSettings} says. Kafka consumers by default; the test
     * kit's read an in-memory cluster.
     */
    @FunctionalInterface
    public interface InputConsumers {
        Consumer<byte[], byte[]> create(PipelineSettings settings);
    }

    public LeaderPipelines(ConsumerFactory<?, ?> consumers, ProducerFactory<?, ?> producers) {
        this(consumers, producers, CoordinationRuntime.shared());
    }

    /** Pipelines reading with Kafka consumers, prepared and closed on {@code runtime}'s workers. */
    public LeaderPipelines(
            ConsumerFactory<?, ?> consumers, ProducerFactory<?, ?> producers, CoordinationRuntime runtime) {
        this(
                consumers,
                producers,
                runtime,
                settings -> new KafkaConsumer<>(
                        LeaderPipeline.consumerSettings(consumers.getConfigurationProperties(), settings)));
    }

    /**
     * Pipelines reading with the consumers of {@code inputs}, and with the deserializers and
     * serializers of Spring Kafka's factories.
     */
    public LeaderPipelines(
            ConsumerFactory<?, ?> consumers,
            ProducerFactory<?, ?> producers,
            CoordinationRuntime runtime,
            InputConsumers inputs) {
        this.consumers = consumers;
        this.producers = producers;
        this.runtime = runtime;
        this.inputs = inputs;
    }

    /**
     * Builds the pipeline of one listener. Two pipelines must not commit offsets of the
     * same topic in the same group: each would skip or repeat the other's input.
     */
    synchronized LeaderPipeline create(
            Role role, String listener, PipelineSettings settings, Function<PipelineSerdes, BatchProcessor> processor) {
        for (Entry entry : entries) {
            PipelineSettings other = entry.pipeline().settings();
            if (other.groupId().equals(settings.groupId())
                    && other.inputTopics().stream().anyMatch(settings.inputTopics()::contains)) {
                throw new IllegalStateException(
                        listener + " and " + entry.listener() + " both read " + other.inputTopics() + " with group "
                                + settings.groupId() + ": give one of them its own groupId");
            }
        }
        LeaderPipeline pipeline =
                new LeaderPipeline(settings, () -> inputs.create(settings), processor.apply(serdes()), runtime);
        entries.add(new Entry(role, listener, pipeline));
        // A standby gets its consumer connected now, so a grant waits for neither; only a head start.
        runtime.workers().execute(() -> {
            try {
                pipeline.prepare();
            } catch (RuntimeException e) {
                log.warn(
                        "{} could not prepare its input consumer ({}); it tries again when granted: {}",
                        listener,
                        settings.inputTopics(),
                        e.getMessage());
            }
        });
        return pipeline;
    }

    /**
     * The deserializers and serializers the listener methods read and write with: those of
     * Spring Kafka's factories, built the first time they are asked for.
     */
    public synchronized PipelineSerdes serdes() {
        if (serdes == null) {
            serdes = PipelineSerdes.of(consumers, producers);
        }
        return serdes;
    }

    /** Closes every pipeline's consumer. */
    @Override
    public synchronized void destroy() {
        entries.forEach(entry -> entry.pipeline().close());
    }

    /** Every pipeline built so far. */
    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** The pipelines of {@code role}. */
    public synchronized List<Entry> entries(Role role) {
        return entries.stream().filter(entry -> entry.role().equals(role)).toList();
    }
}
