package io.krabka.streams.coordination.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.ChildJvm;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The failover proof of leader pipelines with real processes: three member JVMs
 * ({@link PipelineMember}) contend for one role and, while one holds it, run a
 * {@link LeaderPipeline} from a requests topic (three partitions) to a command topic (one
 * partition). While 10 000 requests trickle in, the holder is released three times,
 * killed (SIGKILL, then replaced by a new JVM) twice, and paused past its lease (SIGSTOP
 * while its transaction is open, SIGCONT once a standby took over: the zombie resumes
 * and its open transaction must be fenced). Afterwards the committed command log holds
 * exactly one command per request, and the terms in it never go backwards. On a real
 * broker, on transaction version 2 and 1; lease time runs on the wall clock.
 */
@Tag("long") // member JVMs through kills and pauses, on TV2 and TV1: -Plong
class PipelineFailoverIT {

    private static final int REQUESTS = 10_000;
    /** 25 requests every 100 ms: 250 a second, so the input trickles in for 40 s, across every fault. */
    private static final int REQUESTS_PER_TICK = 25;

    private static final Duration TICK = Duration.ofMillis(100);
    /** Six faults, 1200 requests (about 5 s) apart: the last leaves 2800 requests (about 11 s) to come. */
    private static final int REQUESTS_BETWEEN_FAULTS = 1200;
    /** Short leases so a failover after a kill or a pause takes seconds; the renewal keeps a margin of three. */
    private static final LeaseConfig LEASE =
            new LeaseConfig(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofMillis(200));

    private static final int MEMBERS = 3;
    /** The longest any one step (a failover, a JVM start, a catch of an open transaction) may take. */
    private static final Duration STEP = Duration.ofSeconds(30);
    /** The coordinator looks for timed-out transactions every half second (default: 10 s). */
    private static final Map<String, String> BROKER_SETTINGS =
            Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500");

    private static KafkaTestCluster cluster;

    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final Role role = Role.of("failover-" + suffix);
    private final String requests = "requests-" + suffix;
    private final String commands = "commands-" + suffix;
    private final TopicPartition output = new TopicPartition(commands, 0);
    private final Map<String, MemberJvm> members = new LinkedHashMap<>();
    private final List<Fault> faults = new ArrayList<>();
    private final AtomicInteger produced = new AtomicInteger();
    private final AtomicReference<Exception> produceFailure = new AtomicReference<>();
    private Path logs;
    private KafkaCoordinationTransport observerTransport;
    private CoordinationClient observer;
    private KafkaProducer<String, String> producer;
    private ScheduledExecutorService ticker;
    private CommandTail tail;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start(1, BROKER_SETTINGS);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void killEverything() {
        if (ticker != null) {
            ticker.shutdownNow();
        }
        // SIGKILL ends a paused (SIGSTOPped) JVM too.
        members.values().forEach(MemberJvm::kill);
        List<AutoCloseable> closeables = new ArrayList<>();
        closeables.add(producer);
        closeables.add(tail);
        closeables.add(observer);
        closeables.add(observerTransport);
        for (AutoCloseable closeable : closeables) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                System.out.println("closing " + closeable + " failed: " + e);
            }
        }
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2, 1})
    void everyRequestIsCommandedExactlyOnceAcrossKillsPausesAndReleasesOfTheHolder(short transactionVersion)
            throws Exception {
        long began = System.nanoTime();
        cluster.setTransactionVersion(transactionVersion);
        cluster.createTopic(requests, 3);
        cluster.createTopic(commands, 1);
        logs = Path.of("target", "pipeline-failover", "tv" + transactionVersion + "-" + suffix);
        observerTransport = cluster.transport(PipelineMember.TOPIC);
        observer = new CoordinationClient(observerTransport, LEASE, InstantSource.system());
        tail = new CommandTail(cluster.bootstrapServers(), output);
        for (int i = 0; i < MEMBERS; i++) {
            startMember();
        }
        // The input starts once the member JVMs are up and one of them took the role, so it spreads over the faults.
        await("a first holder")
                .atMost(STEP.multipliedBy(2))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    assertMembersAlive();
                    return observer.observe(role, Duration.ZERO).holder().isPresent();
                });
        startProducing();

        // The faults spread over the input: the k-th comes once k * 1200 requests were produced, or at once if
        // the one before it took longer. Each hits the member that holds the role at that moment: a standby may
        // also have taken it in between, when it challenged on a view a little older than the last grant (safe,
        // and one more handover).
        awaitNewHolder(-1);
        awaitProduced(1);
        release();
        awaitProduced(2);
        Fault pause = pauseUntilDeposed();
        awaitProduced(3);
        kill();
        awaitProduced(4);
        release();
        awaitProduced(5);
        kill();
        awaitProduced(6);
        release();
        int producedAfterFaults = produced.get();

        await("all requests produced").atMost(STEP.multipliedBy(3)).until(() -> produced.get() == REQUESTS);
        producer.flush();
        assertThat(produceFailure.get()).as("a request could not be produced").isNull();
        PipelineSettings settings = PipelineSettings.of(role, requests);
        await("every request commanded, no lag")
                .atMost(STEP.multipliedBy(2))
                .pollInterval(Duration.ofMillis(200))
                .pollInSameThread()
                .until(() -> {
                    tail.catchUp();
                    return tail.requestIds.size() == REQUESTS
                            && LeaderPipeline.measureLag(cluster.admin(), settings, Duration.ofSeconds(10)) == 0;
                });

        List<PipelineLog.Command> log = PipelineLog.committedCommands(cluster.bootstrapServers(), commands);
        report(transactionVersion, log, began, producedAfterFaults);

        // Exactly once: every request has one command, none is missing, none is extra.
        Map<String, Long> perRequest =
                log.stream().collect(Collectors.groupingBy(PipelineLog.Command::requestId, Collectors.counting()));
        Set<String> expected =
                IntStream.range(0, REQUESTS).mapToObj(i -> "r" + i).collect(Collectors.toSet());
        assertThat(perRequest.keySet()).as("the requests that have a command").isEqualTo(expected);
        assertThat(perRequest)
                .as("commands per request")
                .allSatisfy((request, count) -> assertThat(count).as(request).isEqualTo(1));
        assertThat(log).hasSize(REQUESTS);
        // Terms never go backwards in the output partition, and each term is one member's.
        assertThat(log).extracting(PipelineLog.Command::term).isSortedAccordingTo(Long::compare);
        Map<Long, Set<String>> membersPerTerm = log.stream()
                .collect(Collectors.groupingBy(
                        PipelineLog.Command::term,
                        TreeMap::new,
                        Collectors.mapping(PipelineLog.Command::member, Collectors.toSet())));
        assertThat(membersPerTerm)
                .allSatisfy((term, writers) ->
                        assertThat(writers).as("members of term %d", term).hasSize(1));

        // Not vacuous: every fault hit a member that held the role and wrote under it, while requests were
        // still coming in, and a newer term took over after each one.
        assertThat(faults)
                .extracting(Fault::kind)
                .containsExactly("release", "pause", "kill", "release", "kill", "release");
        for (Fault fault : faults) {
            assertThat(membersPerTerm)
                    .as("the output of %s", fault)
                    .containsEntry(fault.victim.term, Set.of(fault.victim.member));
            assertThat(membersPerTerm)
                    .as("the output of the term after %s", fault)
                    .containsKey(fault.next.term);
            assertThat(fault.next.term).as("the term after %s", fault).isGreaterThan(fault.victim.term);
        }
        assertThat(producedAfterFaults)
                .as("requests produced when the last fault was over")
                .isLessThan(REQUESTS);
        assertThat(membersPerTerm).as("terms in the output").hasSizeGreaterThanOrEqualTo(faults.size() + 1);
        assertThat(log.stream().map(PipelineLog.Command::member).distinct().count())
                .as("members in the output")
                .isGreaterThanOrEqualTo(MEMBERS);
        assertThat(members.values().stream().filter(m -> m.killed))
                .as("killed member JVMs")
                .hasSize(2);

        // The zombie's open transaction: its records reached the log, and not one of them is committed.
        InFlight open = pause.inFlight;
        List<PipelineLog.Command> written = PipelineLog.writtenCommands(cluster.bootstrapServers(), commands);
        List<PipelineLog.Command> zombieWrites = written.stream()
                .filter(c -> c.offset() >= open.stableOffset && c.offset() < open.endOffset)
                .toList();
        assertThat(zombieWrites)
                .as("records of the open transaction of the paused holder")
                .isNotEmpty()
                .allSatisfy(c -> {
                    assertThat(c.member()).isEqualTo(pause.victim.member);
                    assertThat(c.term()).isEqualTo(pause.victim.term);
                });
        assertThat(log)
                .as("committed commands at the offsets of the zombie's open transaction")
                .noneMatch(c -> c.offset() >= open.stableOffset && c.offset() < open.endOffset);
        Map<String, PipelineLog.Command> committedByRequest =
                log.stream().collect(Collectors.toMap(PipelineLog.Command::requestId, c -> c));
        assertThat(zombieWrites)
                .as("the zombie's batch was committed once by a later term")
                .allSatisfy(c ->
                        assertThat(committedByRequest.get(c.requestId()).term()).isGreaterThan(pause.victim.term));
    }

    /** Waits until the requests before the {@code fault}-th fault were produced. */
    private void awaitProduced(int fault) {
        int count = fault * REQUESTS_BETWEEN_FAULTS;
        await(count + " requests produced")
                .atMost(STEP)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> produced.get() >= count);
    }

    /** Releases the role from the holder's JVM (on its stdin); the next standby takes over at once. */
    private void release() {
        Holder holder = currentHolder();
        MemberJvm member = members.get(holder.member);
        int before = produced.get();
        long at = System.nanoTime();
        member.send("release");
        Holder next = awaitNewHolder(holder.term);
        long took = System.nanoTime() - at;
        await("the release of term " + holder.term + " in " + member.log)
                .atMost(STEP)
                .until(() -> member.logged("ENDED at=\\d+ term=" + holder.term + " cause=RELEASED.*"));
        faults.add(new Fault("release", holder, next, before, took, null, ""));
    }

    /** SIGKILLs the holder's JVM and starts a replacement member; a standby takes over after the lease. */
    private void kill() {
        Holder holder = currentHolder();
        MemberJvm member = members.get(holder.member);
        int before = produced.get();
        long at = System.nanoTime();
        assertThat(member.kill()).as("%s died", member.id).isTrue();
        startMember();
        Holder next = awaitNewHolder(holder.term);
        faults.add(new Fault("kill", holder, next, before, System.nanoTime() - at, null, ""));
    }

    /**
     * SIGSTOPs the holder's JVM while a transaction of its pipeline is open, keeps it
     * stopped until a standby took over (which takes longer than the lease: the
     * Awaitility poll delay below makes sure of it), then SIGCONTs it. The zombie
     * resumes mid-transaction; the cluster must refuse that transaction.
     */
    private Fault pauseUntilDeposed() {
        int before = produced.get();
        AtomicReference<Holder> victim = new AtomicReference<>();
        AtomicReference<InFlight> caught = new AtomicReference<>();
        // Each attempt SIGSTOPs the member that holds the role now and looks at the role's transaction: unless
        // it is open with commands in the output, a SIGCONT follows at once, and the next attempt 50 ms later.
        await("a SIGSTOP of the holder inside an open pipeline transaction")
                .atMost(STEP)
                .pollInterval(Duration.ofMillis(50))
                .pollInSameThread()
                .until(() -> {
                    assertMembersAlive();
                    Optional<Holder> holder = holderNow();
                    if (holder.isEmpty()) {
                        return false;
                    }
                    MemberJvm member = members.get(holder.get().member);
                    member.pause();
                    Optional<InFlight> open = openTransaction(holder.get());
                    if (open.isEmpty()) {
                        member.resume();
                        return false;
                    }
                    victim.set(holder.get());
                    caught.set(open.get());
                    return true;
                });
        Holder holder = victim.get();
        MemberJvm member = members.get(holder.member);
        long at = System.nanoTime();
        // The pause lasts past the lease: the poll delay is measured from the SIGSTOP above.
        Holder next = awaitNewHolder(holder.term, LEASE.duration().plusMillis(500));
        long took = System.nanoTime() - at;
        member.resume();
        long resumed = System.nanoTime();
        // The zombie's leadership ends as expired (its watchdog saw the deadline pass first) or fenced (its write
        // met the new epoch first); its pipeline ends either way, by FencedException or by returning because the
        // leadership ended. Which of its records stayed invisible is checked on the output log at the end.
        await("the zombie of term " + holder.term + " in " + member.log + " stopped its pipeline")
                .atMost(STEP)
                .until(() -> member.logged("ENDED at=\\d+ term=" + holder.term + " cause=(EXPIRED|FENCED).*")
                        && member.logged(
                                "WORKER at=\\d+ term=" + holder.term + " processed=\\d+ outcome=(fenced|returned).*"));
        long stopped = System.nanoTime() - resumed;
        Fault fault = new Fault(
                "pause",
                holder,
                next,
                before,
                took,
                caught.get(),
                "its pipeline stopped within "
                        + TimeUnit.NANOSECONDS.toMillis(stopped) + " ms of the SIGCONT: "
                        + String.join("; ", member.lines("(ENDED|WORKER) at=\\d+ term=" + holder.term + " .*")));
        faults.add(fault);
        return fault;
    }

    /**
     * The role's transaction, while {@code holder} is stopped, if it is open and has
     * written commands: the output's last stable offset and its end, between two
     * describes that show the same open transaction (so no commit was under way in
     * between), after which the newest lease still names {@code holder} in its term (so
     * the transaction is its own: a member that took the role since would have committed
     * its grant lease before any transaction of its pipeline).
     */
    private Optional<InFlight> openTransaction(Holder holder) throws Exception {
        TransactionDescription first = describeTransaction();
        if (!openWithOutput(first)) {
            return Optional.empty();
        }
        long stable = cluster.admin()
                .listOffsets(Map.of(output, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .partitionResult(output)
                .get(10, TimeUnit.SECONDS)
                .offset();
        long end = cluster.admin()
                .listOffsets(
                        Map.of(output, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                .partitionResult(output)
                .get(10, TimeUnit.SECONDS)
                .offset();
        TransactionDescription second = describeTransaction();
        boolean same = openWithOutput(second)
                && second.producerId() == first.producerId()
                && second.producerEpoch() == first.producerEpoch()
                && second.transactionStartTimeMs().equals(first.transactionStartTimeMs());
        LeadershipStatus status = observer.describe(role);
        boolean stillHeld = status.lease()
                .filter(lease -> lease.holder().equals(MemberId.of(holder.member))
                        && lease.token().term() == holder.term)
                .isPresent();
        return same && stillHeld && end > stable ? Optional.of(new InFlight(stable, end)) : Optional.empty();
    }

    private boolean openWithOutput(TransactionDescription transaction) {
        return transaction.state() == TransactionState.ONGOING
                && transaction.topicPartitions().contains(output);
    }

    private TransactionDescription describeTransaction() throws Exception {
        return cluster.admin()
                .describeTransactions(List.of(role.name()))
                .description(role.name())
                .get(10, TimeUnit.SECONDS);
    }

    /**
     * The member that holds the role now: the newest lease names it, the transaction
     * coordinator confirms its epoch, and its pipeline committed output under its term.
     */
    private Holder currentHolder() {
        AtomicReference<Holder> found = new AtomicReference<>();
        await("a confirmed holder")
                .atMost(STEP)
                .pollInterval(Duration.ofMillis(20))
                .pollInSameThread()
                .until(() -> {
                    assertMembersAlive();
                    Optional<Holder> holder = holderNow();
                    holder.ifPresent(found::set);
                    return holder.isPresent();
                });
        return found.get();
    }

    /** The holder, if the newest lease names one, the coordinator confirms its epoch, and it wrote output. */
    private Optional<Holder> holderNow() {
        tail.catchUp();
        LeadershipStatus status = observer.describe(role);
        return status.lease()
                .map(lease -> new Holder(lease.holder().value(), lease.token().term()))
                .filter(holder -> status.current()
                        && tail.terms.contains(holder.term)
                        && members.get(holder.member).process.isAlive());
    }

    private Holder awaitNewHolder(long afterTerm) {
        return awaitNewHolder(afterTerm, Duration.ZERO);
    }

    /**
     * Waits for a holder with a term newer than {@code afterTerm} whose pipeline
     * committed output under that term, at least {@code notBefore} from now.
     */
    private Holder awaitNewHolder(long afterTerm, Duration notBefore) {
        AtomicReference<Holder> found = new AtomicReference<>();
        await("a holder after term " + afterTerm + " with output")
                .pollDelay(notBefore)
                .atMost(STEP.plus(notBefore))
                .pollInterval(Duration.ofMillis(50))
                .pollInSameThread()
                .until(() -> {
                    assertMembersAlive();
                    tail.catchUp();
                    Optional<Holder> holder = observer.observe(role, Duration.ZERO)
                            .lease()
                            .map(lease -> new Holder(
                                    lease.holder().value(), lease.token().term()));
                    holder.filter(h -> h.term > afterTerm && tail.terms.contains(h.term))
                            .ifPresent(found::set);
                    return found.get() != null;
                });
        return found.get();
    }

    /** Fails at once, with its output, when a member JVM that the test did not kill has exited. */
    private void assertMembersAlive() {
        for (MemberJvm member : members.values()) {
            if (!member.killed && !member.process.isAlive()) {
                List<String> output = member.lines(".*");
                throw new AssertionError("member " + member.id + " exited with " + member.process.exitValue()
                        + "; the end of " + member.log + ":\n"
                        + String.join("\n", output.subList(Math.max(0, output.size() - 30), output.size())));
            }
        }
    }

    private void startMember() {
        String id = "m" + (members.size() + 1);
        Path file = logs.resolve(id + ".log");
        Process process = ChildJvm.start(
                PipelineMember.class.getName(),
                List.of(
                        "-Xms64m",
                        "-Xmx192m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        // Says how a transaction of the role ended when it failed (fenced, aborted, timed out).
                        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals.TransactionManager=info"),
                List.of(
                        cluster.bootstrapServers(),
                        role.name(),
                        id,
                        requests,
                        commands,
                        Long.toString(LEASE.duration().toMillis()),
                        Long.toString(LEASE.renewInterval().toMillis()),
                        Long.toString(LEASE.challengeStagger().toMillis())),
                file);
        members.put(id, new MemberJvm(id, process, file));
    }

    /** Produces the requests in the background, a few every tick (a fixed rate paces the input; nothing waits on it). */
    private void startProducing() {
        producer = PipelineLog.requestProducer(cluster.bootstrapServers());
        ticker = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "requests-" + suffix);
            thread.setDaemon(true);
            return thread;
        });
        ticker.scheduleAtFixedRate(
                () -> {
                    int from = produced.get();
                    int to = Math.min(REQUESTS, from + REQUESTS_PER_TICK);
                    for (int i = from; i < to; i++) {
                        producer.send(new ProducerRecord<>(requests, "r" + i, "r" + i), (metadata, failure) -> {
                            if (failure != null) {
                                produceFailure.compareAndSet(null, failure);
                            }
                        });
                    }
                    produced.set(to);
                },
                0,
                TICK.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void report(short transactionVersion, List<PipelineLog.Command> log, long began, int producedAfterFaults) {
        Map<Long, Long> perTerm = log.stream()
                .collect(Collectors.groupingBy(PipelineLog.Command::term, TreeMap::new, Collectors.counting()));
        Map<Long, String> memberOfTerm = log.stream()
                .collect(Collectors.toMap(
                        PipelineLog.Command::term,
                        PipelineLog.Command::member,
                        (a, b) -> a.equals(b) ? a : a + "+" + b,
                        TreeMap::new));
        StringBuilder report = new StringBuilder(
                        "PipelineFailoverIT on transaction version " + transactionVersion + ": ")
                .append(log.size())
                .append(" commands in ")
                .append(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began))
                .append(" ms; logs in ")
                .append(logs.toAbsolutePath())
                .append('\n');
        for (Fault fault : faults) {
            report.append("  ")
                    .append(fault.kind)
                    .append(" of ")
                    .append(fault.victim)
                    .append(" after ")
                    .append(fault.producedBefore)
                    .append(" requests: ")
                    .append(fault.next)
                    .append(" after ")
                    .append(TimeUnit.NANOSECONDS.toMillis(fault.tookNanos))
                    .append(" ms")
                    .append(fault.inFlight == null ? "" : ", open transaction at output offsets " + fault.inFlight)
                    .append(fault.note.isEmpty() ? "" : "; the zombie: " + fault.note)
                    .append('\n');
        }
        report.append("  produced when the faults were over: ")
                .append(producedAfterFaults)
                .append('\n');
        for (MemberJvm member : members.values()) {
            List<String> errors = member.lines("\\S+ \\[.*\\] ERROR .*");
            report.append("  ")
                    .append(member.id)
                    .append(": ")
                    .append(member.lines("\\S+ \\[.*\\] WARN .*").size())
                    .append(" WARN, ")
                    .append(errors.size())
                    .append(" ERROR lines")
                    .append(errors.stream().map(line -> "\n    " + line).collect(Collectors.joining()))
                    .append('\n');
        }
        perTerm.forEach((term, count) -> report.append("  term ")
                .append(term)
                .append(" (")
                .append(memberOfTerm.get(term))
                .append("): ")
                .append(count)
                .append(" commands\n"));
        System.out.print(report);
    }

    /** The holder as the observer saw it. */
    private record Holder(String member, long term) {
        @Override
        public String toString() {
            return member + " (term " + term + ")";
        }
    }

    /** The output offsets of an open transaction of the role: from the last stable offset to the log end. */
    private record InFlight(long stableOffset, long endOffset) {
        @Override
        public String toString() {
            return "[" + stableOffset + ", " + endOffset + ")";
        }
    }

    /** One fault: whom it hit, who held the role next, and how long until that holder wrote. */
    private record Fault(
            String kind,
            Holder victim,
            Holder next,
            int producedBefore,
            long tookNanos,
            InFlight inFlight,
            String note) {}

    /** A member JVM; its output file collects its event lines and logs. */
    private static final class MemberJvm {
        final String id;
        final Process process;
        final Path log;
        final PrintWriter stdin;
        volatile boolean killed;

        MemberJvm(String id, Process process, Path log) {
            this.id = id;
            this.process = process;
            this.log = log;
            this.stdin = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        void send(String line) {
            stdin.println(line);
            assertThat(stdin.checkError())
                    .as("writing %s to the stdin of %s", line, id)
                    .isFalse();
        }

        /** SIGKILLs the JVM (a paused one too) and waits for it to die; whether it died. */
        boolean kill() {
            if (process.isAlive()) {
                killed = true;
            }
            process.destroyForcibly();
            try {
                return process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        void pause() {
            ChildJvm.signal(process.pid(), "STOP");
        }

        void resume() {
            ChildJvm.signal(process.pid(), "CONT");
        }

        boolean logged(String regex) {
            return !lines(regex).isEmpty();
        }

        /** The lines of the member's output that match {@code regex}. */
        List<String> lines(String regex) {
            Pattern pattern = Pattern.compile(regex);
            try {
                return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                        .filter(line -> pattern.matcher(line).matches())
                        .toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A device: tails the committed commands as they come; used from the test's thread only. */
    private static final class CommandTail implements AutoCloseable {
        final KafkaConsumer<String, String> consumer;
        final Set<Long> terms = new HashSet<>();
        final Set<String> requestIds = new HashSet<>();

        CommandTail(String bootstrapServers, TopicPartition partition) {
            consumer = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    bootstrapServers,
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                    "read_committed",
                    ConsumerConfig.CLIENT_ID_CONFIG,
                    "tail-" + partition.topic(),
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                    StringDeserializer.class,
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                    StringDeserializer.class));
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
        }

        void catchUp() {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(20))) {
                PipelineLog.Command command = PipelineLog.Command.parse(record);
                terms.add(command.term());
                requestIds.add(command.requestId());
            }
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
