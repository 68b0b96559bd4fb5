package io.krabka.streams.coordination.probe;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiFunction;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * The checks that write, on the probe topic and a scratch transactional id of their own:
 * a live fence (producer A opens a transaction, producer B initializes the same id, A's
 * commit must be refused as fenced and the coordinator must report a newer epoch), a
 * commit of the newest producer (must succeed, and move the epoch as the finalized
 * {@code transaction.version} says), and an aborted-read canary (a {@code read_committed}
 * reader must see the committed record and neither aborted one).
 *
 * <p>Size: one scenario, each step feeding the next, with the answers of each check.
 */
final class LiveChecks {

    /** The probe's producers' transaction.timeout.ms: a transaction a crash leaves open is aborted within it. */
    static final Duration TRANSACTION_TIMEOUT = Duration.ofSeconds(10);

    private static final String FENCE = "live-fence";
    private static final String COMMIT = "commit-after-fence";
    private static final String EPOCH = "epoch-behaviour";
    private static final String ABORTED_READ = "aborted-read";
    private static final List<String> ORDER = List.of(FENCE, COMMIT, EPOCH, ABORTED_READ);

    private static final String FENCE_MEANS = "Whether a deposed holder is refused by the broker once a challenger ran"
            + " InitProducerId: every fencing guarantee rests on it";
    private static final String COMMIT_MEANS = "Whether only a newer producer fences: a holder must be able to commit"
            + " while no one else initialized its id";
    private static final String EPOCH_MEANS =
            "Whether the epoch moves as the finalized transaction.version says; members"
                    + " predict their epoch from it";
    private static final String READ_MEANS =
            "Whether read_committed readers never see aborted records (no G1a): a member"
                    + " must not act on a lease that was never committed";

    private final Admin admin;
    private final Map<String, Object> producerConnection;
    private final Map<String, Object> consumerConnection;
    private final String probeTopic;
    private final String transactionalId;
    private final short replicationFactor;
    private final Duration timeout;
    private final BiFunction<Map<String, Object>, String, Map<String, Object>> named;
    private final List<ProbeCheck> checks = new ArrayList<>();
    private String step = "";

    LiveChecks(
            Admin admin,
            Map<String, Object> producerConnection,
            Map<String, Object> consumerConnection,
            String probeTopic,
            String transactionalId,
            short replicationFactor,
            Duration timeout,
            BiFunction<Map<String, Object>, String, Map<String, Object>> named) {
        this.admin = admin;
        this.producerConnection = producerConnection;
        this.consumerConnection = consumerConnection;
        this.probeTopic = probeTopic;
        this.transactionalId = transactionalId;
        this.replicationFactor = replicationFactor;
        this.timeout = timeout;
        this.named = named;
    }

    /**
     * {@code <topic>-probe-<8 hex digits>}, the topic's name cut where needed so the id
     * stays within the 249 bytes of a transactional id this library accepts.
     */
    static String scratchId(String topicName) {
        String suffix = "-probe-" + UUID.randomUUID().toString().substring(0, 8);
        String name = topicName;
        while (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + suffix.length() > Role.MAX_ROLE_LEN) {
            name = name.substring(0, name.length() - 1);
        }
        return name + suffix;
    }

    /** The live checks, as a read-only run reports them. */
    static List<ProbeCheck> skipped() {
        return List.of(
                ProbeCheck.skipped(FENCE, "not checked (read-only)", FENCE_MEANS),
                ProbeCheck.skipped(COMMIT, "not checked (read-only)", COMMIT_MEANS),
                ProbeCheck.skipped(EPOCH, "not checked (read-only)", EPOCH_MEANS),
                ProbeCheck.skipped(ABORTED_READ, "not checked (read-only)", READ_MEANS));
    }

    List<ProbeCheck> run(@Nullable Short transactionVersion) {
        try {
            step = "creating the probe topic " + probeTopic;
            ensureTopic();
        } catch (RuntimeException e) {
            return failed(FENCE, e);
        }
        KafkaProducer<byte[], byte[]> a = null;
        KafkaProducer<byte[], byte[]> b = null;
        boolean mayBeOpen = false;
        String current = FENCE;
        try {
            step = "InitProducerId of producer A";
            a = producer("a");
            a.initTransactions();
            step = "DescribeTransactions after producer A's InitProducerId";
            TransactionDescription first = describe();
            step = "a send of producer A in a transaction";
            a.beginTransaction();
            mayBeOpen = true;
            long fencedOffset =
                    ProbeCalls.await(a.send(record("fenced")), timeout).offset();
            step = "InitProducerId of producer B, the challenger";
            b = producer("b");
            b.initTransactions();
            step = "DescribeTransactions after producer B's InitProducerId";
            TransactionDescription challenged = describe();
            step = "the commit of producer A, the deposed";
            RuntimeException refused = outcome(a::commitTransaction);
            if (!fence(first, challenged, refused)) {
                return rest(FENCE);
            }
            current = COMMIT;
            step = "a send of producer B in a transaction";
            b.beginTransaction();
            long committedOffset =
                    ProbeCalls.await(b.send(record("committed")), timeout).offset();
            step = "the commit of producer B, the newest";
            RuntimeException commit = outcome(b::commitTransaction);
            if (commit != null) {
                checks.add(
                        isFenced(commit)
                                ? ProbeCheck.fail(
                                        COMMIT,
                                        "producer B's commit was answered as fenced (" + ProbeCalls.describe(commit)
                                                + ") although no other producer initialized " + transactionalId,
                                        "A fence that no newer"
                                                + " leader caused: a gateway rewriting producer ids, or one restarted, would depose every"
                                                + " holder at random",
                                        "connect the members to the brokers directly, not through the gateway")
                                : ProbeCheck.fail(
                                        COMMIT,
                                        "producer B's commit failed (" + ProbeCalls.describe(commit) + ")",
                                        COMMIT_MEANS,
                                        null));
                return rest(COMMIT);
            }
            mayBeOpen = false;
            step = "DescribeTransactions after producer B's commit";
            TransactionDescription committed = describe();
            checks.add(ProbeCheck.pass(
                    COMMIT,
                    "producer B committed (the coordinator reports " + state(committed) + ")",
                    "A holder commits while no newer producer exists"));
            current = EPOCH;
            checks.add(EpochBehaviour.check(EPOCH, transactionVersion, challenged, committed));
            current = ABORTED_READ;
            step = "an aborted transaction of producer B";
            b.beginTransaction();
            mayBeOpen = true;
            long abortedOffset =
                    ProbeCalls.await(b.send(record("aborted")), timeout).offset();
            b.abortTransaction();
            mayBeOpen = false;
            step = "reading the probe topic read_committed";
            checks.add(abortedRead(fencedOffset, committedOffset, abortedOffset));
            return checks;
        } catch (RuntimeException e) {
            return failed(current, e);
        } finally {
            close(a);
            close(b);
            if (mayBeOpen) {
                abortLeftovers();
            }
        }
    }

    /** Adds the live-fence check; whether the fence held. */
    private boolean fence(
            TransactionDescription first, TransactionDescription challenged, @Nullable RuntimeException refused) {
        if (refused == null) {
            checks.add(ProbeCheck.fail(
                    FENCE,
                    "producer A committed after producer B initialized " + transactionalId,
                    "The backend does not fence a superseded producer: a deposed holder's writes would land",
                    "do not use this backend for fenced leadership"));
            return false;
        }
        if (!isFenced(refused)) {
            checks.add(ProbeCheck.fail(
                    FENCE,
                    "producer A's commit failed with " + ProbeCalls.describe(refused) + ", not as fenced",
                    "The backend does not tell a deposed holder that it was fenced",
                    null));
            return false;
        }
        if (challenged.producerId() == first.producerId() && challenged.producerEpoch() <= first.producerEpoch()) {
            checks.add(ProbeCheck.fail(
                    FENCE,
                    "after producer B's InitProducerId the coordinator still reports " + state(challenged)
                            + " (producer A had " + state(first) + ")",
                    "A member that checks a holder's epoch" + " would find a deposed holder current",
                    "do not use this backend for fenced leadership"));
            return false;
        }
        checks.add(ProbeCheck.pass(
                FENCE,
                "producer A (" + state(first) + ") was refused with "
                        + refused.getClass().getSimpleName()
                        + " after producer B's InitProducerId; the coordinator then reported "
                        + state(challenged),
                "A deposed holder cannot commit once a challenger initialized the role's id: the broker"
                        + " enforces the fence"));
        return true;
    }

    private ProbeCheck abortedRead(long fencedOffset, long committedOffset, long abortedOffset) {
        TopicPartition partition = new TopicPartition(probeTopic, 0);
        Set<String> seen = new LinkedHashSet<>();
        long position;
        long deadline = System.nanoTime() + timeout.toNanos();
        KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(
                named.apply(KafkaCoordinationTransport.readerSettings(consumerConnection), "reader"));
        try {
            reader.assign(List.of(partition));
            reader.seek(partition, Math.min(fencedOffset, committedOffset));
            do {
                for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(100))) {
                    if (record.key() != null
                            && new String(record.key(), StandardCharsets.UTF_8).equals(transactionalId)) {
                        seen.add(new String(record.value(), StandardCharsets.UTF_8) + "@" + record.offset());
                    }
                }
                position = reader.position(partition, timeout);
            } while ((position <= abortedOffset || !seen.contains("committed@" + committedOffset))
                    && System.nanoTime() < deadline);
        } finally {
            reader.close(CloseOptions.timeout(FencingProbe.CLOSE_TIMEOUT));
        }
        List<String> aborted =
                seen.stream().filter(label -> !label.startsWith("committed@")).toList();
        String records = "records fenced@" + fencedOffset + " (aborted by the fence), committed@" + committedOffset
                + ", aborted@" + abortedOffset;
        if (!aborted.isEmpty()) {
            return ProbeCheck.fail(
                    ABORTED_READ,
                    "a read_committed reader saw " + aborted + " of " + records,
                    "Aborted reads (G1a): a member could act on a lease or registration that was never committed",
                    "do not use this backend for fenced leadership");
        }
        if (position > abortedOffset && !seen.contains("committed@" + committedOffset)) {
            return ProbeCheck.fail(
                    ABORTED_READ,
                    "a read_committed reader got past " + records + " without seeing the" + " committed one (it saw "
                            + seen + ")",
                    "A committed lease or registration could be missed by the" + " members",
                    "do not use this backend for fenced leadership");
        }
        if (position <= abortedOffset) {
            // Another probe's transaction left open (a member killed mid-probe) holds the last stable offset for up
            // to TRANSACTION_TIMEOUT: not evidence against the backend.
            return ProbeCheck.warn(
                    ABORTED_READ,
                    "a read_committed reader did not get past " + records + " within " + timeout.toMillis()
                            + " ms (it saw " + seen + ", position " + position + ")",
                    "Not checked: the last"
                            + " stable offset did not advance in time (another transaction open on the probe topic, or a stalled"
                            + " partition)",
                    "run the probe again; if it stays, look for hanging transactions"
                            + " (kafka-transactions.sh find-hanging)");
        }
        return ProbeCheck.pass(
                ABORTED_READ,
                "a read_committed reader saw exactly the committed one of " + records,
                "Readers see committed records only");
    }

    /** The failure of {@code check} at the current step, and the checks after it as not run. */
    private List<ProbeCheck> failed(String check, RuntimeException e) {
        String finding = step + " failed: " + ProbeCalls.describe(e);
        if (ProbeCalls.denied(e)) {
            checks.add(ProbeCheck.warn(
                    check,
                    finding,
                    "Not checked: the ACLs refuse the probe",
                    "grant Create and Write on"
                            + " topic " + probeTopic + ", Write and Describe on transactional ids prefixed " + prefix()
                            + ", or run the probe read-only"));
        } else if (ProbeCalls.is(e, TimeoutException.class) || ProbeCalls.is(e, RetriableException.class)) {
            // A broker down or a partition without a leader while the member starts: no evidence either way.
            checks.add(ProbeCheck.warn(
                    check,
                    finding,
                    "Not checked: the cluster did not answer in time or failed" + " transiently",
                    "run the probe again once the cluster is healthy"));
        } else if (ProbeCalls.unsupported(e)) {
            checks.add(ProbeCheck.fail(
                    check,
                    finding,
                    "The backend does not support Kafka transactions: nothing can fence a" + " deposed holder",
                    "run on a backend that supports Kafka transactions (InitProducerId, EndTxn)"));
        } else {
            checks.add(ProbeCheck.fail(check, finding, meaning(check), null));
        }
        return rest(check);
    }

    /** The checks after {@code failed}, as not run. */
    private List<ProbeCheck> rest(String failed) {
        for (String check : ORDER.subList(ORDER.indexOf(failed) + 1, ORDER.size())) {
            checks.add(ProbeCheck.skipped(check, "not run: " + failed + " did not pass", meaning(check)));
        }
        return checks;
    }

    private static String meaning(String check) {
        return switch (check) {
            case FENCE -> FENCE_MEANS;
            case COMMIT -> COMMIT_MEANS;
            case EPOCH -> EPOCH_MEANS;
            default -> READ_MEANS;
        };
    }

    private String prefix() {
        return transactionalId.substring(0, transactionalId.lastIndexOf('-') + 1);
    }

    private void ensureTopic() {
        try {
            ProbeCalls.await(
                    Objects.requireNonNull(admin.describeTopics(Set.of(probeTopic))
                            .topicNameValues()
                            .get(probeTopic)),
                    timeout);
        } catch (RuntimeException e) {
            if (!ProbeCalls.is(e, UnknownTopicOrPartitionException.class)) {
                throw e;
            }
            NewTopic topic = new NewTopic(probeTopic, 1, replicationFactor)
                    .configs(Map.of(
                            TopicConfig.CLEANUP_POLICY_CONFIG,
                            TopicConfig.CLEANUP_POLICY_DELETE,
                            TopicConfig.RETENTION_MS_CONFIG,
                            Long.toString(Duration.ofHours(1).toMillis())));
            try {
                ProbeCalls.await(admin.createTopics(List.of(topic)).all(), timeout);
            } catch (RuntimeException exists) {
                if (!ProbeCalls.is(exists, TopicExistsException.class)) {
                    throw exists;
                }
            }
        }
        awaitLeader();
    }

    /** Until the new topic's partition has a leader every broker asked knows: first writes then go through at once. */
    private void awaitLeader() {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                TopicDescription description = ProbeCalls.await(
                        Objects.requireNonNull(admin.describeTopics(Set.of(probeTopic))
                                .topicNameValues()
                                .get(probeTopic)),
                        timeout);
                if (description.partitions().get(0).leader() != null) {
                    return;
                }
            } catch (RuntimeException e) {
                if (!ProbeCalls.is(e, UnknownTopicOrPartitionException.class) || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                return; // the producers retry
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new org.apache.kafka.common.errors.InterruptException(e);
            }
        }
    }

    private KafkaProducer<byte[], byte[]> producer(String name) {
        return new KafkaProducer<>(named.apply(
                KafkaCoordinationTransport.transactionalSettings(
                        producerConnection, Role.of(transactionalId), timeout, TRANSACTION_TIMEOUT),
                name));
    }

    private ProducerRecord<byte[], byte[]> record(String label) {
        return new ProducerRecord<>(
                probeTopic,
                0,
                transactionalId.getBytes(StandardCharsets.UTF_8),
                label.getBytes(StandardCharsets.UTF_8));
    }

    private TransactionDescription describe() {
        return ProbeCalls.await(
                admin.describeTransactions(List.of(transactionalId)).description(transactionalId), timeout);
    }

    static String state(TransactionDescription description) {
        return "producer id " + description.producerId() + ", epoch " + description.producerEpoch() + ", "
                + description.state();
    }

    private static @Nullable RuntimeException outcome(Runnable commit) {
        try {
            commit.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static boolean isFenced(Throwable failure) {
        return ProbeCalls.is(failure, ProducerFencedException.class)
                || ProbeCalls.is(failure, InvalidProducerEpochException.class)
                || ProbeCalls.is(failure, InvalidTxnStateException.class);
    }

    /** One more InitProducerId of the scratch id: the coordinator aborts a transaction a failed check left open. */
    private void abortLeftovers() {
        KafkaProducer<byte[], byte[]> cleanup = null;
        try {
            cleanup = producer("cleanup");
            cleanup.initTransactions();
        } catch (RuntimeException e) {
            // Nothing more to do: the coordinator aborts it after TRANSACTION_TIMEOUT.
        } finally {
            close(cleanup);
        }
    }

    private static void close(@Nullable KafkaProducer<byte[], byte[]> producer) {
        if (producer != null) {
            producer.close(FencingProbe.CLOSE_TIMEOUT);
        }
    }
}
