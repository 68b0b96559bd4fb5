package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.kafka.ChildJvm;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The heavy proof of {@link LeaderOnly}, with three member JVMs ({@link RoutingMember}) on
 * a real broker: a client sends a steady stream of {@code @LeaderOnly} POSTs through a
 * round-robin of the members that are up, while the holder is killed (SIGKILL), stopped
 * (SIGTERM), handed over to a chosen standby, and paused past its lease (SIGSTOP, then
 * SIGCONT). Every request is answered; no request is handled twice; every write's term is
 * one member's (the handler writes member and term through a {@code GuardedSender}, and
 * the checker reads them back); 503s come only inside a fault's leaderless window. Once on
 * Spring MVC (Tomcat) and once on WebFlux (Reactor Netty): the same member, the same handler.
 *
 * <p>{@code -Plong}: {@code ./mvnw -B -Plong -pl coordination-spring-boot-autoconfigure -am verify
 * -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=LeaderOnlyFailoverIT
 * -Dfailsafe.failIfNoSpecifiedTests=false}
 */
@Tag("long") // member JVMs through kills and pauses: -Plong
class LeaderOnlyFailoverIT {

    private static final String ROLE = "orders";
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration STAGGER = Duration.ofSeconds(1);
    /** From a fault to a new holder (a lease and the standbys' staggers), plus a forward's timeout and slack. */
    private static final Duration WINDOW_AFTER_TAKEOVER = Duration.ofSeconds(4);

    private static final Duration STEP = Duration.ofSeconds(60);

    private static KafkaTestCluster cluster;

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String topic = "coordination-" + suffix;
    private final String handledTopic = "handled-" + suffix;
    private final Map<String, Member> members = new LinkedHashMap<>();
    private final List<String> rotation = new CopyOnWriteArrayList<>();
    private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    private final List<long[]> windows = new CopyOnWriteArrayList<>();
    private final AtomicInteger sent = new AtomicInteger();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /** The member the request under way was sent to: a member leaves the rotation, then its last request returns, then the fault. */
    private volatile String inFlight;

    private ScheduledExecutorService load;
    private KafkaCoordinationTransport observerTransport;
    private CoordinationClient observer;

    private record Member(String id, int port, Process process) {}

    /** The web stack the members run: the same {@link RoutingMember} handler on each. */
    enum Stack {
        MVC(List.of()),
        // Reactor Netty, as spring-boot-starter-webflux runs it (Tomcat is on this classpath for MVC).
        WEBFLUX(
                List.of(
                        "--spring.main.web-application-type=reactive",
                        "--spring.autoconfigure.exclude="
                                + "org.springframework.boot.tomcat.autoconfigure.reactive.TomcatReactiveWebServerAutoConfiguration"));

        final List<String> arguments;

        Stack(List<String> arguments) {
            this.arguments = arguments;
        }
    }

    private Stack stack = Stack.MVC;

    private record Outcome(
            String id, String via, int status, String body, long sentAt, long answeredAt, String failure) {}

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void stopEverything() throws Exception {
        if (load != null) {
            load.shutdownNow();
        }
        members.values().forEach(member -> member.process().destroyForcibly());
        if (observer != null) {
            observer.close();
        }
        if (observerTransport != null) {
            observerTransport.close();
        }
    }

    @ParameterizedTest
    @EnumSource(Stack.class)
    void everyRequestIsAnsweredAndHandledOnceByTheHolderAcrossKillTermHandoverAndPause(Stack stack) throws Exception {
        this.stack = stack;
        cluster.createTopic(handledTopic, 1);
        for (String id : List.of("n1", "n2", "n3")) {
            start(id, freePort());
        }
        observerTransport = cluster.transport(new TopicSpec(topic, 3, (short) 1, true, true));
        observer = new CoordinationClient(observerTransport);
        for (String id : List.of("n1", "n2", "n3")) {
            awaitUp(id);
            rotation.add(id);
        }
        String holder = awaitHolder(null);
        load = Executors.newSingleThreadScheduledExecutor();
        load.scheduleAtFixedRate(this::sendOne, 0, 50, TimeUnit.MILLISECONDS);
        awaitSent(100);

        // SIGKILL: no release, no tombstone; the standbys wait out the lease.
        holder = kill(holder, true);
        awaitSent(sent.get() + 100);
        // SIGTERM: a graceful stop releases the role and withdraws the address.
        holder = kill(holder, false);
        awaitSent(sent.get() + 100);
        // A directed handover, through the holder's endpoint: no window, the role moves at once.
        String to = rotation.stream()
                .filter(m -> !m.equals(rotationHolder()))
                .findFirst()
                .orElseThrow();
        String from = holder;
        long handover = System.nanoTime();
        HttpResponse<String> moved = http.send(
                HttpRequest.newBuilder(uri(from, "/actuator/coordination/" + ROLE))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"to\":\"" + to + "\"}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
        holder = awaitHolder(from);
        assertThat(holder).isEqualTo(to);
        // The gap between the release and the grant is short; requests wait for it (routing.grant-wait).
        windows.add(new long[] {handover, System.nanoTime() + WINDOW_AFTER_TAKEOVER.toNanos()});
        System.out.printf(
                "routing failover (%s): handover of %s to %s took %d ms%n",
                stack, from, to, Duration.ofNanos(System.nanoTime() - handover).toMillis());
        awaitSent(sent.get() + 100);
        // SIGSTOP past the lease, then SIGCONT: the paused holder comes back deposed.
        holder = pause(holder);
        awaitSent(sent.get() + 100);
        load.shutdown();
        assertThat(load.awaitTermination(60, TimeUnit.SECONDS)).isTrue();

        check();
    }

    private String rotationHolder() {
        return observer.observe(Role.of(ROLE), Duration.ZERO)
                .holder()
                .map(MemberId::value)
                .orElse("");
    }

    /** Kills the holder (SIGKILL when {@code forcibly}, else SIGTERM), waits for the next, and starts it again. */
    private String kill(String holder, boolean forcibly) throws Exception {
        Member member = members.get(holder);
        leaveRotation(holder);
        long began = System.nanoTime();
        if (forcibly) {
            member.process().destroyForcibly();
        } else {
            member.process().destroy();
        }
        assertThat(member.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        String next = awaitHolder(holder);
        windows.add(new long[] {began, System.nanoTime() + WINDOW_AFTER_TAKEOVER.toNanos()});
        System.out.printf(
                "routing failover (%s): %s of %s, %s took over after %d ms%n",
                stack,
                forcibly ? "SIGKILL" : "SIGTERM",
                holder,
                next,
                Duration.ofNanos(System.nanoTime() - began).toMillis());
        start(holder, member.port());
        awaitUp(holder);
        synchronized (rotation) {
            rotation.add(holder);
        }
        return next;
    }

    private String pause(String holder) throws Exception {
        Member member = members.get(holder);
        leaveRotation(holder);
        long began = System.nanoTime();
        ChildJvm.signal(member.process().pid(), "STOP");
        String next;
        try {
            next = awaitHolder(holder);
        } finally {
            ChildJvm.signal(member.process().pid(), "CONT");
        }
        windows.add(new long[] {began, System.nanoTime() + WINDOW_AFTER_TAKEOVER.toNanos()});
        System.out.printf(
                "routing failover (%s): SIGSTOP of %s, %s took over after %d ms%n",
                stack, holder, next, Duration.ofNanos(System.nanoTime() - began).toMillis());
        awaitUp(holder);
        synchronized (rotation) {
            rotation.add(holder);
        }
        return next;
    }

    private void check() {
        Map<String, List<String>> written = handled();
        List<Outcome> failed =
                outcomes.stream().filter(o -> o.failure() != null).toList();
        assertThat(failed).as("requests without an answer").isEmpty();
        assertThat(outcomes).extracting(Outcome::status).as("statuses").allMatch(s -> s == 200 || s == 503);
        // No request is handled by two members, or twice.
        written.forEach((id, by) -> assertThat(by).as("writes of %s", id).hasSize(1));
        // Every 200 was handled once, by the member and term its answer names.
        for (Outcome ok : outcomes.stream().filter(o -> o.status() == 200).toList()) {
            assertThat(written.get(ok.id())).as("%s via %s", ok.id(), ok.via()).containsExactly(ok.body());
        }
        // Every write's term is one member's, and terms never go backwards in the log.
        Map<Long, Set<String>> membersOfTerm = writes().stream()
                .collect(Collectors.groupingBy(
                        w -> Long.parseLong(w.split("@")[1]),
                        Collectors.mapping(w -> w.split("@")[0], Collectors.toSet())));
        membersOfTerm.forEach((term, by) ->
                assertThat(by).as("members that wrote under term %d", term).hasSize(1));
        assertThat(writes()).extracting(w -> Long.parseLong(w.split("@")[1])).isSortedAccordingTo(Long::compare);
        // 503s only inside a fault's leaderless window: the request was under way during it (one in flight to the
        // holder when it is killed is answered 503 by the member that forwarded it).
        List<Outcome> unavailable =
                outcomes.stream().filter(o -> o.status() == 503).toList();
        for (Outcome refused : unavailable) {
            assertThat(windows.stream().anyMatch(w -> refused.answeredAt() >= w[0] && refused.sentAt() <= w[1]))
                    .as("503 outside every fault window: %s", refused)
                    .isTrue();
        }
        for (int i = 0; i < windows.size(); i++) {
            long[] window = windows.get(i);
            System.out.printf(
                    "routing failover (%s): fault %d, 503s in its window: %d%n",
                    stack,
                    i + 1,
                    unavailable.stream()
                            .filter(o -> o.answeredAt() >= window[0] && o.sentAt() <= window[1])
                            .count());
        }
        System.out.printf(
                "routing failover (%s): 503s by type %s%n",
                stack,
                unavailable.stream()
                        .collect(Collectors.groupingBy(
                                o -> o.body().replaceAll(".*\"type\":\"urn:krabka:routing:([a-z-]+)\".*", "$1"),
                                Collectors.counting())));
        Map<String, Long> byStatus = outcomes.stream()
                .collect(Collectors.groupingBy(o -> Integer.toString(o.status()), Collectors.counting()));
        List<Long> latencies = outcomes.stream()
                .filter(o -> o.status() == 200)
                .map(o -> (o.answeredAt() - o.sentAt()) / 1000)
                .sorted()
                .toList();
        System.out.printf(
                "routing failover (%s): %d requests, by status %s, %d writes under terms %s, p50 %d us, p99 %d us%n",
                stack,
                outcomes.size(),
                byStatus,
                writes().size(),
                membersOfTerm,
                latencies.get(latencies.size() / 2),
                latencies.get(latencies.size() * 99 / 100));
    }

    private void sendOne() {
        String via;
        int n;
        synchronized (rotation) {
            if (rotation.isEmpty()) {
                return;
            }
            n = sent.getAndIncrement();
            via = rotation.get(n % rotation.size());
            inFlight = via;
        }
        String id = "c" + n;
        long at = System.nanoTime();
        try {
            HttpResponse<String> answer = http.send(
                    HttpRequest.newBuilder(uri(via, "/commands/" + id))
                            .timeout(Duration.ofSeconds(30))
                            .POST(HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            outcomes.add(new Outcome(id, via, answer.statusCode(), answer.body(), at, System.nanoTime(), null));
        } catch (IOException | InterruptedException e) {
            outcomes.add(new Outcome(id, via, -1, null, at, System.nanoTime(), e.toString()));
        } finally {
            inFlight = null;
        }
    }

    /** Takes {@code member} out of the client's rotation, and waits for the request under way there to return. */
    private void leaveRotation(String member) {
        synchronized (rotation) {
            rotation.remove(member);
        }
        await().atMost(STEP).until(() -> !member.equals(inFlight));
    }

    private void awaitSent(int count) {
        await().atMost(STEP).until(() -> outcomes.size() >= count);
    }

    private String awaitHolder(String other) {
        return await().atMost(STEP)
                .pollInterval(Duration.ofMillis(50))
                .until(
                        () -> observer.observe(Role.of(ROLE), Duration.ZERO)
                                .lease()
                                .filter(l -> l.deadline().isAfter(java.time.Instant.now()))
                                .map(l -> l.holder().value())
                                .filter(h -> !h.equals(other) && members.containsKey(h)),
                        Optional::isPresent)
                .orElseThrow();
    }

    private void awaitUp(String id) {
        await().atMost(STEP)
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> http.send(
                                        HttpRequest.newBuilder(uri(id, "/actuator/coordination"))
                                                .timeout(Duration.ofSeconds(2))
                                                .build(),
                                        HttpResponse.BodyHandlers.ofString())
                                .statusCode()
                        == 200);
    }

    private void start(String id, int port) {
        List<String> arguments = new java.util.ArrayList<>(stack.arguments);
        arguments.addAll(List.of(
                "--spring.kafka.bootstrap-servers=" + cluster.bootstrapServers(),
                "--server.port=" + port,
                "--spring.main.banner-mode=off",
                "--krabka.coordination.member-id=" + id,
                "--krabka.coordination.roles=" + ROLE,
                "--routing.role=" + ROLE,
                "--routing.handled-topic=" + handledTopic,
                "--krabka.coordination.advertised-url=http://127.0.0.1:" + port,
                "--krabka.coordination.routing.response-timeout=3s",
                "--krabka.coordination.lease.duration=" + LEASE.toSeconds() + "s",
                "--krabka.coordination.lease.renew-interval=1s",
                "--krabka.coordination.lease.challenge-stagger=" + STAGGER.toSeconds() + "s",
                "--krabka.coordination.topic.name=" + topic,
                "--krabka.coordination.topic.partitions=3",
                "--krabka.coordination.topic.replication-factor=1",
                "--krabka.coordination.topic.allow-unsafe=true",
                "--krabka.coordination.endpoint.release-enabled=true",
                "--management.endpoints.web.exposure.include=coordination"));
        Process process = ChildJvm.start(
                RoutingMember.class.getName(),
                List.of("-XX:TieredStopAtLevel=1", "-Xmx384m"),
                arguments,
                Path.of("target", "routing-failover", suffix, id + ".log"));
        members.put(id, new Member(id, port, process));
    }

    private URI uri(String member, String path) {
        return URI.create("http://127.0.0.1:" + members.get(member).port() + path);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** Every committed write of the handled topic, in log order, as "member@term". */
    private List<String> writes() {
        return records().stream().map(ConsumerRecord::value).toList();
    }

    private Map<String, List<String>> handled() {
        return HandledWrites.byId(cluster, handledTopic);
    }

    private List<ConsumerRecord<String, String>> records() {
        return HandledWrites.read(cluster, handledTopic);
    }
}
