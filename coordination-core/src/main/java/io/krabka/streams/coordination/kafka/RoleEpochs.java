package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The role producers of one transport: one transactional producer per role,
 * {@code transactional.id} = the role name, built on demand by the factory. It holds each
 * role's epoch (a producer after InitProducerId) and the producers built ahead of a
 * challenge.
 */
final class RoleEpochs {

    // The transport's logger: operators and tests filter on its name.
    private static final Logger log = LoggerFactory.getLogger(KafkaCoordinationTransport.class);

    private final Function<Role, Producer<byte[], byte[]>> transactionalProducers;
    private final String topic;
    private final Duration timeout;
    private final Map<Role, KafkaRoleEpoch> epochs = new ConcurrentHashMap<>();
    // Producers built ahead of a challenge, not yet initialised: no epoch, no fencing.
    private final Map<Role, Producer<byte[], byte[]>> prepared = new ConcurrentHashMap<>();

    RoleEpochs(Function<Role, Producer<byte[], byte[]>> transactionalProducers, String topic, Duration timeout) {
        this.transactionalProducers = transactionalProducers;
        this.topic = topic;
        this.timeout = timeout;
    }

    /** {@link KafkaCoordinationTransport#initEpoch}: closes this member's earlier epoch of the role first. */
    KafkaRoleEpoch initEpoch(Role role) {
        KafkaRoleEpoch previous = epochs.remove(role);
        if (previous != null) {
            previous.close();
        }
        Producer<byte[], byte[]> ready = prepared.remove(role);
        Producer<byte[], byte[]> producer = ready != null ? ready : transactionalProducers.apply(role);
        try {
            producer.initTransactions();
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw KafkaErrors.translate("initializing the epoch of role " + role, e);
        }
        // Forgets only that epoch: by the time a tenure's close gets there, a challenge may have put the next one.
        KafkaRoleEpoch epoch = new KafkaRoleEpoch(role, producer, timeout, closed -> epochs.remove(role, closed));
        epochs.put(role, epoch);
        return epoch;
    }

    /**
     * Builds the role's producer and lets it fetch the coordination topic's metadata and
     * connect, without InitProducerId (which would be a challenge). A standby next in line
     * calls it, so its challenge pays only for InitProducerId, not for building and
     * connecting a client. Does nothing when one is prepared or the epoch is held here;
     * an epoch of this member's that was closed (its tenure ended) is no longer held.
     */
    void prepareEpoch(Role role) {
        if (epochs.containsKey(role) || prepared.containsKey(role)) {
            return;
        }
        Producer<byte[], byte[]> producer = transactionalProducers.apply(role);
        try {
            producer.partitionsFor(topic);
        } catch (RuntimeException e) {
            // Only a head start: the challenge builds its own producer.
            producer.close(Duration.ZERO);
            log.debug("Could not prepare the producer of role {}: {}", role, e.toString());
            return;
        }
        Producer<byte[], byte[]> raced = prepared.putIfAbsent(role, producer);
        if (raced != null) {
            producer.close(Duration.ZERO);
        }
    }

    /** Closes the producer prepared for {@code role}, if any: its challenge is no longer near. */
    void discardPrepared(Role role) {
        Producer<byte[], byte[]> producer = prepared.remove(role);
        if (producer != null) {
            producer.close(Duration.ZERO);
        }
    }

    /** Closes every epoch held here. */
    void closeEpochs() {
        for (KafkaRoleEpoch epoch : epochs.values()) {
            epoch.close();
        }
        epochs.clear();
    }

    /** Closes every prepared producer: nothing of theirs is pending. */
    void closePrepared() {
        prepared.values().forEach(producer -> producer.close(Duration.ZERO));
        prepared.clear();
    }
}
