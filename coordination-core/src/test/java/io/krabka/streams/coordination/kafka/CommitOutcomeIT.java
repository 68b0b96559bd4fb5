package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a commit that got no answer in time means, on a broker JVM that is paused
 * (SIGSTOP) while the commit is under way: the transaction may still commit, so the
 * library must neither abort (the client refuses) nor report "nothing was written".
 */
class CommitOutcomeIT {

    private static final String TOPIC = "commands";

    /**
     * kafka-clients 4.1: {@code commitTransaction()} that timed out leaves the commit
     * pending; {@code abortTransaction()} is refused, and calling
     * {@code commitTransaction()} again returns the pending result once the broker answers.
     */
    @Test
    void aCommitThatTimedOutIsRetriedNotAbortedAndCommitsOnce(@TempDir Path dir) throws Exception {
        try (KafkaProcessCluster cluster = KafkaProcessCluster.builder(dir).nodes(1).start()) {
            createTopic(cluster);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG, "commit-retry",
                    ProducerConfig.MAX_BLOCK_MS_CONFIG, 1500,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, null, "once".getBytes())).get(30, TimeUnit.SECONDS);
                cluster.pause(1);
                try {
                    assertThatThrownBy(producer::commitTransaction).isInstanceOf(TimeoutException.class);
                    // What KafkaRoleEpoch did before: the client refuses to abort a pending commit.
                    assertThatThrownBy(producer::abortTransaction).hasMessageContaining("commitTransaction")
                            .hasMessageContaining("must be retried");
                } finally {
                    cluster.resume(1);
                }
                // The pending commit's result: no new transaction, no duplicate.
                retryCommit(producer);
            }
            assertThat(committedValues(cluster)).containsExactly("once");
        }
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

    static void createTopic(KafkaProcessCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** Every committed value of the commands topic, read to its last stable offset. */
    static List<String> committedValues(KafkaProcessCluster cluster) {
        List<String> values = new ArrayList<>();
        TopicPartition partition = new TopicPartition(TOPIC, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class))) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(30)).get(partition);
            while (consumer.position(partition, Duration.ofSeconds(30)) < end) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    values.add(new String(record.value()));
                }
            }
        }
        return values;
    }
}
