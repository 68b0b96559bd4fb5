package io.krabka.streams.coordination.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.kafka.AbstractLeadershipIT;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.probe.ProbeStatus;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The broker facts the library builds on, measured with plain transactional producers of
 * the project's clients on broker JVMs of each Kafka release: the epoch a first
 * InitProducerId hands out and how far each later one moves it, how far a commit and an
 * abort move it, and the error a fenced commit and a commit that raced the coordinator's
 * own timeout abort get. The tests assert what the library relies on (epochs only grow;
 * both commits fail with an error it reads as fenced); the observed values go to the
 * output and to {@code target/compat/facts/kafka-VERSION-tvN.properties} for
 * docs/COMPATIBILITY.md.
 */
@ParameterizedClass(name = "Kafka {0}, transaction.version {1}")
@MethodSource("io.krabka.streams.coordination.compat.KafkaRelease#releasesAndTransactionVersions")
class BrokerTransactionFactsIT {

    private static final String TOPIC = "facts";
    /** The errors the library translates to FencedException (KafkaErrors). */
    private static final Class<?>[] FENCED = {
        ProducerFencedException.class,
        InvalidProducerEpochException.class,
        InvalidPidMappingException.class,
        InvalidTxnStateException.class
    };

    private static KafkaTestCluster cluster;
    private static String clusterVersion;
    private static final Map<String, String> FACTS = new TreeMap<>();

    @Parameter(0)
    String version;

    @Parameter(1)
    short transactionVersion;

    private final List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();

    /**
     * One broker a release serves its transaction versions in turn: every test here uses
     * transactional ids of its own, so nothing of one run is seen by the next.
     */
    @BeforeParameterizedClassInvocation
    static void startBroker(String version, short transactionVersion) {
        FACTS.clear();
        FACTS.put("clients", AppInfoParser.getVersion());
        if (!version.equals(clusterVersion)) {
            stopBroker();
            // The coordinator looks for timed-out transactions every half second.
            cluster = KafkaRelease.of(version).start("facts", AbstractLeadershipIT.BROKER_SETTINGS);
            clusterVersion = version;
            cluster.createTopic(TOPIC, 1);
        }
        cluster.setTransactionVersion(transactionVersion);
    }

    @AfterParameterizedClassInvocation
    static void recordFacts(String version, short transactionVersion) {
        if (transactionVersion == KafkaRelease.of(version).maxTransactionVersion()) {
            stopBroker();
        }
        StringBuilder text =
                new StringBuilder("# Kafka " + version + ", transaction.version " + transactionVersion + "\n");
        FACTS.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        System.out.print(text);
        try {
            Path file = Path.of(
                    "target", "compat", "facts", "kafka-" + version + "-tv" + transactionVersion + ".properties");
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void stopBroker() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
            clusterVersion = null;
        }
    }

    @AfterEach
    void closeProducers() {
        producers.forEach(producer -> producer.close(Duration.ofSeconds(5)));
    }

    @Test
    void eachInitProducerIdMovesTheEpochAndFencesTheEarlierProducer() throws Exception {
        String id = transactionalId("init");
        KafkaProducer<byte[], byte[]> first = producer(id, Duration.ofSeconds(60));
        first.initTransactions();
        TransactionDescription afterFirst = describe(id);
        FACTS.put("init.first.epoch", Integer.toString(afterFirst.producerEpoch()));

        KafkaProducer<byte[], byte[]> second = producer(id, Duration.ofSeconds(60));
        second.initTransactions();
        TransactionDescription afterSecond = describe(id);
        FACTS.put("init.again.epoch.step", Integer.toString(afterSecond.producerEpoch() - afterFirst.producerEpoch()));
        FACTS.put("init.again.same.producer.id", Boolean.toString(afterSecond.producerId() == afterFirst.producerId()));
        assertThat(afterSecond.producerEpoch() > afterFirst.producerEpoch()
                        || afterSecond.producerId() != afterFirst.producerId())
                .as("a second InitProducerId gets a newer epoch")
                .isTrue();

        Throwable fenced = commitOne(first);
        FACTS.put("fenced.commit.error", describe(fenced));
        assertThat(fenced).as("the earlier producer's transaction").isInstanceOfAny(FENCED);
        // The newer producer carries on.
        assertThat(commitOne(second)).isNull();
    }

    @Test
    void commitsAndAbortsMoveTheEpochByTheTransactionVersionsStep() throws Exception {
        String id = transactionalId("step");
        KafkaProducer<byte[], byte[]> producer = producer(id, Duration.ofSeconds(60));
        producer.initTransactions();
        int initial = describe(id).producerEpoch();
        for (int i = 0; i < 3; i++) {
            assertThat(commitOne(producer)).isNull();
        }
        int afterCommits = describe(id).producerEpoch();
        FACTS.put("commit.epoch.step", Double.toString((afterCommits - initial) / 3.0));
        producer.beginTransaction();
        producer.send(record()).get(30, TimeUnit.SECONDS);
        producer.abortTransaction();
        int afterAbort = describe(id).producerEpoch();
        FACTS.put("abort.epoch.step", Integer.toString(afterAbort - afterCommits));
        int step = transactionVersion >= 2 ? 1 : 0;
        assertThat(afterCommits - initial).as("the epoch after three commits").isEqualTo(3 * step);
        assertThat(afterAbort - afterCommits).as("the epoch after an abort").isEqualTo(step);
    }

    /**
     * The coordinator aborts a transaction that outlives its timeout and bumps the epoch;
     * the producer's commit arrives afterwards. Under transaction version 2 brokers without
     * the fix of KAFKA-20785 answer INVALID_TXN_STATE, the others PRODUCER_FENCED.
     */
    @Test
    void aCommitAfterTheCoordinatorAbortedTheTransactionOnItsOwnIsFenced() throws Exception {
        String id = transactionalId("timeout");
        KafkaProducer<byte[], byte[]> producer = producer(id, Duration.ofSeconds(1));
        producer.initTransactions();
        producer.beginTransaction();
        producer.send(record()).get(30, TimeUnit.SECONDS);
        int open = describe(id).producerEpoch();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> describe(id).state() == TransactionState.COMPLETE_ABORT);
        FACTS.put("timeout.abort.epoch.step", Integer.toString(describe(id).producerEpoch() - open));

        Throwable late = null;
        try {
            producer.commitTransaction();
        } catch (KafkaException e) {
            late = e;
        }
        FACTS.put("timed.out.commit.error", describe(late));
        assertThat(late).as("the late commit").isInstanceOfAny(FENCED);
    }

    /**
     * The fencing probe (issue 37) reports what the broker is: the transaction version it
     * finalized, and live checks whose epoch behaviour agrees with it. Kafka 3.9 (level 0)
     * and 4.x on level 1 and 2 alike pass every live check.
     */
    @Test
    void theFencingProbeReportsTheTransactionVersionAndPassesItsLiveChecks() {
        // The controller finalized the level; the broker's metadata may tell it a moment later.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            var finalized = cluster.admin()
                    .describeFeatures()
                    .featureMetadata()
                    .get(10, TimeUnit.SECONDS)
                    .finalizedFeatures()
                    .get("transaction.version");
            return (finalized == null ? 0 : finalized.maxVersionLevel()) == transactionVersion;
        });
        FencingReport report = FencingProbe.builder(cluster.connection())
                .topic(TopicSpec.DEFAULTS
                        .withName(transactionalId("probe"))
                        .withReplicationFactor(1)
                        .withAllowUnsafe(true))
                .timeout(Duration.ofSeconds(20))
                .build()
                .run();
        FACTS.put("probe.status", report.status().toString());
        FACTS.put(
                "probe.transaction-version",
                report.check("transaction-version").orElseThrow().finding());
        FACTS.put(
                "probe.epoch-behaviour",
                report.check("epoch-behaviour").orElseThrow().finding());
        FACTS.put("probe.failures", report.failures().toString());
        assertThat(report.check("transaction-version").orElseThrow().finding())
                .isEqualTo("transaction.version=" + transactionVersion);
        for (String live :
                List.of("transaction-apis", "live-fence", "commit-after-fence", "epoch-behaviour", "aborted-read")) {
            assertThat(report.check(live).orElseThrow().status())
                    .as(live + " on " + version)
                    .isEqualTo(ProbeStatus.PASS);
        }
        assertThat(report.failures()).isEmpty();
    }

    private static String transactionalId(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private KafkaProducer<byte[], byte[]> producer(String transactionalId, Duration transactionTimeout) {
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                transactionalId,
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG,
                (int) transactionTimeout.toMillis(),
                ProducerConfig.MAX_BLOCK_MS_CONFIG,
                30_000,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class));
        producers.add(producer);
        return producer;
    }

    private static ProducerRecord<byte[], byte[]> record() {
        return new ProducerRecord<>(TOPIC, new byte[] {1}, new byte[] {2});
    }

    /** One transaction with one record; the failure, if any, unwrapped from the send's future. */
    private static Throwable commitOne(KafkaProducer<byte[], byte[]> producer) throws Exception {
        try {
            producer.beginTransaction();
            producer.send(record()).get(30, TimeUnit.SECONDS);
            producer.commitTransaction();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (KafkaException e) {
            return e;
        }
    }

    private static TransactionDescription describe(String transactionalId) throws Exception {
        return cluster.admin()
                .describeTransactions(List.of(transactionalId))
                .description(transactionalId)
                .get(10, TimeUnit.SECONDS);
    }

    /** The client's exception and the broker error it stands for. */
    private static String describe(Throwable failure) {
        if (failure == null) {
            return "none";
        }
        return Errors.forException(failure).name() + " (" + failure.getClass().getSimpleName() + ")";
    }
}
