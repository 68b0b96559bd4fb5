package io.krabka.streams.coordination.test.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CoordinationTimeoutException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** {@link InMemoryCluster#cutOffHolder}: the holder's epoch writes nothing, at once; the next epoch of the role writes. */
class CutOffHolderTest {

    private static final Role ROLE = Role.of("writer");
    private final InMemoryCluster cluster = new InMemoryCluster();
    private final TopicPartition output = new TopicPartition("output", 0);

    @Test
    void theHoldersTransactionsTimeOutAtOnceAndWriteNothingUntilTheNextEpochOrTheEnd() {
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS);
        RoleEpoch holder = transport.initEpoch(ROLE);
        holder.transact(List.of(record("before")));

        InMemoryCluster.Fault cutOff = cluster.cutOffHolder(ROLE);
        assertThatThrownBy(() -> holder.transact(List.of(record("cut off"))))
                .isInstanceOf(CoordinationTimeoutException.class)
                .hasMessageContaining("cut off from the cluster (injected)");
        RoleEpoch next = transport.initEpoch(ROLE);
        next.transact(List.of(record("next epoch")));
        cutOff.close();
        RoleEpoch afterwards = transport.initEpoch(ROLE);
        afterwards.transact(List.of(record("after the fault")));

        assertThat(cluster.records(output).stream()
                        .filter(r -> r != null && r.value() != null)
                        .map(r -> new String(r.value(), StandardCharsets.UTF_8)))
                .containsExactly("before", "next epoch", "after the fault");
    }

    @Test
    void aRoleWithoutAnEpochIsNotAffected() {
        InMemoryCluster.Fault cutOff = cluster.cutOffHolder(ROLE);
        cluster.transport(TopicSpec.DEFAULTS).initEpoch(ROLE).transact(List.of(record("first")));
        cutOff.close();

        assertThat(cluster.records(output)).isNotEmpty();
    }

    private ProducerRecord<byte[], byte[]> record(String value) {
        return new ProducerRecord<>(output.topic(), output.partition(), null, value.getBytes(StandardCharsets.UTF_8));
    }
}
