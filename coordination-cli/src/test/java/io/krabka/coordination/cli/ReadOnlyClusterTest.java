package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class ReadOnlyClusterTest {

    @Test
    void theTransportsRegistrarRefusesEverythingButClose() {
        Producer<byte[], byte[]> producer = ReadOnlyCluster.refusingProducer();

        assertThatThrownBy(() -> producer.send(new ProducerRecord<>("__coordination_state", new byte[0], new byte[0])))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("read-only");
        assertThatThrownBy(producer::initTransactions).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(producer::beginTransaction).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> producer.partitionsFor("__coordination_state"))
                .isInstanceOf(UnsupportedOperationException.class);
        producer.close();
        assertThat(producer).isEqualTo(producer).hasToString("read-only producer");
    }
}
