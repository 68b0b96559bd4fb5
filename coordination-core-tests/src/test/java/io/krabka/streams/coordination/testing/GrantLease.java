package io.krabka.streams.coordination.testing;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A challenger's grant written by hand, as a member writes it: the lease record of
 * {@code member} at the epoch the coordinator reports for the role, for one default lease,
 * committed with {@code minted}. For tests that step in between a holder's requests.
 */
public final class GrantLease {

    private GrantLease() {}

    public static void commit(
            RoleEpoch minted, CoordinationTransport describer, Role role, TopicSpec topic, MemberId member, long now) {
        ProducerState epoch = describer.describeEpoch(role).orElseThrow();
        minted.transact(List.of(new ProducerRecord<>(
                topic.name(),
                RolePartitioner.partitionFor(role, topic.partitions()),
                now,
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                        member,
                        epoch.producerId(),
                        epoch.producerEpoch(),
                        now,
                        now + LeaseConfig.DEFAULTS.duration().toMillis())))));
    }
}
