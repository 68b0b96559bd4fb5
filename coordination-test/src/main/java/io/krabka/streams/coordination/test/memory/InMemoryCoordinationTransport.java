package io.krabka.streams.coordination.test.memory;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One member's transport on an {@link InMemoryCluster}. It keeps the contract of the
 * Kafka transport (the same contract test runs against both), so the client and the
 * Spring integration can be tested in milliseconds.
 */
public final class InMemoryCoordinationTransport implements CoordinationTransport {

    private final InMemoryCluster cluster;
    private final TopicSpec topic;
    private final Map<Role, MemoryEpoch> epochs = new ConcurrentHashMap<>();
    private final Set<Role> prepared = ConcurrentHashMap.newKeySet();
    // Per watched role, the end offset of its partition when its watcher registered.
    private final Map<Role, Long> watchedFrom = new ConcurrentHashMap<>();
    private volatile boolean closed;

    InMemoryCoordinationTransport(InMemoryCluster cluster, TopicSpec topic) {
        this.cluster = cluster;
        this.topic = topic;
    }

    @Override
    public String topic() {
        return topic.name();
    }

    @Override
    public int partitionCount() {
        return topic.partitions();
    }

    private TopicPartition partitionOf(Role role) {
        return new TopicPartition(topic.name(), RolePartitioner.partitionFor(role, topic.partitions()));
    }

    /** The partition {@code role}'s records live on, for the cluster's partition faults. */
    public TopicPartition partition(Role role) {
        return partitionOf(role);
    }

    @Override
    public long register(Role role, MemberId member, long registeredAt) {
        requireOpen();
        return cluster.register(
                partitionOf(role),
                CoordinationCodec.encodeKey(CoordinationKey.registration(role, member)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Registration(member, registeredAt)));
    }

    @Override
    public void deregister(Role role, MemberId member) {
        requireOpen();
        cluster.register(
                partitionOf(role), CoordinationCodec.encodeKey(CoordinationKey.registration(role, member)), null);
    }

    /** Appends arbitrary bytes to the role's partition, as a broken or hostile writer could. */
    public long appendRaw(Role role, byte[] key, byte[] value) {
        return cluster.append(partitionOf(role), key, value);
    }

    @Override
    public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        requireOpen();
        TopicPartition partition = partitionOf(role);
        try {
            return cluster.read(partition, fromOffset, maxWait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CoordinationException("reading role " + role + " was interrupted", e);
        }
    }

    @Override
    public RoleEpoch initEpoch(Role role) {
        requireOpen();
        MemoryEpoch previous = epochs.remove(role);
        if (previous != null) {
            previous.close();
        }
        prepared.remove(role);
        MemoryEpoch epoch = new MemoryEpoch(role, cluster.initProducerId(role.name()));
        epochs.put(role, epoch);
        return epoch;
    }

    /** Notes the role as prepared, as a Kafka transport would build its producer; nothing while its epoch is held here. */
    @Override
    public void prepareEpoch(Role role) {
        requireOpen();
        if (!epochs.containsKey(role)) {
            prepared.add(role);
        }
    }

    /** The in-memory cluster never compacts. */
    @Override
    public Duration minCompactionLag() {
        return Duration.ofMillis(Long.MAX_VALUE);
    }

    @Override
    public void discardPrepared(Role role) {
        prepared.remove(role);
    }

    /**
     * The roles prepared for a challenge and not yet challenged or discarded: what a Kafka
     * transport would keep a producer (a thread, buffers, a connection) for, beside the
     * roles it holds.
     */
    public Set<Role> preparedRoles() {
        return Set.copyOf(prepared);
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role) {
        requireOpen();
        return cluster.describe(List.of(role.name()), null).get(role.name());
    }

    /** As {@link #describeEpoch(Role)}; a frozen coordinator fails it after {@code timeout} or the operation timeout, whichever is shorter. */
    @Override
    public Optional<ProducerState> describeEpoch(Role role, Duration timeout) {
        requireOpen();
        return cluster.describe(List.of(role.name()), timeout).get(role.name());
    }

    /** Any other topic the producer's transactions wrote to: the in-memory cluster does not pin roles to partitions per topic. */
    @Override
    public Optional<String> otherTopicWrittenBy(Role role, long producerId) {
        requireOpen();
        return cluster.topicWrittenBy(producerId, topic.name());
    }

    /** One DescribeTransactions for all of them, as on Kafka: one latency, and one frozen coordinator fails it all. */
    @Override
    public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        requireOpen();
        List<Role> distinct = roles.stream().distinct().toList();
        Map<String, Optional<ProducerState>> byId =
                cluster.describe(distinct.stream().map(Role::name).toList(), null);
        Map<Role, Optional<ProducerState>> described = new LinkedHashMap<>();
        distinct.forEach(role -> described.put(role, byId.get(role.name())));
        return described;
    }

    @Override
    public boolean watches() {
        return true;
    }

    @Override
    public AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
        requireOpen();
        InMemoryCluster.AppendListener listener = (partition, key, value) -> {
            if (!partition.topic().equals(topic.name()) || key == null) {
                return;
            }
            try {
                // Every watcher of every member hears each append: the key is decoded once for all of them.
                CoordinationKey decoded = cluster.watchedKey(key);
                if (decoded.role().equals(role)) {
                    onNews.accept(cluster.watchedNews(decoded, value));
                }
            } catch (RuntimeException malformed) {
                // Not a record of any role: no news.
            }
        };
        long from = cluster.onAppendFrom(partitionOf(role), listener);
        watchedFrom.merge(role, from, Math::min);
        return () -> {
            cluster.removeAppendListener(listener);
            watchedFrom.remove(role, from);
        };
    }

    /**
     * Vouches as the Kafka transport does, where the cluster says so
     * ({@link InMemoryCluster#vouchForWatchers}): a watcher of the role hears every append
     * from the end offset at which it registered, so a read up to {@code fromOffset} at or
     * past it misses nothing a watcher is not told of.
     */
    @Override
    public boolean tellsEverythingSince(Role role, long fromOffset) {
        Long from = watchedFrom.get(role);
        return !closed
                && from != null
                && fromOffset >= from
                && cluster.vouchesForWatchers(partitionOf(role), fromOffset);
    }

    @Override
    public void close() {
        closed = true;
        epochs.values().forEach(MemoryEpoch::close);
        epochs.clear();
        prepared.clear();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the in-memory transport is closed");
        }
    }

    private final class MemoryEpoch implements RoleEpoch {
        private final Role role;
        private final InMemoryCluster.Epoch epoch;
        private volatile boolean epochClosed;
        // Set when a commit's outcome was lost: the producer may only retry that commit.
        private volatile boolean broken;

        MemoryEpoch(Role role, InMemoryCluster.Epoch epoch) {
            this.role = role;
            this.epoch = epoch;
        }

        @Override
        public Role role() {
            return role;
        }

        @Override
        public List<RecordMetadata> transact(List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
            return transact(records, consumed, Duration.ZERO);
        }

        /** A commit answers at once here; one made to lose its answer ({@link InMemoryCluster#loseNextCommit}) stays lost however long it is retried. */
        @Override
        public List<RecordMetadata> transact(
                List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, Duration commitRetry) {
            if (epochClosed || broken) {
                throw new CoordinationException("the epoch of role " + role + " is " + (broken ? "broken" : "closed"));
            }
            try {
                return cluster.transact(epoch, records, consumed, cluster::partitionOf);
            } catch (CommitOutcomeUnknownException lost) {
                broken = true;
                throw lost;
            }
        }

        @Override
        public long featureGeneration() {
            return cluster.featureGeneration();
        }

        @Override
        public boolean usable() {
            return !epochClosed && !broken;
        }

        /** Forgets only this epoch, as a Kafka transport does: a challenge may have put the next one already. */
        @Override
        public void close() {
            epochClosed = true;
            epochs.remove(role, this);
        }
    }
}
