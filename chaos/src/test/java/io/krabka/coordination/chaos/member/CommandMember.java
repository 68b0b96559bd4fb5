package io.krabka.coordination.chaos.member;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One member JVM of the fault harness. It contends for a role and, while it holds it,
 * dispatches commands the way a control plane should: each command is committed to
 * the command topic in a transaction of the role's producer ({@link Leadership#write}),
 * and only once that commit is acknowledged is the command sent to the device.
 *
 * <p>With {@code requests=<topic>} it also runs a {@link LeaderPipeline} while it holds
 * the role, on a thread of its own beside the dispatch loop: it reads the request topic
 * and writes one command per request to the same command topic, carrying the request's
 * id, committed with the input offsets in one guarded transaction. The pipeline starts
 * with each grant and is stopped (interrupted, joined) when the dispatch loop sees the
 * leadership end; a pipeline that fails while the leadership lives is started again.
 *
 * <p>Every step is one line on stdout, {@code EVENT key=value ...} (see
 * {@link MemberEvent}); the harness redirects it to a file, so lines written before a
 * SIGKILL survive it.
 *
 * <p>{@code mode=unfenced} is the deliberately broken variant the checker must catch:
 * it takes the role normally but writes its commands with a plain producer, outside
 * the role's transactions, and ignores being fenced.
 */
public final class CommandMember {

    /** How long a stopped pipeline may take to finish its write in flight. */
    private static final Duration PIPELINE_STOP = Duration.ofSeconds(10);

    private final Map<String, String> args;
    private final PrintStream out =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    private final MemberId me;
    private final Role role;
    private final String commandTopic;
    private final boolean unfenced;
    private final Duration interval;
    private final int devicePort;
    private final String requestTopic;
    private final Duration batchWait;
    private LeaderPipeline pipeline;
    private Socket device;
    private BufferedReader deviceIn;
    private PrintWriter deviceOut;
    private long reportedMalformed;

    private CommandMember(Map<String, String> args) {
        this.args = args;
        this.me = MemberId.of(args.get("member"));
        this.role = Role.of(args.get("role"));
        this.commandTopic = args.get("commands");
        this.unfenced = "unfenced".equals(args.getOrDefault("mode", "fenced"));
        this.interval = Duration.ofMillis(Long.parseLong(args.getOrDefault("interval-ms", "100")));
        this.devicePort = Integer.parseInt(args.get("device-port"));
        this.requestTopic = args.get("requests");
        this.batchWait = Duration.ofMillis(Long.parseLong(args.getOrDefault("batch-wait-ms", "100")));
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        new CommandMember(args).run();
    }

    private Map<String, Object> connection() {
        Map<String, Object> connection = new HashMap<>();
        connection.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        // A cut connection (the proxy drops the bytes) must time out well inside a lease.
        connection.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 3000);
        connection.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        connection.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, 2000);
        connection.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, 3000);
        return connection;
    }

    private void run() throws InterruptedException {
        LeaseConfig lease = new LeaseConfig(
                Duration.ofMillis(Long.parseLong(args.get("lease-ms"))),
                Duration.ofMillis(Long.parseLong(args.get("renew-ms"))),
                Duration.ofMillis(Long.parseLong(args.get("stagger-ms"))));
        TopicSpec topic = TopicSpec.DEFAULTS
                .withPartitions(Integer.parseInt(args.get("partitions")))
                .withReplicationFactor(Integer.parseInt(args.get("replication")))
                .withCreate(false);
        Map<String, Object> connection = connection();
        if (requestTopic != null) {
            // Through the member's proxies like every other client of it: a cut cuts the pipeline too.
            pipeline = LeaderPipeline.create(
                    connection, PipelineSettings.of(role, requestTopic).withMaxBatchWait(batchWait), this::commandsFor);
        }
        emit(MemberEvent.START, "pid=" + ProcessHandle.current().pid());
        // As the starter does: operations may wait 10 s, a transaction lives at most one lease.
        try (KafkaCoordinationTransport transport =
                        KafkaCoordinationTransport.create(connection, topic, Duration.ofSeconds(10), lease.duration());
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system());
                KafkaProducer<byte[], byte[]> plain = unfenced ? plainProducer(connection) : null) {
            while (true) {
                Leadership leadership;
                try {
                    leadership = client.acquire(role, me, Duration.ofSeconds(2));
                } catch (CoordinationTimeoutException notYet) {
                    reportMalformed(client);
                    continue;
                } catch (CoordinationException e) {
                    emit(MemberEvent.ERROR, "detail=" + oneWord(e));
                    reportMalformed(client);
                    Thread.sleep(200); // back-off before contending again, not synchronisation
                    continue;
                }
                FencingToken token = leadership.token();
                emit(
                        MemberEvent.GRANTED,
                        "term=" + token.term() + " producerId=" + token.producerId() + " epoch="
                                + token.producerEpoch());
                dispatchWhileLeading(client, leadership, plain);
            }
        }
    }

    private void dispatchWhileLeading(
            CoordinationClient client, Leadership leadership, KafkaProducer<byte[], byte[]> plain)
            throws InterruptedException {
        long term = leadership.term();
        Thread pipelineThread = startPipeline(leadership);
        try {
            for (long seq = 0; ; seq++) {
                reportMalformed(client);
                pipelineThread = restartIfFailed(pipelineThread, leadership);
                try {
                    if (!unfenced && leadership.expired()) {
                        emit(MemberEvent.LOST, "term=" + term + " cause=EXPIRED");
                        leadership.abandon();
                        return;
                    }
                    long began = System.currentTimeMillis();
                    byte[] command = Command.encode(me.value(), term, seq, began);
                    ProducerRecord<byte[], byte[]> record =
                            new ProducerRecord<>(commandTopic, role.name().getBytes(StandardCharsets.UTF_8), command);
                    long offset;
                    if (unfenced) {
                        renewIgnoringFencing(leadership);
                        offset = plain.send(record).get().offset();
                    } else {
                        offset = leadership.write(record).offset();
                    }
                    emit(MemberEvent.ACK, "term=" + term + " seq=" + seq + " began=" + began + " offset=" + offset);
                    dispatch(term, seq);
                } catch (FencedException e) {
                    emit(MemberEvent.LOST, "term=" + term + " cause=FENCED");
                    leadership.abandon();
                    return;
                } catch (CoordinationException e) {
                    emit(MemberEvent.LOST, "term=" + term + " cause=ERROR detail=" + oneWord(e));
                    leadership.abandon();
                    return;
                } catch (java.util.concurrent.ExecutionException e) {
                    emit(MemberEvent.ERROR, "detail=" + oneWord(e));
                }
                Thread.sleep(interval.toMillis()); // the dispatch rate of this control plane
            }
        } finally {
            stopPipeline(pipelineThread);
        }
    }

    /** The pipeline's processing: one command per request, stamped with the leadership's member and term. */
    private List<ProducerRecord<byte[], byte[]>> commandsFor(
            List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership) {
        long began = System.currentTimeMillis(); // before the batch's transaction begins
        byte[] key = role.name().getBytes(StandardCharsets.UTF_8);
        List<ProducerRecord<byte[], byte[]>> commands = new ArrayList<>(batch.size());
        for (ConsumerRecord<byte[], byte[]> request : batch) {
            String id = new String(request.value(), StandardCharsets.UTF_8);
            commands.add(new ProducerRecord<>(
                    commandTopic, key, Command.encodeForRequest(me.value(), leadership.term(), began, id)));
        }
        return commands;
    }

    /** Runs the pipeline under {@code leadership} on a thread of its own; null without a request topic. */
    private Thread startPipeline(Leadership leadership) {
        if (pipeline == null) {
            return null;
        }
        Thread thread = new Thread(() -> runPipeline(leadership), "pipeline-" + leadership.term());
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private void runPipeline(Leadership leadership) {
        long term = leadership.term();
        emit(MemberEvent.PIPELINE, "term=" + term + " state=STARTED");
        String end;
        try {
            pipeline.run(leadership);
            end = "state=ENDED";
        } catch (FencedException e) {
            end = "state=FENCED";
        } catch (Exception e) {
            end = "state=FAILED detail=" + oneWord(e);
        }
        emit(
                MemberEvent.PIPELINE,
                "term=" + term + " " + end + " processed=" + pipeline.processedRecords() + " batches="
                        + pipeline.committedBatches());
    }

    /**
     * A pipeline run that failed while the leadership lives (metadata that could not be read
     * behind a cut, say) is started again; one that ended with the leadership is not.
     */
    private Thread restartIfFailed(Thread thread, Leadership leadership) {
        if (thread != null && !thread.isAlive() && leadership.isActive()) {
            return startPipeline(leadership);
        }
        return thread;
    }

    /** Interrupts the pipeline and waits for it: its write in flight completes or fails first. */
    private void stopPipeline(Thread thread) throws InterruptedException {
        if (thread == null) {
            return;
        }
        thread.interrupt();
        thread.join(PIPELINE_STOP.toMillis());
        if (thread.isAlive()) {
            emit(MemberEvent.ERROR, "detail=pipeline_" + thread.getName() + "_still_running_after_" + PIPELINE_STOP);
        }
    }

    /** The broken variant keeps its lease record fresh when it can and shrugs off being fenced. */
    private static void renewIgnoringFencing(Leadership leadership) {
        try {
            if (leadership.isActive() && leadership.renewDue()) {
                leadership.renew();
            }
        } catch (CoordinationException ignoredOnPurpose) {
            // This is the defect under test: a member that does not care whether it was deposed.
        }
    }

    private static KafkaProducer<byte[], byte[]> plainProducer(Map<String, Object> connection) {
        Map<String, Object> settings = new HashMap<>(connection);
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaProducer<>(settings);
    }

    /** Sends a committed command to the device and records its answer. */
    private void dispatch(long term, long seq) {
        try {
            if (device == null) {
                device = new Socket("127.0.0.1", devicePort);
                deviceIn = new BufferedReader(new InputStreamReader(device.getInputStream(), StandardCharsets.UTF_8));
                deviceOut = new PrintWriter(device.getOutputStream(), true, StandardCharsets.UTF_8);
            }
            deviceOut.println(me.value() + " " + term + " " + seq);
            String answer = deviceIn.readLine();
            emit(MemberEvent.DISPATCH, "term=" + term + " seq=" + seq + " answer=" + answer);
        } catch (IOException e) {
            emit(MemberEvent.ERROR, "detail=device:" + oneWord(e));
            closeDevice();
        }
    }

    private void closeDevice() {
        try {
            if (device != null) {
                device.close();
            }
        } catch (IOException ignored) {
            // reconnects on the next dispatch
        }
        device = null;
    }

    private void reportMalformed(CoordinationClient client) {
        long malformed = client.malformedRecords();
        if (malformed != reportedMalformed) {
            reportedMalformed = malformed;
            emit(MemberEvent.MALFORMED, "count=" + malformed);
        }
    }

    private void emit(MemberEvent event, String fields) {
        out.println(event + " at=" + System.currentTimeMillis() + " member=" + me.value() + " " + fields);
    }

    private static String oneWord(Exception e) {
        return (e.getClass().getSimpleName() + ":" + e.getMessage()).replaceAll("\\s+", "_");
    }
}
