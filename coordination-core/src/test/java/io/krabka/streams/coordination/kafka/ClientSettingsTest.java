package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
}
