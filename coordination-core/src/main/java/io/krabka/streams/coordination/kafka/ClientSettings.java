package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The settings each client of {@link KafkaCoordinationTransport} must have, added to the
 * connection settings it is given. The transport's public static methods of the same
 * names document them.
 */
final class ClientSettings {

    private ClientSettings() {}

    /** Gives each client its own client.id (the application's, if any, as a prefix), so logs and metrics tell them apart. */
    static Map<String, Object> named(Map<String, Object> settings, String suffix) {
        Object base = settings.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        String prefix = base == null || base.toString().isBlank() ? "krabka" : base.toString();
        settings.put(CommonClientConfigs.CLIENT_ID_CONFIG, prefix + "-coordination-" + suffix);
        return settings;
    }

    /**
     * Reconnect and metadata-recovery settings shared by every client (see
     * {@link KafkaCoordinationTransport#RECONNECT_BACKOFF_MAX} and
     * {@link KafkaCoordinationTransport#METADATA_RECOVERY_STRATEGY}).
     */
    private static Map<String, Object> backedOff(Map<String, Object> settings) {
        settings.putIfAbsent(
                CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG,
                KafkaCoordinationTransport.METADATA_RECOVERY_STRATEGY);
        settings.putIfAbsent(
                CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG,
                KafkaCoordinationTransport.RECONNECT_BACKOFF_MAX.toMillis());
        return settings;
    }

    /** See {@link KafkaCoordinationTransport#adminSettings}. */
    static Map<String, Object> admin(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        settings.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), 30_000));
        return settings;
    }

    /** See {@link KafkaCoordinationTransport#registrarSettings}. */
    static Map<String, Object> registrar(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = producerBase(connection, timeout);
        settings.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        return settings;
    }

    /** See {@link KafkaCoordinationTransport#transactionalSettings}. */
    static Map<String, Object> transactional(
            Map<String, Object> connection, Role role, Duration timeout, Duration transactionTimeout) {
        Map<String, Object> settings = producerBase(connection, timeout);
        settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, role.name());
        settings.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) transactionTimeout.toMillis());
        // A challenger's InitProducerId is retried at least once (after FindCoordinator, and
        // while the coordinator finishes the previous holder's transaction: CONCURRENT_TRANSACTIONS);
        // at the default 100 ms backoff that wait was most of a handover. Transactional requests
        // retry at this fixed backoff (kafka-clients 4.1: no exponential growth for them), so
        // lower would multiply the requests of a challenger behind a transaction that cannot
        // complete (a partition without a leader); 5 ms is at most 200 a second. Set whatever
        // the application's producer settings say: they tune its own producers, and a review
        // measured what theirs cost a handover here.
        settings.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 5);
        return settings;
    }

    /** See {@link KafkaCoordinationTransport#readerSettings}. */
    static Map<String, Object> reader(Map<String, Object> connection) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.remove(ConsumerConfig.GROUP_ID_CONFIG);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        // A standby waits in a long poll; a release is a transaction whose marker may not
        // wake a held fetch, so bound each fetch's wait: it bounds how late a release is seen.
        // Set whatever the application's consumer settings say, as the minimum fetch size: an
        // application's fetch.max.wait.ms of 2 s with fetch.min.bytes of 1 MB made a released
        // role go back to its old holder, which pruned the live standby as silent (a review).
        settings.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        settings.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1);
        // A deleted coordination topic must stay deleted until an operator acts.
        settings.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        return settings;
    }

    /**
     * Watcher settings: a reader's, with Kafka's default fetch wait (500 ms): the watcher
     * is woken by appends, so its wait only bounds how often an idle member asks.
     */
    static Map<String, Object> watcher(Map<String, Object> connection) {
        Map<String, Object> settings = reader(connection);
        settings.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 500);
        return settings;
    }

    private static Map<String, Object> producerBase(Map<String, Object> connection, Duration timeout) {
        Map<String, Object> settings = backedOff(new HashMap<>(connection));
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        // What idempotence requires, whatever the application's producer settings say:
        // Kafka refuses an idempotent producer with retries 0 or more than 5 requests in flight.
        settings.put(ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE);
        settings.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) timeout.toMillis());
        int requestTimeout = (int) Math.min(timeout.toMillis(), 30_000);
        settings.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeout);
        settings.put(
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(timeout.toMillis(), requestTimeout + 1L));
        // Always 0, whatever the application's producer settings say: a registration is a lone
        // append a standby waits for, and a commit sends at once anyway. A linger there also
        // made Kafka refuse the producer (delivery.timeout.ms below linger + request timeout).
        settings.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        return settings;
    }
}
