package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The role producers of one transport: one transactional producer per role,
 * {@code transactional.id} = the role name, built on demand by the factory. It holds each
 * role's epoch (a producer after InitProducerId) and the producers built ahead of a
 * challenge.
 *
 * <p>A challenge's InitProducerId goes first through a <em>quick</em> producer, when the
 * transport has a factory for one: kafka-clients sends a fresh producer's InitProducerId as
 * a retry after its FindCoordinator, so it waits out {@code retry.backoff.ms} first, and
 * again after each CONCURRENT_TRANSACTIONS while the coordinator completes the previous
 * holder's transaction (a handover's usual case). The quick producer waits 1 ms instead of
 * 5. Transactional requests retry at that fixed back-off, so a challenger behind a
 * transaction that cannot complete would ask a thousand times a second: after
 * {@link #QUICK_WINDOW} unanswered, the quick producer is closed and a producer at the
 * usual back-off asks again. The quick producer that gets its epoch holds the term.
 */
final class RoleEpochs {

    /** How long a challenge asks through the quick producer before it asks at the usual back-off. */
    static final Duration QUICK_WINDOW = Duration.ofSeconds(1);

    // The transport's logger: operators and tests filter on its name.
    private static final Logger log = LoggerFactory.getLogger(KafkaCoordinationTransport.class);

    private final Function<Role, Producer<byte[], byte[]>> transactionalProducers;
    // Producers for a quick first InitProducerId; null: every challenge uses transactionalProducers.
    private final @Nullable Function<Role, Producer<byte[], byte[]>> quickProducers;
    private final Duration quickWindow;
    private final String topic;
    private final Duration timeout;
    private final Map<Role, KafkaRoleEpoch> epochs = new ConcurrentHashMap<>();
    // Producers built ahead of a challenge, not yet initialised: no epoch, no fencing.
    private final Map<Role, Producer<byte[], byte[]>> prepared = new ConcurrentHashMap<>();
    // Quick producers while their InitProducerId is in flight: closing the transport closes them.
    private final Map<Role, Producer<byte[], byte[]>> asking = new ConcurrentHashMap<>();
    private volatile boolean closed;

    RoleEpochs(Function<Role, Producer<byte[], byte[]>> transactionalProducers, String topic, Duration timeout) {
        this(transactionalProducers, null, QUICK_WINDOW, topic, timeout);
    }

    RoleEpochs(
            Function<Role, Producer<byte[], byte[]>> transactionalProducers,
            @Nullable Function<Role, Producer<byte[], byte[]>> quickProducers,
            Duration quickWindow,
            String topic,
            Duration timeout) {
        this.transactionalProducers = transactionalProducers;
        this.quickProducers = quickProducers;
        this.quickWindow = quickWindow;
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
        Function<Role, Producer<byte[], byte[]>> quick = quickProducers;
        Producer<byte[], byte[]> producer;
        if (quick == null) {
            producer = initialised(role, ready != null ? ready : transactionalProducers.apply(role));
        } else {
            Producer<byte[], byte[]> first = ready != null ? ready : quick.apply(role);
            if (initialisedQuickly(role, first)) {
                producer = first;
            } else if (closed) {
                throw new CoordinationException("initializing the epoch of role " + role + ": the transport closed");
            } else {
                producer = initialised(role, transactionalProducers.apply(role));
            }
        }
        // Forgets only that epoch: by the time a tenure's close gets there, a challenge may have put the next one.
        KafkaRoleEpoch epoch = new KafkaRoleEpoch(role, producer, timeout, closed -> epochs.remove(role, closed));
        epochs.put(role, epoch);
        return epoch;
    }

    /** The producer after its InitProducerId; closed, and the failure translated, when that failed. */
    private static Producer<byte[], byte[]> initialised(Role role, Producer<byte[], byte[]> producer) {
        try {
            producer.initTransactions();
            return producer;
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw failedInit(role, e);
        }
    }

    /**
     * InitProducerId through a quick producer, for at most {@link #quickWindow}: true when it
     * got the epoch; false when the window closed it first (an InitProducerId of it may still
     * have bumped the epoch: the next one bumps it again, as after any lost answer). A
     * failure of its own is the challenge's failure, as with any producer.
     */
    private boolean initialisedQuickly(Role role, Producer<byte[], byte[]> producer) {
        AtomicBoolean settled = new AtomicBoolean();
        CompletableFuture.delayedExecutor(quickWindow.toNanos(), TimeUnit.NANOSECONDS)
                .execute(() -> {
                    if (settled.compareAndSet(false, true)) {
                        log.debug(
                                "InitProducerId of role {} unanswered after {} at the quick back-off; asking again at the usual one",
                                role,
                                quickWindow);
                        producer.close(Duration.ZERO); // initTransactions() below throws
                    }
                });
        asking.put(role, producer);
        try {
            producer.initTransactions();
        } catch (RuntimeException e) {
            if (settled.compareAndSet(false, true)) {
                producer.close(Duration.ZERO);
                throw failedInit(role, e);
            }
            return false;
        } finally {
            asking.remove(role, producer);
        }
        // The window may have closed it just as the epoch came: that epoch went with it.
        return settled.compareAndSet(false, true);
    }

    private static CoordinationException failedInit(Role role, RuntimeException e) {
        return KafkaErrors.translate("initializing the epoch of role " + role, e);
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
        Function<Role, Producer<byte[], byte[]>> quick = quickProducers;
        Producer<byte[], byte[]> producer = (quick != null ? quick : transactionalProducers).apply(role);
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

    /** Closes every epoch held here, and the quick producers still asking for one. */
    void closeEpochs() {
        closed = true;
        asking.values().forEach(producer -> producer.close(Duration.ZERO));
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
