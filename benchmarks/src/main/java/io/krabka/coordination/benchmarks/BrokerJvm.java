package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.kafka.ChildJvm;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * A one-node broker in a JVM of its own, with Kafka's own JVM settings (C2, G1, 1 GiB heap)
 * rather than the test harness's quick-start ones, warmed before it is measured: a member
 * meets a broker that has been running, not one whose JIT has compiled nothing yet. The
 * warm-up runs in a third JVM ({@link #main}), so the member's JVM starts as cold as a
 * user's does.
 */
final class BrokerJvm implements AutoCloseable {

    /** Kafka's own {@code kafka-server-start.sh} heap and collector. */
    private static final List<String> KAFKA_JVM =
            List.of("-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20");

    private final KafkaProcessCluster process;
    private final KafkaTestCluster cluster;

    private BrokerJvm(KafkaProcessCluster process) {
        this.process = process;
        this.cluster = KafkaTestCluster.wrap(process.bootstrapServers(), process);
    }

    /** Starts the broker in {@code dir} (emptied first) and warms it with {@code producers} transactional ids. */
    static BrokerJvm startWarmed(Path dir, int producers) throws Exception {
        Utils.delete(dir.toFile()); // the last run's broker, if any
        KafkaProcessCluster process = KafkaProcessCluster.builder(dir)
                .jvmOptions(KAFKA_JVM)
                // One node: a transaction state log and coordination topic of one replica.
                .setting("transaction.state.log.num.partitions", "50")
                .start();
        BrokerJvm broker = new BrokerJvm(process);
        try {
            long t0 = System.nanoTime();
            Process warm = ChildJvm.start(
                    BrokerJvm.class.getName(),
                    List.of("-Xmx256m"),
                    List.of(process.bootstrapServers(), Integer.toString(producers)),
                    dir.resolve("warm-up.out"));
            if (!warm.waitFor(5, TimeUnit.MINUTES) || warm.exitValue() != 0) {
                warm.destroyForcibly();
                throw new IllegalStateException("the broker's warm-up failed: " + dir.resolve("warm-up.out"));
            }
            System.err.printf(
                    "  broker JVM (pid %d) warmed by %d transactional ids in %.1f s%n",
                    broker.pid(), producers, (System.nanoTime() - t0) / 1e9);
            return broker;
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
    }

    KafkaTestCluster cluster() {
        return cluster;
    }

    long pid() {
        return process.nodes().get(0).pid();
    }

    /** Closes the admin client and stops the broker JVM. */
    @Override
    public void close() {
        cluster.close();
    }

    /**
     * The warm-up, in a JVM of its own: each of {@code args[1]} transactional ids runs
     * InitProducerId and two one-record transactions on a 50-partition topic, eight at a time,
     * the requests a member's grants and renewals make.
     */
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int producers = Integer.parseInt(args[1]);
        String topic = "bench-warm-up";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 50, (short) 1)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        }
        ExecutorService threads = Executors.newFixedThreadPool(8);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            String id = "bench-warm-up-" + i;
            int partition = i % 50;
            done.add(threads.submit(() -> {
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                        Map.of(
                                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                                ProducerConfig.TRANSACTIONAL_ID_CONFIG, id,
                                ProducerConfig.ACKS_CONFIG, "all"),
                        new ByteArraySerializer(),
                        new ByteArraySerializer())) {
                    producer.initTransactions();
                    for (int tx = 0; tx < 2; tx++) {
                        producer.beginTransaction();
                        producer.send(new ProducerRecord<>(topic, partition, id.getBytes(), new byte[48]));
                        producer.commitTransaction();
                    }
                }
                return null;
            }));
        }
        for (Future<?> future : done) {
            future.get(5, TimeUnit.MINUTES);
        }
        threads.shutdown();
    }
}
