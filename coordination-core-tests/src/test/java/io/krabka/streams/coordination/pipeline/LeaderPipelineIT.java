package io.krabka.streams.coordination.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A leader pipeline on a real broker, on transaction version 2 and 1: a batch that a
 * deposed holder was processing is invisible, and the next holder resumes from the
 * committed offsets and writes it once. Lease time runs on a manual clock.
 */
class LeaderPipelineIT {

    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);

    private static KafkaTestCluster cluster;

    private final ManualClock clock = new ManualClock();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final Role role = Role.of("pipeline-" + suffix);
    private final String requests = "requests-" + suffix;
    private final String commands = "commands-" + suffix;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private Leadership acquire(String member) throws InterruptedException {
        KafkaCoordinationTransport transport = cluster.transport(TOPIC);
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, clock);
        opened.add(transport);
        return client.acquire(role, MemberId.of(member), Duration.ofSeconds(30));
    }

    private LeaderPipeline pipeline(BatchProcessor processor) {
        return LeaderPipeline.create(
                cluster.connection(), PipelineSettings.of(role, requests).withMaxBatchRecords(10), processor);
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2, 1})
    void theBatchOfADeposedHolderIsInvisibleAndTheNextHolderWritesItOnce(short transactionVersion) throws Exception {
        cluster.setTransactionVersion(transactionVersion);
        cluster.createTopic(requests, 2);
        cluster.createTopic(commands, 1);
        PipelineLog.produceRequests(cluster.bootstrapServers(), requests, "r", 0, 100);

        Leadership first = acquire("a");
        // The deposed holder's second batch waits in the processor until a standby took the role.
        CountDownLatch inSecondBatch = new CountDownLatch(1);
        CountDownLatch deposed = new CountDownLatch(1);
        AtomicInteger batches = new AtomicInteger();
        BatchProcessor oneEach = PipelineLog.oneCommandPerRequest(commands);
        LeaderPipeline zombie = pipeline((batch, leadership) -> {
            if (batches.incrementAndGet() == 2) {
                inSecondBatch.countDown();
                assertThat(deposed.await(30, TimeUnit.SECONDS)).isTrue();
            }
            return oneEach.process(batch, leadership);
        });
        CompletableFuture<Void> zombieRun = CompletableFuture.runAsync(() -> run(zombie, first));
        assertThat(inSecondBatch.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(zombie.processedRecords()).isEqualTo(10);

        clock.advance(LeaseConfig.DEFAULTS.duration().plusSeconds(1));
        Leadership second = acquire("b");
        deposed.countDown();
        assertThatThrownBy(zombieRun::join).hasCauseInstanceOf(FencedException.class);
        assertThat(zombie.processedRecords())
                .as("the deposed holder's second batch did not commit")
                .isEqualTo(10);

        LeaderPipeline next = pipeline(oneEach);
        Thread nextRun = new Thread(() -> run(next, second));
        nextRun.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> next.processedRecords() == 90);
        nextRun.interrupt();
        nextRun.join(10_000);
        assertThat(nextRun.isAlive()).isFalse();

        List<PipelineLog.Command> log = PipelineLog.committedCommands(cluster.bootstrapServers(), commands);
        Map<String, Long> perRequest =
                log.stream().collect(Collectors.groupingBy(PipelineLog.Command::requestId, Collectors.counting()));
        assertThat(perRequest)
                .hasSize(100)
                .allSatisfy((request, count) -> assertThat(count).as(request).isEqualTo(1));
        assertThat(log.stream().filter(c -> c.member().equals("a")).count()).isEqualTo(10);
        assertThat(log).extracting(PipelineLog.Command::term).isSortedAccordingTo(Long::compare);
        assertThat(log)
                .as("every output carries the term of the leadership that wrote it in its headers")
                .allSatisfy(command -> assertThat(command.stampedTerm()).isEqualTo(command.term()));
        assertThat(LeaderPipeline.measureLag(cluster.admin(), next.settings(), Duration.ofSeconds(10)))
                .isZero();
    }

    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2})
    void aMissingInputTopicEndsTheRunWithAnErrorThatNamesIt(short transactionVersion) throws Exception {
        cluster.setTransactionVersion(transactionVersion);
        Leadership held = acquire("a");
        LeaderPipeline pipeline = pipeline(PipelineLog.oneCommandPerRequest(commands));
        assertThatThrownBy(() -> pipeline.run(held))
                .isInstanceOf(CoordinationConfigurationException.class)
                .hasMessageContaining(requests)
                .hasMessageContaining(role.name() + "-pipeline");
        assertThat(held.isActive())
                .as("the caller decides what the failure means for the leadership")
                .isTrue();
    }

    /**
     * A run stopped while it fetched the committed offsets must not hand its consumer to the
     * next run: KafkaConsumer.committed() answers a later call for the same partitions with
     * the earlier fetch's response, however old, so the next holder would resume behind
     * offsets a later holder had committed (the fault harness caught that as requests
     * answered twice, after a holder frozen inside the fetch was thawed).
     */
    @ParameterizedTest(name = "transaction version {0}")
    @ValueSource(shorts = {2})
    void aRunStoppedWhileFetchingTheCommittedOffsetsLeavesItsConsumerBehind(short transactionVersion) throws Exception {
        cluster.setTransactionVersion(transactionVersion);
        cluster.createTopic(requests, 2);
        cluster.createTopic(commands, 1);
        PipelineLog.produceRequests(cluster.bootstrapServers(), requests, "r", 0, 20);
        PipelineSettings settings = PipelineSettings.of(role, requests).withMaxBatchRecords(10);
        Map<String, Object> consumerSettings = LeaderPipeline.consumerSettings(cluster.connection(), settings);
        List<Consumer<byte[], byte[]>> built = new ArrayList<>();
        AtomicInteger interruptCommittedFetches = new AtomicInteger(1);
        LeaderPipeline pipeline = new LeaderPipeline(
                settings,
                () -> {
                    KafkaConsumer<byte[], byte[]> real = new KafkaConsumer<>(consumerSettings);
                    @SuppressWarnings("unchecked")
                    Consumer<byte[], byte[]> watched = (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
                            Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
                                if (method.getName().equals("committed")
                                        && interruptCommittedFetches.getAndDecrement() > 0) {
                                    // The leadership ends while the fetch is under way: the run's thread is
                                    // interrupted.
                                    Thread.currentThread().interrupt();
                                }
                                try {
                                    return method.invoke(real, args);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                    built.add(watched);
                    return watched;
                },
                PipelineLog.oneCommandPerRequest(commands));

        Leadership held = acquire("a");
        Thread first = new Thread(() -> run(pipeline, held));
        first.start();
        first.join(30_000);
        assertThat(first.isAlive()).isFalse();
        assertThat(pipeline.processedRecords())
                .as("the first run ended inside its fetch")
                .isZero();

        Thread second = new Thread(() -> run(pipeline, held));
        second.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> pipeline.processedRecords() == 20);
        second.interrupt();
        second.join(10_000);
        assertThat(built).as("the second run built a consumer of its own").hasSize(2);
        assertThat(PipelineLog.committedCommands(cluster.bootstrapServers(), commands))
                .hasSize(20);
    }

    /** Partitions added to an input topic while a member leads are read under the same grant, each record once. */
    @Test
    void partitionsAddedToTheInputWhileAMemberLeadsAreReadWithoutANewGrant() throws Exception {
        cluster.setTransactionVersion((short) 2);
        cluster.createTopic(requests, 1);
        cluster.createTopic(commands, 1);
        PipelineLog.produceRequests(cluster.bootstrapServers(), requests, "r", 0, 10);
        Leadership held = acquire("a");
        LeaderPipeline pipeline = pipeline(PipelineLog.oneCommandPerRequest(commands));
        Thread running = new Thread(() -> run(pipeline, held));
        running.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> pipeline.processedRecords() == 10);

        cluster.admin()
                .createPartitions(Map.of(requests, org.apache.kafka.clients.admin.NewPartitions.increaseTo(3)))
                .all()
                .get(20, TimeUnit.SECONDS);
        try (var producer = PipelineLog.requestProducer(cluster.bootstrapServers())) {
            for (int i = 10; i < 20; i++) {
                // Only to the new partitions: the old one's position must not move back.
                producer.send(
                        new org.apache.kafka.clients.producer.ProducerRecord<>(requests, 1 + i % 2, "r" + i, "r" + i));
            }
            producer.flush();
        }
        await().atMost(LeaderPipeline.PARTITION_CHECK_INTERVAL.multipliedBy(6))
                .until(() -> pipeline.processedRecords() == 20);
        running.interrupt();
        running.join(10_000);

        assertThat(held.isActive()).as("under the same grant").isTrue();
        Map<String, Long> perRequest = PipelineLog.committedCommands(cluster.bootstrapServers(), commands).stream()
                .collect(Collectors.groupingBy(PipelineLog.Command::requestId, Collectors.counting()));
        assertThat(perRequest)
                .hasSize(20)
                .allSatisfy((request, count) -> assertThat(count).as(request).isEqualTo(1));
    }

    private static void run(LeaderPipeline pipeline, Leadership leadership) {
        try {
            pipeline.run(leadership);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
