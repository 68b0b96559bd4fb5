package io.krabka.coordination.chaos.springmember;

import io.krabka.coordination.chaos.member.Command;
import io.krabka.coordination.chaos.member.MemberEvent;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
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
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
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

    /**
     * The role with the dispatch loop, the device and the pipeline (annotations take a
     * constant; the harness passes the same name as {@code role}).
     */
    public static final String ROLE = "dispatcher";
    /**
     * The other roles this member contends for, each with a slower dispatch loop of its
     * own: with {@link #ROLE}, eight roles over the harness's three coordination partitions
     * (murmur2 puts role-1 in 0, the dispatcher and role-2..4 in 1, role-5..7 in 2).
     */
    public static final List<String> OTHER_ROLES =
            List.of("role-1", "role-2", "role-3", "role-4", "role-5", "role-6", "role-7");

    /** How many asynchronous sends a bursting dispatcher keeps unacknowledged. */
    static final int BURST_IN_FLIGHT = 2000;

    static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

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
        properties.put(
                "spring.kafka.producer.key-serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        properties.put(
                "spring.kafka.producer.value-serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        properties.put(
                "spring.kafka.consumer.key-deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        properties.put(
                "spring.kafka.consumer.value-deserializer",
                "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        properties.put("krabka.coordination.member-id", args.get("member"));
        properties.put("krabka.coordination.roles", args.get("role") + "," + String.join(",", OTHER_ROLES));
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
        properties.put("chaos.other-interval-ms", args.getOrDefault("other-interval-ms", "500"));
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.main.log-startup-info", "false");
        SpringApplication application = new SpringApplication(SpringMember.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(properties);
        application.setRegisterShutdownHook(true); // SIGTERM: the starter releases the role (the TERM_LEADER fault)
        emit(
                MemberEvent.START,
                args.get("member"),
                "pid=" + ProcessHandle.current().pid());
        CONTROL.follow(args.getOrDefault("control-file", ""));
        application.run();
        // The starter's threads are daemons: main stays until SIGTERM (the shutdown hook closes the context) or
        // SIGKILL.
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

    /** What the harness asks of this member now: see {@link Control}. */
    static final Control CONTROL = new Control();

    /**
     * The lease clock: this machine's clock plus the skew the harness wrote to the control
     * file. Only the lease clock moves: the Kafka clients and the lines this member writes
     * keep the machine's clock.
     */
    @Bean
    InstantSource coordinationClock() {
        return () -> Instant.ofEpochMilli(System.currentTimeMillis() + CONTROL.skewMillis());
    }

    /** Releases {@link #ROLE} through the starter each time the harness asks (its control file's {@code release} count grows). */
    @Component
    static class Releaser {

        Releaser(@Value("${chaos.member}") String member, LeadershipLoop loop) {
            CONTROL.onRelease(() -> {
                try {
                    boolean released = loop.release(Role.of(ROLE));
                    emit(MemberEvent.RELEASE, member, "role=" + ROLE + " released=" + released);
                } catch (RuntimeException failed) {
                    emit(MemberEvent.ERROR, member, "role=" + ROLE + " detail=release:" + oneWord(failed));
                }
            });
        }
    }

    /** The starter's leadership events, as lines; and the client's count of skipped records. */
    @Component
    static class Events {

        private final String member;
        private final CoordinationClient client;
        private long reportedMalformed;
        private long reportedSuspicious;

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
            emit(
                    MemberEvent.GRANTED,
                    member,
                    "role=" + event.role().name() + " term="
                            + event.leadership().term()
                            + " producerId="
                            + event.token().producerId() + " epoch="
                            + event.token().producerEpoch());
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            emit(
                    MemberEvent.LOST,
                    member,
                    "role=" + event.role().name() + " term=" + event.token().term()
                            + " cause=" + event.cause()
                            + event.failure()
                                    .map(failure -> " detail=" + oneWord(failure))
                                    .orElse(""));
        }

        private synchronized void reportMalformed() {
            long malformed = client.malformedRecords();
            if (malformed != reportedMalformed) {
                reportedMalformed = malformed;
                emit(MemberEvent.MALFORMED, member, "count=" + malformed);
            }
            long suspicious = client.suspiciousRecords();
            if (suspicious != reportedSuspicious) {
                reportedSuspicious = suspicious;
                emit(MemberEvent.SUSPICIOUS, member, "count=" + suspicious);
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

        Dispatcher(
                @Value("${chaos.member}") String member,
                @Value("${chaos.role}") String role,
                @Value("${chaos.commands}") String topic,
                @Value("${chaos.interval-ms}") long intervalMillis,
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
                if (CONTROL.burst()) {
                    seq = burst(leadership, commands, seq);
                }
                long began = System.currentTimeMillis();
                try {
                    RecordMetadata written = commands.send(topic, key, Command.encode(member, term, seq, began));
                    emitAck(member, ROLE, term, seq, began, written);
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

        /**
         * Writes as fast as the role's group commit takes them, while the harness asks for it:
         * asynchronous guarded sends, up to {@link #BURST_IN_FLIGHT} unacknowledged. Each one
         * acknowledged is an ACK line; none goes to the device (it takes commands in order,
         * one at a time). Returns the next sequence number.
         */
        private long burst(Leadership leadership, GuardedSender<byte[], byte[]> commands, long seq)
                throws InterruptedException {
            Semaphore inFlight = new Semaphore(BURST_IN_FLIGHT);
            long term = leadership.term();
            while (CONTROL.burst() && leadership.isActive()) {
                inFlight.acquire(); // interrupted when the leadership ends
                long began = System.currentTimeMillis();
                long sent = seq++;
                commands.sendAsync(topic, key, Command.encode(member, term, sent, began))
                        .whenComplete((written, failed) -> {
                            inFlight.release();
                            if (failed == null) {
                                emitAck(member, ROLE, term, sent, began, written);
                            }
                        });
            }
            return seq;
        }

        private void deliver(long term, long seq) {
            try {
                if (device == null) {
                    device = new Socket("127.0.0.1", devicePort);
                    deviceIn =
                            new BufferedReader(new InputStreamReader(device.getInputStream(), StandardCharsets.UTF_8));
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

    /**
     * The other roles' work: a command every {@code chaos.other-interval-ms}, the first at
     * once on grant, committed by that role's producer (no device).
     */
    @Component
    static class OtherRoles {

        private final String member;
        private final String topic;
        private final long intervalMillis;

        OtherRoles(
                @Value("${chaos.member}") String member,
                @Value("${chaos.commands}") String topic,
                @Value("${chaos.other-interval-ms}") long intervalMillis) {
            this.member = member;
            this.topic = topic;
            this.intervalMillis = intervalMillis;
        }

        @OnLeadership(role = "role-1")
        void role1(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-2")
        void role2(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-3")
        void role3(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-4")
        void role4(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-5")
        void role5(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-6")
        void role6(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        @OnLeadership(role = "role-7")
        void role7(Leadership leadership, GuardedSender<byte[], byte[]> commands) throws InterruptedException {
            dispatch(leadership, commands);
        }

        private void dispatch(Leadership leadership, GuardedSender<byte[], byte[]> commands)
                throws InterruptedException {
            String role = leadership.role().name();
            byte[] key = role.getBytes(StandardCharsets.UTF_8);
            long term = leadership.term();
            for (long seq = 0; ; seq++) {
                long began = System.currentTimeMillis();
                try {
                    emitAck(
                            member,
                            role,
                            term,
                            seq,
                            began,
                            commands.send(topic, key, Command.encode(member, term, seq, began)));
                } catch (FencedException fenced) {
                    return;
                } catch (CoordinationException failed) {
                    if (Thread.currentThread().isInterrupted() || !leadership.isActive()) {
                        return;
                    }
                    emit(MemberEvent.ERROR, member, "role=" + role + " detail=" + oneWord(failed));
                }
                Thread.sleep(intervalMillis);
            }
        }
    }

    static void emitAck(String member, String role, long term, long seq, long began, RecordMetadata written) {
        emit(
                MemberEvent.ACK,
                member,
                "role=" + role + " term=" + term + " seq=" + seq + " began=" + began + " offset=" + written.offset());
    }

    /** The leader pipeline: one command per request, stamped with the member, the term and when its batch was processed. */
    @Component
    static class Pipeline {

        private final String member;
        private final String topic;
        private final byte[] key;

        Pipeline(
                @Value("${chaos.member}") String member,
                @Value("${chaos.role}") String role,
                @Value("${chaos.commands}") String topic) {
            this.member = member;
            this.topic = topic;
            this.key = role.getBytes(StandardCharsets.UTF_8);
        }

        @LeaderListener(role = ROLE, topics = "${chaos.requests}", groupId = ROLE + "-pipeline", maxBatchWait = "100ms")
        List<ProducerRecord<byte[], byte[]>> onRequests(
                List<ConsumerRecord<byte[], byte[]>> batch, Leadership leadership) {
            long began = System.currentTimeMillis(); // before the batch's transaction begins
            List<ProducerRecord<byte[], byte[]>> commands = new ArrayList<>(batch.size());
            for (ConsumerRecord<byte[], byte[]> request : batch) {
                String id = new String(request.value(), StandardCharsets.UTF_8);
                commands.add(new ProducerRecord<>(
                        topic, key, Command.encodeForRequest(member, leadership.term(), began, id)));
            }
            return commands;
        }
    }
}
