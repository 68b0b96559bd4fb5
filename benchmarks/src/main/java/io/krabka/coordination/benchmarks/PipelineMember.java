package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.pipeline.BatchProcessor;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * One member of the pipeline benchmark, in a JVM of its own so that the bench can kill it with SIGKILL: either this
 * library's {@link LeaderPipeline} under a {@link Contender}, or a Kafka Streams application with
 * {@code processing.guarantee=exactly_once_v2}. Both do the same one-to-one map: a command is the request's bytes
 * followed by this member's name, so the bench sees who wrote each command.
 *
 * <p>Arguments {@code key=value}: {@code system} (ours | streams), {@code bootstrap}, {@code input}, {@code output},
 * {@code group} (the role, or the application.id), {@code name}; ours: {@code leaseMs}, {@code renewMs},
 * {@code batchRecords}, {@code batchWaitMs}, {@code bigBatchRecords}; streams: {@code sessionMs}, {@code heartbeatMs},
 * {@code txTimeoutMs}, {@code commitMs} (any of them absent: Kafka Streams' default).
 *
 * <p>Reads commands on stdin ({@code pause}, {@code resume}, {@code stats}; ours also {@code batch big} and {@code batch
 * normal}) and prints events on stdout, one a line:
 * {@code EVENT <name> <System.nanoTime()> [detail]}. {@code System.nanoTime()} is {@code CLOCK_MONOTONIC} on Linux, the
 * same clock in every JVM of the machine, so the bench compares these times with its own.
 */
public final class PipelineMember {

    /** The request's bytes: sequence number (8), scheduled send time in nanos (8), padding. */
    static final int REQUEST_BYTES = 100;

    private PipelineMember() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        if ("ours".equals(a.get("system"))) {
            ours(a);
        } else {
            streams(a);
        }
    }

    static synchronized void event(String name, String detail) {
        System.out.println("EVENT " + name + " " + System.nanoTime() + (detail.isEmpty() ? "" : " " + detail));
        System.out.flush();
    }

    static byte[] command(byte[] request, byte[] tag) {
        byte[] out = new byte[request.length + tag.length];
        System.arraycopy(request, 0, out, 0, request.length);
        System.arraycopy(tag, 0, out, request.length, tag.length);
        return out;
    }

    // ---------------------------------------------------------------------------------------------- this library

    private static void ours(Map<String, String> a) throws Exception {
        String name = a.get("name");
        String output = a.get("output");
        byte[] tag = name.getBytes(StandardCharsets.UTF_8);
        Map<String, Object> connection = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        LeaseConfig lease = new LeaseConfig(
                Duration.ofMillis(Long.parseLong(a.get("leaseMs"))),
                Duration.ofMillis(Long.parseLong(a.get("renewMs"))),
                Duration.ofMillis(500));
        Role role = Role.of(a.get("group"));
        MemberId member = MemberId.of(name);
        PipelineSettings settings = PipelineSettings.of(role, a.get("input"))
                .withMaxBatchRecords(Integer.parseInt(a.get("batchRecords")))
                .withMaxBatchWait(Duration.ofMillis(Long.parseLong(a.get("batchWaitMs"))));
        // A second pipeline of the same role and group with another batch size: "batch big" / "batch normal" switch.
        PipelineSettings big = settings.withMaxBatchRecords(
                Integer.parseInt(a.getOrDefault("bigBatchRecords", a.get("batchRecords"))));
        AtomicBoolean first = new AtomicBoolean();
        Gate gate = new Gate();
        BatchProcessor map = (batch, leadership) -> {
            if (first.compareAndSet(false, true)) {
                event("FIRST", "");
            }
            gate.pass();
            return batch.stream()
                    .map(request ->
                            new ProducerRecord<byte[], byte[]>(output, 0, request.key(), command(request.value(), tag)))
                    .toList();
        };
        LeaderPipeline pipeline = LeaderPipeline.create(connection, settings, map);
        LeaderPipeline bigPipeline = LeaderPipeline.create(connection, big, map);
        Worker worker = new Worker(pipeline);
        KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                connection,
                TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3),
                Duration.ofSeconds(30),
                lease.duration());
        CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system());
        Contender contender = new Contender(client, role, member, new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {
                event("GRANTED", "term=" + leadership.term());
                worker.start(leadership);
            }

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                event("ENDED", cause.name());
                worker.stop();
            }
        });
        contender.start();
        // Registered: a standby in the roster (or the holder). The bench waits for it before a kill.
        Thread registered = new Thread(
                () -> {
                    for (int i = 0; i < 600; i++) {
                        try {
                            if (client.describe(role).roster().stream()
                                    .anyMatch(m -> m.member().equals(member))) {
                                event("REGISTERED", "");
                                return;
                            }
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            return;
                        } catch (RuntimeException e) {
                            Timing.sleep(100);
                        }
                    }
                },
                "registered");
        registered.setDaemon(true);
        registered.start();
        event("STARTED", "");
        commands(line -> {
            switch (line) {
                case "pause" -> {
                    gate.close();
                    event("PAUSED", "");
                }
                case "resume" -> {
                    gate.open();
                    event("RESUMED", "");
                }
                case "batch big" -> {
                    worker.use(bigPipeline);
                    event("BATCH", Integer.toString(big.maxBatchRecords()));
                }
                case "batch normal" -> {
                    worker.use(pipeline);
                    event("BATCH", Integer.toString(settings.maxBatchRecords()));
                }
                case "stats" ->
                    event(
                            "STATS",
                            "records=" + (pipeline.processedRecords() + bigPipeline.processedRecords())
                                    + " transactions="
                                    + (pipeline.committedBatches() + bigPipeline.committedBatches()));
                default -> {}
            }
        });
    }

    /**
     * Holds the next batch in the processor while closed: the pipeline keeps its consumer and its leadership (the
     * contender renews it), like a paused Kafka Streams application keeps its tasks.
     */
    private static final class Gate {
        private boolean closed;

        synchronized void close() {
            closed = true;
        }

        synchronized void open() {
            closed = false;
            notifyAll();
        }

        synchronized void pass() throws InterruptedException {
            while (closed) {
                wait();
            }
        }
    }

    /** Runs a pipeline on its own thread while this member holds the role; {@link #use} swaps the pipeline between runs. */
    private static final class Worker {
        private LeaderPipeline current;
        private Thread thread;

        Worker(LeaderPipeline pipeline) {
            this.current = pipeline;
        }

        synchronized void start(Leadership leadership) {
            thread = new Thread(() -> loop(leadership), "pipeline");
            thread.start();
        }

        /** The next run uses {@code pipeline}: the current run is interrupted, so it returns after its write in flight. */
        synchronized void use(LeaderPipeline pipeline) {
            current = pipeline;
            if (thread != null) {
                thread.interrupt();
            }
        }

        private void loop(Leadership leadership) {
            while (leadership.isActive()) {
                LeaderPipeline pipeline;
                synchronized (this) {
                    if (thread != Thread.currentThread()) {
                        return; // stopped: the leadership ended
                    }
                    Thread.interrupted(); // a swap's interrupt, meant for the run before
                    pipeline = current;
                }
                try {
                    pipeline.run(leadership);
                } catch (Exception e) {
                    event("PIPELINE_FAILED", e.toString().replace('\n', ' '));
                    return;
                }
            }
        }

        synchronized void stop() {
            if (thread != null) {
                thread.interrupt();
                thread = null;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- Kafka Streams

    private static void streams(Map<String, String> a) throws Exception {
        String name = a.get("name");
        byte[] tag = name.getBytes(StandardCharsets.UTF_8);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, a.get("group"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.CLIENT_ID_CONFIG, name);
        p.put(
                StreamsConfig.STATE_DIR_CONFIG,
                Files.createTempDirectory("ks-" + name).toString());
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
        if (a.containsKey("commitMs")) {
            p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.parseLong(a.get("commitMs")));
        }
        if (a.containsKey("sessionMs")) {
            p.put(
                    StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
                    Integer.parseInt(a.get("sessionMs")));
        }
        if (a.containsKey("heartbeatMs")) {
            p.put(
                    StreamsConfig.mainConsumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
                    Integer.parseInt(a.get("heartbeatMs")));
        }
        if (a.containsKey("txTimeoutMs")) {
            p.put(
                    StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
                    Integer.parseInt(a.get("txTimeoutMs")));
        }
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(a.get("input"), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .processValues(() -> new FixedKeyProcessor<byte[], byte[], byte[]>() {
                    private FixedKeyProcessorContext<byte[], byte[]> context;
                    private boolean first = true;

                    @Override
                    public void init(FixedKeyProcessorContext<byte[], byte[]> context) {
                        this.context = context;
                        event("TASK", context.taskId().toString());
                    }

                    @Override
                    public void process(FixedKeyRecord<byte[], byte[]> record) {
                        if (first) {
                            first = false;
                            event("FIRST", "");
                        }
                        context.forward(record.withValue(command(record.value(), tag)));
                    }
                })
                .to(a.get("output"), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        streams.setStateListener((now, before) -> event("STATE", now.name()));
        streams.setUncaughtExceptionHandler(e -> {
            event("STREAMS_FAILED", e.toString().replace('\n', ' '));
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        event("STARTED", "");
        commands(line -> {
            switch (line) {
                case "pause" -> {
                    streams.pause();
                    event("PAUSED", "");
                }
                case "resume" -> {
                    streams.resume();
                    event("RESUMED", "");
                }
                case "stats" ->
                    event(
                            "STATS",
                            "records=" + (long) metric(streams, "process-total") + " transactions="
                                    + (long) metric(streams, "commit-total"));
                default -> {}
            }
        });
    }

    /** A thread-level metric of the one stream thread. */
    private static double metric(KafkaStreams streams, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("stream-thread-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return -1;
    }

    // ---------------------------------------------------------------------------------------------- stdin

    private interface Command {
        void run(String line);
    }

    private static void commands(Command handler) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            handler.run(line.trim());
        }
        // The bench closed stdin: it is done with this member (a kill needs no stdin).
        Runtime.getRuntime().halt(0);
    }
}
