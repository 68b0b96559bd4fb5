package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a commit that got no answer in time means, on a broker JVM that is paused
 * (SIGSTOP) while the commit is under way: the transaction may still commit, so the
 * library must neither abort (the client refuses) nor report "nothing was written".
 */
class CommitOutcomeIT {

    /**
     * One broker JVM for the class: each test has its own output topic, coordination topic
     * and transactional id, and resumes the broker before it ends.
     */
    private static KafkaProcessCluster cluster;

    @BeforeAll
    static void startBroker(@TempDir Path dir) {
        // Timed-out transactions aborted within half a second of their timeout, not ten.
        cluster = KafkaProcessCluster.builder(dir)
                .nodes(1)
                .settings(AbstractLeadershipIT.BROKER_SETTINGS)
                .start();
    }

    @AfterAll
    static void stopBroker() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * kafka-clients 4.1: {@code commitTransaction()} that timed out leaves the commit
     * pending; {@code abortTransaction()} is refused, and calling
     * {@code commitTransaction()} again returns the pending result once the broker answers.
     */
    @Test
    void aCommitThatTimedOutIsRetriedNotAbortedAndCommitsOnce() throws Exception {
        String topic = "commands-retried";
        createTopic(cluster, topic);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                "commit-retry",
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                1500,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class))) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "once".getBytes()))
                    .get(30, TimeUnit.SECONDS);
            cluster.pause(1);
            try {
                assertThatThrownBy(producer::commitTransaction).isInstanceOf(TimeoutException.class);
                // What KafkaRoleEpoch did before: the client refuses to abort a pending commit.
                assertThatThrownBy(producer::abortTransaction)
                        .hasMessageContaining("commitTransaction")
                        .hasMessageContaining("must be retried");
            } finally {
                cluster.resume(1);
            }
            // The pending commit's result: no new transaction, no duplicate.
            retryCommit(producer);
        }
        assertThat(committedValues(cluster, topic)).containsExactly("once");
    }

    /**
     * The coordinator pauses after the records were acknowledged and before it answered
     * the commit, for longer than the operation timeout (max.block.ms) but shorter than
     * the lease: the commit is sent again until the broker answers, and the write returns
     * with its records committed exactly once. Before, the timed-out commit was aborted,
     * Kafka refused, and the write threw FencedException although it committed.
     */
    @Test
    void aWriteWhoseCommitIsAnsweredAfterAPauseShorterThanTheLeaseReturnsAndCommitsOnce() throws Exception {
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(1));
        String topic = "commands-answered";
        ScheduledExecutorService resumer = Executors.newSingleThreadScheduledExecutor();
        try {
            createTopic(cluster, topic);
            AtomicReference<Runnable> beforeCommit = new AtomicReference<>();
            try (KafkaCoordinationTransport transport =
                            transport(cluster, "coordination-answered", lease, beforeCommit);
                    CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system())) {
                Leadership held = client.acquire(Role.of("paused-commit"), MemberId.of("a"), Duration.ofSeconds(60));
                beforeCommit.set(() -> {
                    cluster.pause(1);
                    // Three operation timeouts: the commit times out and is sent again more than once.
                    resumer.schedule(() -> cluster.resume(1), 6, TimeUnit.SECONDS);
                });

                RecordMetadata written = held.write(new ProducerRecord<>(topic, 0, null, "once".getBytes()));

                assertThat(written.hasOffset()).isTrue();
                assertThat(held.isActive()).isTrue();
                held.write(new ProducerRecord<>(topic, 0, null, "next".getBytes()));
            }
            assertThat(committedValues(cluster, topic)).containsExactly("once", "next");
        } finally {
            resumer.shutdownNow();
        }
    }

    /**
     * The coordinator stays paused past the lease deadline: the write cannot know its
     * outcome, and says so (not FencedException, which would claim nothing was written);
     * the leadership ends FAILED, not FENCED. Once the broker resumes, the records are
     * there at most once.
     */
    @Test
    void aWriteWhoseCommitIsUnansweredPastTheLeaseDeadlineHasAnUnknownOutcomeNotAFence() throws Exception {
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(8), Duration.ofSeconds(3), Duration.ofSeconds(1));
        String topic = "commands-unanswered";
        createTopic(cluster, topic);
        AtomicReference<Runnable> beforeCommit = new AtomicReference<>();
        Throwable thrown;
        try (KafkaCoordinationTransport transport = transport(cluster, "coordination-unanswered", lease, beforeCommit);
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system())) {
            Leadership held = client.acquire(Role.of("unanswered-commit"), MemberId.of("a"), Duration.ofSeconds(60));
            beforeCommit.set(() -> cluster.pause(1));
            try {
                thrown = org.assertj.core.api.Assertions.catchThrowable(
                        () -> held.write(new ProducerRecord<>(topic, 0, null, "maybe".getBytes())));
            } finally {
                cluster.resume(1);
            }
            assertThat(thrown).isInstanceOf(CommitOutcomeUnknownException.class).isNotInstanceOf(FencedException.class);
            assertThat(held.state()).isEqualTo(Leadership.State.FAILED);
        }
        // Whatever the coordinator decides once it runs again (commit, or its timeout's abort), never twice.
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> committedValues(cluster, topic).size() <= 1
                        && transactionsComplete(cluster, "unanswered-commit"));
        assertThat(committedValues(cluster, topic)).hasSizeLessThanOrEqualTo(1);
    }

    private static boolean transactionsComplete(KafkaProcessCluster cluster, String transactionalId) throws Exception {
        try (Admin admin = cluster.admin()) {
            String state = admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId)
                    .get(10, TimeUnit.SECONDS)
                    .state()
                    .toString();
            return state.equals("CompleteCommit") || state.equals("CompleteAbort");
        }
    }

    /**
     * The library's transport on a one-second-ish operation timeout, whose role producers
     * run {@code beforeCommit} (once, in the first transaction that writes a command, not in
     * a renewal a busy machine may slip in first) after their records were acknowledged and
     * before the commit is sent: the pause then falls on the write's commit itself.
     */
    private static KafkaCoordinationTransport transport(
            KafkaProcessCluster cluster,
            String coordinationTopic,
            LeaseConfig lease,
            AtomicReference<Runnable> beforeCommit) {
        Duration timeout = Duration.ofSeconds(2);
        Map<String, Object> connection = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        TopicSpec topic =
                TopicSpec.DEFAULTS.withName(coordinationTopic).withPartitions(1).withReplicationFactor(1);
        return new KafkaCoordinationTransport(
                Admin.create(KafkaCoordinationTransport.adminSettings(connection, timeout)),
                new KafkaProducer<>(KafkaCoordinationTransport.registrarSettings(connection, timeout)),
                role ->
                        new KafkaProducer<byte[], byte[]>(KafkaCoordinationTransport.transactionalSettings(
                                connection, role, timeout, lease.duration())) {
                            // Whether this transaction writes a command: the hook is for a write's commit, never a
                            // renewal's.
                            private volatile boolean command;

                            @Override
                            public Future<RecordMetadata> send(
                                    ProducerRecord<byte[], byte[]> record, Callback callback) {
                                if (!record.topic().equals(coordinationTopic)) {
                                    command = true;
                                }
                                return super.send(record, callback);
                            }

                            @Override
                            public void commitTransaction() {
                                Runnable hook = command ? beforeCommit.getAndSet(null) : null;
                                command = false;
                                if (hook != null) {
                                    flush();
                                    hook.run();
                                }
                                super.commitTransaction();
                            }
                        },
                new KafkaConsumer<>(KafkaCoordinationTransport.readerSettings(connection)),
                topic,
                timeout);
    }

    private static void retryCommit(KafkaProducer<byte[], byte[]> producer) {
        for (int attempt = 0; ; attempt++) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException stillPaused) {
                // A resumed broker may take more than one max.block.ms to answer on a busy machine.
                if (attempt >= 20) {
                    throw stillPaused;
                }
            }
        }
    }

    static void createTopic(KafkaProcessCluster cluster, String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Every committed value of {@code topic}, read to its last stable offset. */
    static List<String> committedValues(KafkaProcessCluster cluster, String topic) {
        List<String> values = new ArrayList<>();
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class))) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            // A commit returns before its markers are written: read once every transaction up
            // to the high watermark is decided, not at once (the last stable offset lags).
            long written;
            try (Admin admin = cluster.admin()) {
                written = admin.listOffsets(
                                Map.of(partition, OffsetSpec.latest()),
                                new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                        .partitionResult(partition)
                        .get(10, TimeUnit.SECONDS)
                        .offset();
            } catch (Exception e) {
                throw new IllegalStateException("could not list the high watermark of " + partition, e);
            }
            await("every transaction of " + partition + " decided")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> consumer.endOffsets(List.of(partition), Duration.ofSeconds(10))
                                    .get(partition)
                            >= written);
            long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(30))
                    .get(partition);
            while (consumer.position(partition, Duration.ofSeconds(30)) < end) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(new String(record.value()));
                }
            }
        }
        return values;
    }
}
