package io.krabka.streams.coordination.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.List;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

class RolePartitionerTest {

    private static final List<String> ROLES =
            List.of("controller", "a", "ab", "abc", "abcd", "contrôleur", "🦀-dispatch", "调度器");

    @Test
    void matchesTheProducersOwnKeyPartitioningOfTheRoleName() {
        for (String name : ROLES) {
            Role role = Role.of(name);
            for (int partitions : new int[] {1, 3, 50, 64, 100}) {
                assertThat(RolePartitioner.partitionFor(role, partitions))
                        .as("%s over %d partitions", name, partitions)
                        .isEqualTo(BuiltInPartitioner.partitionForKey(role.utf8(), partitions));
            }
        }
    }

    @Test
    void registrationsAndLeaseOfOneRoleLandInOnePartitionWhateverTheirKeys() {
        Role role = Role.of("controller");
        byte[] registrationKey = CoordinationCodec.encodeKey(CoordinationKey.registration(role, MemberId.of("node-1")));
        byte[] leaseKey = CoordinationCodec.encodeKey(CoordinationKey.lease(role));
        // The default partitioner would hash the keys, which differ; the pin does not look at them.
        assertThat(BuiltInPartitioner.partitionForKey(registrationKey, 50))
                .isNotEqualTo(BuiltInPartitioner.partitionForKey(leaseKey, 50));
        assertThat(RolePartitioner.partitionFor(role, 50)).isBetween(0, 49);
    }

    @Test
    void rejectsANonPositivePartitionCount() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RolePartitioner.partitionFor(Role.of("x"), 0))
                .withMessageContaining("partitionCount");
    }
}
