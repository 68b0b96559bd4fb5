package io.krabka.streams.coordination.transport;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Every cluster operation the coordination module performs, and nothing else.
 * {@link io.krabka.streams.coordination.kafka.KafkaCoordinationTransport} talks to a
 * Kafka cluster; {@code InMemoryCoordinationTransport} (artifact
 * {@code krabka-coordination-test}) models one in memory for fast tests. Both pass the
 * same contract test.
 *
 * <p>Failures are reported as the module's exceptions: fenced errors as
 * {@link io.krabka.streams.coordination.FencedException}, unanswered calls as
 * {@link io.krabka.streams.coordination.CoordinationTimeoutException}, transient ones
 * as {@link io.krabka.streams.coordination.RetriableCoordinationException}, refused
 * ACLs as {@link io.krabka.streams.coordination.CoordinationAuthorizationException}, a
 * broken topic as {@link io.krabka.streams.coordination.TopicConfigurationException}.
 */
public interface CoordinationTransport extends AutoCloseable {

    /** The coordination topic's name. */
    String topic();

    /** Where this transport reaches the cluster, for messages that tell an operator what to check. */
    default String location() {
        return "topic " + topic();
    }

    /** The coordination topic's partition count, creating or checking the topic on first use. */
    int partitionCount();

    /**
     * Appends a registration of {@code member} for {@code role} with a plain (not
     * transactional) idempotent write, acknowledged by all in-sync replicas.
     *
     * @return the record's offset: the member's join sequence
     */
    long register(Role role, MemberId member, long registeredAt);

    /** Appends the tombstone of {@code member}'s registration for {@code role}. */
    void deregister(Role role, MemberId member);

    /**
     * Reads the committed records of {@code role}'s partition from {@code fromOffset}
     * up to the partition's current end. When nothing new is there, waits up to
     * {@code maxWait} for something to arrive.
     */
    RoleRecords read(Role role, long fromOffset, Duration maxWait);

    /**
     * Reads several partitions at once, each as {@link #read} with no wait does one: for
     * every entry, the committed records of that role's partition from the given offset
     * up to the partition's current end. Pass one role per partition: the records of a
     * partition are those of every role on it. The default reads one after the other; a
     * transport that can read many partitions in one go (Kafka's consumer can) should.
     *
     * @return an entry for every role of {@code fromOffsets}
     * @throws io.krabka.streams.coordination.CoordinationException when some partition
     *     could not be read to its end; nothing is returned for the others then
     */
    default Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
        Map<Role, RoleRecords> read = new LinkedHashMap<>();
        fromOffsets.forEach((role, from) -> read.put(role, read(role, from, Duration.ZERO)));
        return read;
    }

    /**
     * Builds the role's transactional producer ({@code transactional.id} = the role
     * name) and runs InitProducerId, which fences every earlier epoch of the role.
     * An earlier epoch of the role held by this transport is closed first.
     */
    RoleEpoch initEpoch(Role role);

    /**
     * Gets ready for a challenge of {@code role} without making one: builds and connects
     * whatever {@link #initEpoch} needs but must not run InitProducerId. Optional; the
     * default does nothing.
     */
    default void prepareEpoch(Role role) {}

    /**
     * How young a record of the coordination topic is never removed by compaction (the
     * topic's {@code min.compaction.lag.ms}). A commit whose outcome is unknown counts as
     * aborted when a read passed its lease's place without finding it; with a later lease
     * of the role in the log, only a lease younger than this proves that compaction did not
     * remove it. The default, zero, promises nothing.
     */
    default java.time.Duration minCompactionLag() {
        return java.time.Duration.ZERO;
    }

    /**
     * Lets go of what {@link #prepareEpoch} built for {@code role}: this member is no longer
     * about to challenge it, and a member pays for a prepared role as for a held one (on
     * Kafka, a producer with its thread, buffers and connection). Never touches an epoch
     * this transport holds. Optional; the default does nothing.
     */
    default void discardPrepared(Role role) {}

    /**
     * Calls {@code onNews} soon after a record of {@code role} was committed, until the
     * returned handle is closed: a wake-up for a contender waiting between passes, not a
     * delivery (read the records as usual). It must not block. Optional; the default never
     * calls it, and contenders then find news by their periodic passes.
     */
    default AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
        return () -> {};
    }

    /**
     * Whether {@link #watch} reports news. A contender relies on it to skip reading the
     * topic while nothing happens; without it, contenders read at every pass.
     */
    default boolean watches() {
        return false;
    }

    /**
     * Whether every record of {@code role} committed at {@code fromOffset} or later reaches
     * the role's {@link #watch watchers} registered now: one that registered before it read
     * up to {@code fromOffset} misses no news, so a contender skips its fallback reads
     * (for a missed wake-up) while this holds, and a member with many roles does not read
     * each of them in turn through one consumer. It may block briefly (a check that the
     * topic is still the same), never on the role's partition. Optional; the default never
     * vouches.
     */
    default boolean tellsEverythingSince(Role role, long fromOffset) {
        return false;
    }

    /**
     * A problem with the coordination topic found while running that does not stop this
     * member: on Kafka, an operator altered a setting the guarantees rest on (cleanup
     * policy, unclean leader election, replicas, min.insync.replicas) after this member
     * accepted the topic. Contenders report it as their problem (health: misconfigured)
     * until it is fixed. The default finds none.
     */
    default Optional<io.krabka.streams.coordination.TopicConfigurationException> topicProblem() {
        return Optional.empty();
    }

    /**
     * A topic other than this transport's where producer {@code producerId} wrote to the
     * partition {@code role} maps to there: the coordination topic of members configured
     * with another name, when a member finds its role's epoch moved by a writer it never
     * sees. Best effort, for the message that names the mistake; the default finds none.
     */
    default Optional<String> otherTopicWrittenBy(Role role, long producerId) {
        return Optional.empty();
    }

    /** What the transaction coordinator reports for the role, or empty when it knows no such id. */
    Optional<ProducerState> describeEpoch(Role role);

    /**
     * {@link #describeEpoch(Role)}, giving up after {@code timeout} (or the transport's own
     * operation timeout, whichever is shorter): for a holder, whose lease bounds how long
     * an answer is of use. The default ignores {@code timeout}.
     */
    default Optional<ProducerState> describeEpoch(Role role, Duration timeout) {
        return describeEpoch(role);
    }

    /**
     * What the transaction coordinator reports for each of {@code roles}, as
     * {@link #describeEpoch} does for one; an empty value for a role it knows no such id
     * for. The default asks role by role; a transport that can ask for many at once
     * should (Kafka's DescribeTransactions takes many ids in one request).
     *
     * @return an entry for every distinct role of {@code roles}
     * @throws io.krabka.streams.coordination.CoordinationException when the coordinator
     *     could not be asked about some role (it names the role); nothing is returned for
     *     the others then
     */
    default Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        Map<Role, Optional<ProducerState>> described = new LinkedHashMap<>();
        for (Role role : roles) {
            if (!described.containsKey(role)) {
                described.put(role, describeEpoch(role));
            }
        }
        return described;
    }

    /** Closes every producer and consumer this transport owns. */
    @Override
    void close();
}
