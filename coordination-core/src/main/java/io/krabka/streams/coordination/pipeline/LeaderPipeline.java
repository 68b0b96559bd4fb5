package io.krabka.streams.coordination.pipeline;

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
    /**
     * Writes of a batch that fail in a row (not fenced, not refused for one record) before
     * the run gives up with the last failure, so the leadership ends FAILED and shows.
     */
    static final int MAX_WRITE_ATTEMPTS = 5;
    /** The pause before the first retry of a failed write; it doubles for each next one. */
    private static final Duration FIRST_RETRY_PAUSE = Duration.ofMillis(200);

    private final PipelineSettings settings;
    private final PipelineConsumers consumers;
    private final BatchProcessor processor;
    /** Its ticker paces batches; its workers close consumers away from the interrupts that end runs. */
    private final CoordinationRuntime runtime;

    private final AtomicLong processedRecords = new AtomicLong();
    private final AtomicLong committedBatches = new AtomicLong();
    private final OutputTopics outputTopics;
    private volatile long lag = -1;

    /**
     * A pipeline whose consumers come from {@code consumers}; each must be a byte-array
     * consumer configured as {@link #consumerSettings} says.
     */
    public LeaderPipeline(
            PipelineSettings settings, Supplier<Consumer<byte[], byte[]>> consumers, BatchProcessor processor) {
        this(settings, consumers, processor, CoordinationRuntime.shared());
    }

    /**
     * A pipeline whose consumers come from {@code consumers}, paced by {@code runtime}'s
     * ticker, closing its consumers on the runtime's workers.
     */
    public LeaderPipeline(
            PipelineSettings settings,
            Supplier<Consumer<byte[], byte[]>> consumers,
            BatchProcessor processor,
            CoordinationRuntime runtime) {
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.consumers = new PipelineConsumers(Objects.requireNonNull(consumers, "consumers"), runtime);
        this.processor = Objects.requireNonNull(processor, "processor");
        this.outputTopics = new OutputTopics(settings);
    }

    /** A pipeline reading with Kafka consumers built from these connection settings. */
    public static LeaderPipeline create(
            Map<String, Object> connection, PipelineSettings settings, BatchProcessor processor) {
        return create(connection, settings, processor, CoordinationRuntime.shared());
    }

    /** A pipeline reading with Kafka consumers built from these connection settings, on {@code runtime}. */
    public static LeaderPipeline create(
            Map<String, Object> connection,
            PipelineSettings settings,
            BatchProcessor processor,
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
     * is interrupted (both return normally, after the write in flight completed; a batch
     * being processed then is dropped), or something fails.
     *
     * <p>An input record whose outputs the cluster refuses for what they are (too large
     * for their topic, invalid, for a topic or partition that does not exist) is isolated
     * from its batch and goes to its dead-letter topic ({@link PipelineSettings#deadLetters()});
     * the other records' outputs are written. A write that fails otherwise is retried from
     * the committed offsets after a pause that doubles from 200 ms, up to
     * {@value #MAX_WRITE_ATTEMPTS} attempts in a row; then the run fails with the last failure.
     *
     * @throws FencedException when a write found the leadership over
     * @throws CoordinationConfigurationException when an input topic, or with dead letters a
     *     dead-letter topic, does not exist, or a record whose outputs the cluster refuses
     *     cannot be dead-lettered
     * @throws CoordinationException when writes failed {@value #MAX_WRITE_ATTEMPTS} times in a row
     * @throws Exception what the processor threw while the leadership lasted; its batch was not written
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
            log.info(
                    "{} runs the pipeline of role {} over {} (group {}) under term {}",
                    leadership.member(),
                    leadership.role(),
                    partitions,
                    settings.groupId(),
                    leadership.term());
            outputTopics.requireDeadLetterTopics(consumer);
            BatchReader batches = new BatchReader(consumer, settings, runtime, behind -> lag = behind);
            BatchWrites writes = new BatchWrites(settings, processor, outputTopics, processedRecords, committedBatches);
            int failures = 0;
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
                        log.info(
                                "{} reads partitions {} added to the input of the pipeline of role {} under term {}",
                                leadership.member(),
                                added,
                                leadership.role(),
                                leadership.term());
                    }
                }
                List<ConsumerRecord<byte[], byte[]>> batch = batches.next(writeStarted);
                if (batch.isEmpty()) {
                    continue;
                }
                writeStarted = runtime.nanoTime();
                try {
                    if (!writes.write(batch, leadership, consumer)) {
                        break;
                    }
                    failures = 0;
                } catch (FencedException
                        | CoordinationAuthorizationException
                        | CoordinationConfigurationException ended) {
                    // Over, refused by an ACL, or a setting to fix: every retry would end the same.
                    throw ended;
                } catch (CoordinationException failed) {
                    if (Thread.currentThread().isInterrupted() || !leadership.isActive()) {
                        return;
                    }
                    if (++failures >= MAX_WRITE_ATTEMPTS) {
                        throw new CoordinationException(
                                "a pipeline transaction of role " + leadership.role() + " (group "
                                        + settings.groupId() + ") failed " + failures
                                        + " times in a row; the last time: "
                                        + failed.getMessage(),
                                failed);
                    }
                    // What of the batch is visible the committed offsets say: all of it, none, or
                    // the parts written before (while a refused record was being isolated).
                    Duration pause = retryPause(failures);
                    log.warn(
                            "A pipeline transaction of role {} failed (attempt {} of {}); resuming from the committed offsets"
                                    + " in {} ms: {}",
                            leadership.role(),
                            failures,
                            MAX_WRITE_ATTEMPTS,
                            pause.toMillis(),
                            failed.getMessage());
                    outputTopics.forget();
                    try {
                        runtime.sleep(pause);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                    batches.clear();
                    rewound = false;
                    PipelineOffsets.rewind(consumer, partitions);
                    rewound = true;
                }
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

    private static Duration retryPause(int failures) {
        return FIRST_RETRY_PAUSE.multipliedBy(1L << Math.min(failures - 1, 5));
    }

    /**
     * Builds the consumer and fetches the input topics' metadata now, so a grant does not
     * wait for either: a standby calls it. Optional; a run builds what it needs.
     *
     * @throws CoordinationConfigurationException when an input topic, or with dead letters a
     *     dead-letter topic, does not exist
     */
    public void prepare() {
        Consumer<byte[], byte[]> consumer = consumers.take();
        try {
            PipelineOffsets.partitions(consumer, settings);
            outputTopics.requireDeadLetterTopics(consumer);
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
