package io.krabka.coordination.cli;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tool's Kafka clients: one {@link Admin} (DescribeTopics, DescribeConfigs,
 * DescribeTransactions) and {@code read_committed} consumers without a group. No producer
 * exists: the {@link KafkaCoordinationTransport} it builds gets a registrar and role
 * producers that refuse every call, so nothing can write to the topic, register, or run
 * InitProducerId, not even by mistake. (An idempotent producer would run InitProducerId
 * as soon as it starts, which is why the transport's own {@code create} is not used.)
 */
final class ReadOnlyCluster implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReadOnlyCluster.class);

    private final Map<String, Object> connection;
    private final Duration timeout;
    private final Admin admin;
    private KafkaCoordinationTransport transport;

    ReadOnlyCluster(Map<String, Object> connection, Duration timeout) {
        this.connection = Map.copyOf(connection);
        this.timeout = timeout;
        Map<String, Object> settings = KafkaCoordinationTransport.adminSettings(connection, timeout);
        settings.put("client.id", "krabka-coordination-cli-admin");
        this.admin = Admin.create(settings);
    }

    Admin admin() {
        return admin;
    }

    Duration timeout() {
        return timeout;
    }

    /** A new {@code read_committed} consumer without a group, that creates no topic; the caller closes it. */
    KafkaConsumer<byte[], byte[]> newReader(String name) {
        Map<String, Object> settings = KafkaCoordinationTransport.readerSettings(connection);
        settings.put(ConsumerConfig.CLIENT_ID_CONFIG, "krabka-coordination-cli-" + name);
        int requestTimeout = (int) Math.min(timeout.toMillis(), 30_000);
        settings.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        settings.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeout);
        return new KafkaConsumer<>(settings);
    }

    /**
     * The core's transport over this cluster's admin and a reader of its own, for the
     * core's {@code CoordinationClient.describe}. It reads and describes only.
     *
     * @param topic must have {@code create} off: a missing topic is an error, never created
     */
    KafkaCoordinationTransport transport(TopicSpec topic) {
        if (topic.create()) {
            throw new IllegalArgumentException("the tool never creates the coordination topic");
        }
        if (transport == null) {
            Function<Role, Producer<byte[], byte[]>> noRoleProducers = role -> {
                throw new UnsupportedOperationException(
                        "krabka-coordination-cli is read-only: it never takes an epoch for role " + role);
            };
            transport = new KafkaCoordinationTransport(
                    admin, refusingProducer(), noRoleProducers, newReader("reader"), topic, timeout);
        }
        return transport;
    }

    /** A producer whose every call but {@code close} throws: the transport's registrar, never used. */
    @SuppressWarnings("unchecked")
    static Producer<byte[], byte[]> refusingProducer() {
        return (Producer<byte[], byte[]>) Proxy.newProxyInstance(
                ReadOnlyCluster.class.getClassLoader(),
                new Class<?>[] {Producer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "close" -> null;
                    case "toString" -> "read-only producer";
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default ->
                        throw new UnsupportedOperationException("krabka-coordination-cli is read-only: Producer."
                                + method.getName() + " is never called");
                });
    }

    /** Closes every client; a failure to close is no reason to withhold what was read. */
    @Override
    public void close() {
        try {
            if (transport != null) {
                // Closes the admin and the reader with it.
                transport.close();
            } else {
                admin.close(timeout);
            }
        } catch (RuntimeException e) {
            log.debug("Closing the tool's Kafka clients failed", e);
        }
    }
}
