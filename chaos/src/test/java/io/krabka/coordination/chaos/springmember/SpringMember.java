package io.krabka.coordination.chaos.springmember;

import io.krabka.coordination.chaos.member.Command;
import io.krabka.coordination.chaos.member.MemberEvent;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * One member JVM of the fault harness as users run the library: a Spring Boot
 * application on the starter. The starter's {@code LeadershipLoop} contends for the role;
 * while this member holds it,
 * <ul>
 * <li>{@link Dispatcher}, an {@code @OnLeadership} method, commits a command every
 * {@code chaos.interval} with a {@link GuardedSender} (the first one at once on grant) and
 * only after the commit was acknowledged sends it to the device;</li>
 * <li>{@link Pipeline}, a {@code @LeaderListener}, turns each request into one command,
 * committed with the input offsets in one guarded transaction;</li>
 * <li>{@link Events} writes the starter's {@code LeadershipGrantedEvent} and
 * {@code LeadershipEndedEvent} as {@code GRANTED} and {@code LOST} lines.</li>
 * </ul>
 * Lines are those of {@link MemberEvent}, on stdout, as {@code CommandMember} writes them.
 * The lease clock ({@code coordinationClock}) is the machine's clock plus a skew the
 * harness writes to {@code clock-file} (milliseconds), so the harness can step it.
 *
 * <p>Arguments: the {@code key=value} pairs {@code CommandMember} takes.
 */
@SpringBootApplication
public class SpringMember {

    /** The role the harness runs (annotations take a constant; the harness passes the same name as {@code role}). */
    public static final String ROLE = "dispatcher";

    static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.kafka.bootstrap-servers", args.get("bootstrap"));
        // A cut connection (the proxy drops the bytes) must time out well inside a lease.
        properties.put("spring.kafka.properties.request.timeout.ms", "3000");
        properties.put("spring.kafka.properties.reconnect.backoff.max.ms", "500");
        properties.put("spring.kafka.properties.socket.connection.setup.timeout.ms", "2000");
        properties.put("spring.kafka.properties.socket.connection.setup.timeout.max.ms", "3000");
        properties.put("spring.kafka.producer.key-serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        properties.put("spring.kafka.producer.value-serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        properties.put("spring.kafka.consumer.key-deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        properties.put("spring.kafka.consumer.value-deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        properties.put("krabka.coordination.member-id", args.get("member"));
        properties.put("krabka.coordination.roles", args.get("role"));
        properties.put("krabka.coordination.lease.duration", args.get("lease-ms") + "ms");
        properties.put("krabka.coordination.lease.renew-interval", args.get("renew-ms") + "ms");
        properties.put("krabka.coordination.lease.challenge-stagger", args.get("stagger-ms") + "ms");
        properties.put("krabka.coordination.operation-timeout", "10s");
        properties.put("krabka.coordination.topic.partitions", args.get("partitions"));
        properties.put("krabka.coordination.topic.replication-factor", args.get("replication"));
        properties.put("krabka.coordination.topic.create", "false");
        properties.put("krabka.coordination.topic.allow-unsafe", Integer.parseInt(args.get("replication")) < 3);
        properties.put("chaos.member", args.get("member"));
        properties.put("chaos.role", args.get("role"));
        properties.put("chaos.commands", args.get("commands"));
        properties.put("chaos.requests", args.get("requests"));
        properties.put("chaos.device-port", args.get("device-port"));
        properties.put("chaos.interval-ms", args.getOrDefault("interval-ms", "100"));
        properties.put("chaos.clock-file", args.getOrDefault("clock-file", ""));
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.main.log-startup-info", "false");
        SpringApplication application = new SpringApplication(SpringMember.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(properties);
        application.setRegisterShutdownHook(true); // SIGTERM: the starter releases the role (the TERM_LEADER fault)
        emit(MemberEvent.START, args.get("member"), "pid=" + ProcessHandle.current().pid());
        application.run();
        // The starter's threads are daemons: main stays until SIGTERM (the shutdown hook closes the context) or SIGKILL.
        try {
            new java.util.concurrent.CountDownLatch(1).await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void emit(MemberEvent event, String member, String fields) {
        OUT.println(event + " at=" + System.currentTimeMillis() + " member=" + member + " " + fields);
    }

    static String oneWord(Throwable e) {
        return (e.getClass().getSimpleName() + ":" + e.getMessage()).replaceAll("\\s+", "_");
    }

    /**
     * The lease clock: this machine's clock plus a skew read from a file the harness
     * writes (a number of milliseconds), polled every 20 ms. Only the lease clock moves:
     * the Kafka clients and the lines this member writes keep the machine's clock.
     */
    @Bean
    InstantSource coordinationClock(@Value("${chaos.clock-file}") String clockFile) {
        AtomicLong skew = new AtomicLong();
        if (!clockFile.isEmpty()) {
            Path file = Path.of(clockFile);
            ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "chaos-clock");
                thread.setDaemon(true);
                return thread;
            });
            poller.scheduleWithFixedDelay(() -> {
                try {
                    if (Files.exists(file)) {
                        String text = Files.readString(file).trim();
                        if (!text.isEmpty()) {
                            skew.set(Long.parseLong(text));
                        }
                    }
                } catch (IOException | NumberFormatException partlyWritten) {
                    // read again on the next poll
                }
            }, 0, 20, TimeUnit.MILLISECONDS);
        }
        return () -> Instant.ofEpochMilli(System.currentTimeMillis() + skew.get());
    }

    /** The starter's leadership events, as lines; and the client's count of skipped records. */
    @Component
    static class Events {

        private final String member;
        private final CoordinationClient client;
        private long reportedMalformed;

        Events(@Value("${chaos.member}") String member, CoordinationClient client) {
            this.member = member;
            this.client = client;
            ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "chaos-malformed");
                thread.setDaemon(true);
                return thread;
            });
            poller.scheduleWithFixedDelay(this::reportMalformed, 100, 100, TimeUnit.MILLISECONDS);
        }

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            emit(MemberEvent.GRANTED, member, "term=" + event.getLeadership().term() + " producerId="
                    + event.getToken().producerId() + " epoch=" + event.getToken().producerEpoch());
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            emit(MemberEvent.LOST, member, "term=" + event.getToken().term() + " cause=" + event.getCause()
                    + event.getFailure().map(failure -> " detail=" + oneWord(failure)).orElse(""));
        }

        private synchronized void reportMalformed() {
            long malformed = client.malformedRecords();
            if (malformed != reportedMalformed) {
                reportedMalformed = malformed;
                emit(MemberEvent.MALFORMED, member, "count=" + malformed);
            }
        }
    }

    /**
     * Role-scoped work: a command every interval, the first at once on grant, each
     * committed by the role's producer and only then sent to the device.
     */
    @Component
    static class Dispatcher {

        private final String member;
        private final String topic;
        private final byte[] key;
        private final long intervalMillis;
        private final int devicePort;
        private Socket device;
        private BufferedReader deviceIn;
        private PrintWriter deviceOut;

        Dispatcher(@Value("${chaos.member}") String member, @Value("${chaos.role}") String role,
                @Value("${chaos.commands}") String topic, @Value("${chaos.interval-ms}") long intervalMillis,
                @Value("${chaos.device-port}") int devicePort) {
            this.member = member;
            this.topic = topic;
            this.key = role.getBytes(StandardCharsets.UTF_8);
            this.intervalMillis = intervalMillis;
            this.devicePort = devicePort;
        }

        @OnLeadership(role = ROLE)
        void dispatch(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            long term = leadership.term();
            for (long seq = 0; ; seq++) {
                long began = System.currentTimeMillis();
                try {
                    RecordMetadata written = commands.send(topic, key, Command.encode(member, term, seq, began));
                    emit(MemberEvent.ACK, member, "term=" + term + " seq=" + seq + " began=" + began + " offset="
                            + written.offset());
                    deliver(term, seq);
                } catch (FencedException fenced) {
                    return; // the leadership is over; the loop reports how it ended
                } catch (CoordinationException failed) {
                    if (Thread.currentThread().isInterrupted() || !leadership.isActive()) {
                        return;
                    }
                    emit(MemberEvent.ERROR, member, "detail=" + oneWord(failed));
                }
                Thread.sleep(intervalMillis); // the dispatch rate of this control plane
            }
        }

        private void deliver(long term, long seq) {
            try {
                if (device == null) {
                    device = new Socket("127.0.0.1", devicePort);
                    deviceIn = new BufferedReader(new InputStreamReader(device.getInputStream(), StandardCharsets.UTF_8));
                    deviceOut = new PrintWriter(device.getOutputStream(), true, StandardCharsets.UTF_8);
                }
                deviceOut.println(member + " " + term + " " + seq);
                String answer = deviceIn.readLine();
                emit(MemberEvent.DISPATCH, member, "term=" + term + " seq=" + seq + " answer=" + answer);
            } catch (IOException e) {
                emit(MemberEvent.ERROR, member, "detail=device:" + oneWord(e));
                try {
                    device.close();
                } catch (IOException | RuntimeException ignored) {
                    // reconnects on the next delivery
                }
                device = null;
            }
        }
    }

    /** The leader pipeline: one command per request, stamped with the member, the term and when its batch was processed. */
    @Component
    static class Pipeline {

        private final String member;
        private final String topic;
        private final byte[] key;

        Pipeline(@Value("${chaos.member}") String member, @Value("${chaos.role}") String role,
                @Value("${chaos.commands}") String topic) {
            this.member = member;
            this.topic = topic;
            this.key = role.getBytes(StandardCharsets.UTF_8);
        }

        @LeaderListener(role = ROLE, topics = "${chaos.requests}", groupId = ROLE + "-pipeline",
                maxBatchWait = "100ms")
        List<ProducerRecord<byte[], byte[]>> onRequests(List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership) {
            long began = System.currentTimeMillis(); // before the batch's transaction begins
            List<ProducerRecord<byte[], byte[]>> commands = new ArrayList<>(batch.size());
            for (ConsumerRecord<byte[], byte[]> request : batch) {
                String id = new String(request.value(), StandardCharsets.UTF_8);
                commands.add(new ProducerRecord<>(topic, key,
                        Command.encodeForRequest(member, leadership.term(), began, id)));
            }
            return commands;
        }
    }
}
