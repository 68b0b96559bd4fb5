package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exactly-once consume-transform-produce under a leadership: while a member holds a role,
 * it reads the input topics {@code read_committed}, hands batches to a
 * {@link BatchProcessor}, and commits the outputs together with the input offsets in one
 * guarded transaction ({@link Leadership#write(List, ConsumedOffsets)}).
 *
 * <p>The input is read with manual assignment of every partition, so no consumer group
 * rebalances: the role decides who reads. The offsets are committed in the group
 * {@link PipelineSettings#groupId()}, where Kafka keeps consumer offsets; a new holder
 * resumes from them (fetched {@code require_stable}, so never from a transaction the
 * coordinator is still completing). A deposed holder's transaction is fenced by the
 * broker, offsets included: each input record's outputs are committed once, as
 * {@code read_committed} readers see them, across any failover.
 *
 * <pre>{@code
 * LeaderPipeline pipeline = LeaderPipeline.create(connection, PipelineSettings.of(role, "requests"),
 *         (batch, leadership) -> batch.stream().map(r -> new ProducerRecord<>("commands", r.key(), r.value())).toList());
 * // in Contender.Listener.granted: a thread that calls pipeline.run(leadership); in ended: interrupt it.
 * }</pre>
 *
 * <p>One pipeline object may run under many leaderships, one at a time. It keeps its
 * consumer, connected and unassigned, between runs ({@link #prepare()} builds it ahead of
 * the first), so a new leader pays only for the assignment and the committed offsets;
 * {@link #close()} closes it.
 */
public final class LeaderPipeline implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaderPipeline.class);

    /** Records per poll: a batch may span several polls, up to its own size. */
    private static final int MAX_POLL_RECORDS = 500;
    /**
     * How often a running pipeline looks for partitions added to its input topics, and the
     * age at which its consumer refreshes their metadata: a partition added while a member
     * leads is read within about twice this, not at the next grant.
     */
    static final Duration PARTITION_CHECK_INTERVAL = Duration.ofSeconds(10);
    private final PipelineSettings settings;
    private final PipelineConsumers consumers;
    private final BatchProcessor processor;
    /** Its ticker paces batches; its workers close consumers away from the interrupts that end runs. */
    private final CoordinationRuntime runtime;
    private final AtomicLong processedRecords = new AtomicLong();
    private final AtomicLong committedBatches = new AtomicLong();
    private volatile long lag = -1;

    /**
     * A pipeline whose consumers come from {@code consumers}; each must be a byte-array
     * consumer configured as {@link #consumerSettings} says.
     */
    public LeaderPipeline(PipelineSettings settings, Supplier<Consumer<byte[], byte[]>> consumers, BatchProcessor processor) {
        this(settings, consumers, processor, CoordinationRuntime.shared());
    }

    /**
     * A pipeline whose consumers come from {@code consumers}, paced by {@code runtime}'s
     * ticker, closing its consumers on the runtime's workers.
     */
    public LeaderPipeline(PipelineSettings settings, Supplier<Consumer<byte[], byte[]>> consumers, BatchProcessor processor,
            CoordinationRuntime runtime) {
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.consumers = new PipelineConsumers(Objects.requireNonNull(consumers, "consumers"), runtime);
        this.processor = Objects.requireNonNull(processor, "processor");
    }

    /** A pipeline reading with Kafka consumers built from these connection settings. */
    public static LeaderPipeline create(Map<String, Object> connection, PipelineSettings settings, BatchProcessor processor) {
        return create(connection, settings, processor, CoordinationRuntime.shared());
    }

    /** A pipeline reading with Kafka consumers built from these connection settings, on {@code runtime}. */
    public static LeaderPipeline create(Map<String, Object> connection, PipelineSettings settings, BatchProcessor processor,
            CoordinationRuntime runtime) {
        Map<String, Object> consumerSettings = consumerSettings(connection, settings);
        return new LeaderPipeline(settings, () -> new KafkaConsumer<>(consumerSettings), processor, runtime);
    }

    /**
     * The consumer settings of a pipeline: the connection (bootstrap servers, security)
     * plus what exactly-once needs, which overrides anything the connection says:
     * {@code read_committed}, no auto-commit, the pipeline's group (for its committed
     * offsets only), byte-array deserializers, no topic auto-creation, at most 500
     * records per poll (a batch may span polls), and {@code earliest} when the group has
     * no offsets yet, so no input written before the first leader is skipped. Unless the
     * connection sets it, metadata is refreshed every 10 s, so partitions added to an input
     * topic are read without waiting for the next grant.
     */
    public static Map<String, Object> consumerSettings(Map<String, Object> connection, PipelineSettings settings) {
        Map<String, Object> consumer = new HashMap<>(connection);
        consumer.put(ConsumerConfig.GROUP_ID_CONFIG, settings.groupId());
        consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        consumer.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.min(settings.maxBatchRecords(), MAX_POLL_RECORDS));
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumer.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        consumer.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "krabka-pipeline-" + settings.groupId());
        consumer.putIfAbsent(ConsumerConfig.METADATA_MAX_AGE_CONFIG, (int) PARTITION_CHECK_INTERVAL.toMillis());
        return consumer;
    }

    /** What this pipeline reads and how it batches. */
    public PipelineSettings settings() {
        return settings;
    }

    /** Input records whose outputs this member committed, over all its leaderships. */
    public long processedRecords() {
        return processedRecords.get();
    }

    /** Transactions this member committed for the pipeline, over all its leaderships. */
    public long committedBatches() {
        return committedBatches.get();
    }

    /**
     * Input records waiting behind the last committed batch, as of the last fetch, while
     * this member runs the pipeline; -1 when it does not.
     */
    public long lag() {
        return lag;
    }

    /**
     * Runs the pipeline under {@code leadership} until the leadership ends or this thread
     * is interrupted (both return normally, after the write in flight completed), or
     * something fails.
     *
     * @throws FencedException when a write found the leadership over
     * @throws CoordinationConfigurationException when an input topic does not exist
     * @throws Exception what the processor threw; its batch was not written
     */
    public void run(Leadership leadership) throws Exception {
        Consumer<byte[], byte[]> consumer = consumers.take();
        boolean reusable = false;
        // False while a fetch of the committed offsets is under way. A consumer left in one
        // (interrupted, or failed) is never kept: KafkaConsumer.committed() answers a later
        // call for the same partitions with that earlier fetch's response, however old, and
        // the next run would resume from offsets a later holder had already committed past
        // (found by the fault harness: a holder frozen inside it, thawed after its lease).
        boolean rewound = false;
        try {
            Set<TopicPartition> partitions = PipelineOffsets.partitions(consumer, settings);
            consumer.assign(partitions);
            // Where the last holder's committed transactions end, whatever this consumer read before.
            PipelineOffsets.rewind(consumer, partitions);
            rewound = true;
            log.info("{} runs the pipeline of role {} over {} (group {}) under term {}", leadership.member(),
                    leadership.role(), partitions, settings.groupId(), leadership.term());
            BatchReader batches = new BatchReader(consumer, settings, runtime, behind -> lag = behind);
            long writeStarted = runtime.nanoTime();
            long partitionsCheckedAt = runtime.nanoTime();
            while (leadership.isActive() && !Thread.currentThread().isInterrupted()) {
                if (runtime.nanoTime() - partitionsCheckedAt >= PARTITION_CHECK_INTERVAL.toNanos()) {
                    partitionsCheckedAt = runtime.nanoTime();
                    Set<TopicPartition> added = new LinkedHashSet<>(PipelineOffsets.partitions(consumer, settings));
                    added.removeAll(partitions);
                    if (!added.isEmpty()) {
                        // Assigning a superset keeps the positions of the partitions read so
                        // far; the new ones start where the group committed, or at their start.
                        partitions = new LinkedHashSet<>(partitions);
                        partitions.addAll(added);
                        consumer.assign(partitions);
                        rewound = false;
                        PipelineOffsets.rewind(consumer, added);
                        rewound = true;
                        log.info("{} reads partitions {} added to the input of the pipeline of role {} under term {}",
                                leadership.member(), added, leadership.role(), leadership.term());
                    }
                }
                List<ConsumerRecord<byte[], byte[]>> batch = batches.next(writeStarted);
                if (batch.isEmpty()) {
                    continue;
                }
                List<ProducerRecord<byte[], byte[]>> outputs = processor.process(batch, leadership);
                writeStarted = runtime.nanoTime();
                try {
                    // An assigned consumer's group metadata has no generation and no member: the
                    // pipeline commits offsets in its group without joining it.
                    leadership.write(outputs, new ConsumedOffsets(consumer.groupMetadata(), PipelineOffsets.nextOffsets(batch)));
                } catch (FencedException ended) {
                    throw ended;
                } catch (CoordinationAuthorizationException refused) {
                    // A refused group or output is refused again on every retry: end the work, named.
                    throw refused;
                } catch (CoordinationException failed) {
                    if (Thread.currentThread().isInterrupted() || !leadership.isActive()) {
                        return;
                    }
                    // Nothing of the batch is visible, or all of it is: the committed offsets say which.
                    log.warn("A pipeline transaction of role {} failed; resuming from the committed offsets: {}",
                            leadership.role(), failed.getMessage());
                    batches.clear();
                    rewound = false;
                    PipelineOffsets.rewind(consumer, partitions);
                    rewound = true;
                    continue;
                }
                processedRecords.addAndGet(batch.size());
                committedBatches.incrementAndGet();
            }
            reusable = true;
        } catch (InterruptException interrupted) {
            // The consumer was interrupted while polling: stop like on any interrupt.
            Thread.currentThread().interrupt();
            reusable = true;
        } finally {
            lag = -1;
            if (reusable && rewound) {
                consumers.giveBack(consumer);
            } else {
                consumers.discard(consumer);
            }
        }
    }

    /**
     * Builds the consumer and fetches the input topics' metadata now, so a grant does not
     * wait for either: a standby calls it. Optional; a run builds what it needs.
     *
     * @throws CoordinationConfigurationException when an input topic does not exist
     */
    public void prepare() {
        Consumer<byte[], byte[]> consumer = consumers.take();
        try {
            PipelineOffsets.partitions(consumer, settings);
        } catch (RuntimeException e) {
            consumers.discard(consumer);
            throw e;
        }
        consumers.giveBack(consumer);
    }

    /** Closes the consumer kept between runs. */
    @Override
    public void close() {
        consumers.close();
    }

    /**
     * The input records no holder has committed yet, as the cluster reports it now: per
     * input partition, its last stable offset minus the group's committed offset. Any
     * member can ask, leader or not.
     *
     * @throws CoordinationException when the cluster does not answer within {@code timeout}
     */
    public static long measureLag(Admin admin, PipelineSettings settings, Duration timeout) {
        return PipelineOffsets.measureLag(admin, settings, timeout);
    }
}
