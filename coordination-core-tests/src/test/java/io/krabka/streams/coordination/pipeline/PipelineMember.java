package io.krabka.streams.coordination.pipeline;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * One member JVM of {@link PipelineFailoverIT}: contends for a role and, while it holds
 * it, runs a {@link LeaderPipeline} that writes one command per request
 * ({@link PipelineLog#oneCommandPerRequest}, stamped with this member and the term).
 *
 * <p>Arguments: {@code bootstrapServers role memberId inputTopic outputTopic leaseMs
 * renewMs staggerMs}. Commands on stdin, one a line: {@code release} releases the role
 * if held (the member keeps contending); {@code stop}, or the end of stdin, closes the
 * contender and exits. Every step is one line on stdout, {@code EVENT at=<ms> key=value ...}
 * (the test redirects it to a file, so lines written before a SIGKILL survive it).
 */
public final class PipelineMember implements Contender.Listener {

    /** The role's coordination topic, as every member and the test's observer use it. */
    static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);

    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(10);
    /** How long an end of a leadership waits for its pipeline thread to stop. */
    private static final Duration WORKER_STOP = Duration.ofSeconds(10);

    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private final LeaderPipeline pipeline;
    private final Map<Leadership, Thread> workers = new ConcurrentHashMap<>();
    private volatile Contender contender;

    private PipelineMember(LeaderPipeline pipeline) {
        this.pipeline = pipeline;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            throw new IllegalArgumentException(
                    "usage: bootstrapServers role memberId inputTopic outputTopic leaseMs renewMs " + "staggerMs");
        }
        Map<String, Object> connection = Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        Role role = Role.of(args[1]);
        MemberId me = MemberId.of(args[2]);
        LeaseConfig lease = new LeaseConfig(
                Duration.ofMillis(Long.parseLong(args[5])),
                Duration.ofMillis(Long.parseLong(args[6])),
                Duration.ofMillis(Long.parseLong(args[7])));
        emit("START", "pid=" + ProcessHandle.current().pid() + " member=" + me.value());
        // As the starter does: a transaction lives at most one lease.
        try (KafkaCoordinationTransport transport =
                        KafkaCoordinationTransport.create(connection, TOPIC, OPERATION_TIMEOUT, lease.duration());
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system())) {
            PipelineMember member = new PipelineMember(LeaderPipeline.create(
                    connection, PipelineSettings.of(role, args[3]), PipelineLog.oneCommandPerRequest(args[4])));
            Contender contender = new Contender(client, role, me, member);
            member.contender = contender;
            contender.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.trim().equals("stop"); line = in.readLine()) {
                if (line.trim().equals("release")) {
                    emit("RELEASE", "released=" + contender.release());
                }
            }
            emit("STOPPING", "");
            contender.close();
            emit("STOPPED", "processed=" + member.pipeline.processedRecords());
        } catch (IOException | RuntimeException e) {
            emit("ERROR", "detail=" + oneWord(e));
            e.printStackTrace();
            System.exit(1);
        }
        // Kafka's and the contender's daemon threads do not keep the JVM alive; the exit makes sure.
        System.exit(0);
    }

    @Override
    public void granted(Leadership leadership) {
        emit("GRANTED", "term=" + leadership.term() + " token=" + leadership.token());
        Thread worker = new Thread(() -> work(leadership), "pipeline-term-" + leadership.term());
        workers.put(leadership, worker);
        worker.start();
    }

    @Override
    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
        emit(
                "ENDED",
                "term=" + leadership.term() + " cause=" + cause
                        + (failure == null ? "" : " failure=" + oneWord(failure)));
        Thread worker = workers.get(leadership);
        if (worker != null) {
            worker.interrupt();
            try {
                worker.join(WORKER_STOP.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (worker.isAlive()) {
                emit("WORKER_STUCK", "term=" + leadership.term());
            }
        }
    }

    /** Runs the pipeline for as long as the leadership lasts; gives the role up when the run ends. */
    private void work(Leadership leadership) {
        long before = pipeline.processedRecords();
        Throwable failure = null;
        String outcome;
        try {
            pipeline.run(leadership);
            outcome = "returned";
        } catch (FencedException fenced) {
            failure = fenced;
            outcome = "fenced cause=" + fenced.endCause();
        } catch (Exception | Error e) {
            failure = e;
            outcome = "failed detail=" + oneWord(e);
        } finally {
            workers.remove(leadership);
        }
        emit(
                "WORKER",
                "term=" + leadership.term() + " processed=" + (pipeline.processedRecords() - before) + " outcome="
                        + outcome);
        contender.relinquish(leadership, failure);
    }

    private static void emit(String event, String fields) {
        OUT.println(event + " at=" + System.currentTimeMillis() + (fields.isEmpty() ? "" : " " + fields));
    }

    private static String oneWord(Throwable e) {
        return (e.getClass().getSimpleName() + ":" + e.getMessage()).replaceAll("\\s+", "_");
    }
}
