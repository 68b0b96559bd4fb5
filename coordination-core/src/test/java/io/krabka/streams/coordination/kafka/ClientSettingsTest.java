package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

class ClientSettingsTest {

    private static final Role ROLE = Role.of("controller");

    /**
     * A linger in the connection settings (an application's producer properties, which the
     * starter passes on) made Kafka refuse to build the role's producer: the delivery
     * timeout was the request timeout plus 1 ms, below linger + request timeout.
     */
    @Test
    void theApplicationsLingerIsNotTheLibrarysAndKafkaBuildsItsProducers() {
        Map<String, Object> connection =
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1", ProducerConfig.LINGER_MS_CONFIG, "250");
        for (Duration timeout : new Duration[] {Duration.ofSeconds(1), Duration.ofSeconds(15), Duration.ofMinutes(2)}) {
            Map<String, Object> transactional =
                    KafkaCoordinationTransport.transactionalSettings(connection, ROLE, timeout, Duration.ofSeconds(30));
            Map<String, Object> registrar = KafkaCoordinationTransport.registrarSettings(connection, timeout);

            for (Map<String, Object> settings : List.of(transactional, registrar)) {
                assertThat(settings).containsEntry(ProducerConfig.LINGER_MS_CONFIG, 0);
                new KafkaProducer<byte[], byte[]>(settings).close(Duration.ZERO);
            }
        }
    }

    /**
     * The same for what idempotence requires (an outside review): an application's
     * {@code retries=0} or six requests in flight made Kafka refuse the library's producers.
     */
    @Test
    void theApplicationsRetriesAndInFlightRequestsAreNotTheLibrarys() {
        for (Map.Entry<String, Object> setting : List.<Map.Entry<String, Object>>of(
                Map.entry(ProducerConfig.RETRIES_CONFIG, "0"),
                Map.entry(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "6"))) {
            Map<String, Object> connection = Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1", setting.getKey(), setting.getValue());
            for (Map<String, Object> settings : List.of(
                    KafkaCoordinationTransport.transactionalSettings(
                            connection, ROLE, Duration.ofSeconds(30), Duration.ofSeconds(30)),
                    KafkaCoordinationTransport.registrarSettings(connection, Duration.ofSeconds(30)))) {
                new KafkaProducer<byte[], byte[]>(settings).close(Duration.ZERO);
            }
        }
    }

    /** Operation timeouts from a nanosecond to Integer.MAX_VALUE ms, around the 30 s request-timeout cap. */
    @Test
    void kafkaBuildsTheProducersForAnyOperationTimeout() {
        Map<String, Object> connection = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
        for (Duration timeout : new Duration[] {
            Duration.ofNanos(1),
            Duration.ofMillis(1),
            Duration.ofMillis(29_999),
            Duration.ofMillis(30_000),
            Duration.ofMillis(30_001),
            Duration.ofMillis(Integer.MAX_VALUE)
        }) {
            new KafkaProducer<byte[], byte[]>(KafkaCoordinationTransport.transactionalSettings(
                            connection, ROLE, timeout, Duration.ofSeconds(30)))
                    .close(Duration.ZERO);
            new KafkaProducer<byte[], byte[]>(KafkaCoordinationTransport.registrarSettings(connection, timeout))
                    .close(Duration.ZERO);
        }
    }

    @Test
    void withoutALingerEachSendLeavesAtOnce() {
        Map<String, Object> settings = KafkaCoordinationTransport.transactionalSettings(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1"),
                ROLE,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30));

        assertThat(settings).containsEntry(ProducerConfig.LINGER_MS_CONFIG, 0);
        new KafkaProducer<byte[], byte[]>(settings).close(Duration.ZERO);
    }

    @Test
    void theApplicationsFetchTuningIsNotTheReaders() {
        Map<String, Object> connection = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1",
                ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "2000",
                ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1048576");

        assertThat(KafkaCoordinationTransport.readerSettings(connection))
                .containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100)
                .containsEntry(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1);
        assertThat(ClientSettings.watcher(connection))
                .containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 500)
                .containsEntry(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1);
    }

    @Test
    void theApplicationsRetryBackoffIsNotAChallengers() {
        Map<String, Object> settings = KafkaCoordinationTransport.transactionalSettings(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        "127.0.0.1:1",
                        ProducerConfig.RETRY_BACKOFF_MS_CONFIG,
                        "100"),
                ROLE,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30));

        assertThat(settings).containsEntry(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 5);
    }
}
