package io.krabka.streams.coordination;

import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Input offsets that a guarded transaction commits together with its records, in the
 * consumer group {@code group} (where Kafka keeps consumer offsets). The broker fences
 * them with the transaction: a deposed holder's offsets never become visible.
 *
 * @param group the group the offsets belong to; a pipeline that reads with manual
 *     assignment passes its consumer's {@code groupMetadata()} (with {@code group.id} set: no
 *     generation, no member, so the offsets commit without joining the group)
 * @param offsets per input partition, the offset of the next record to read
 */
public record ConsumedOffsets(@Nullable ConsumerGroupMetadata group, Map<TopicPartition, OffsetAndMetadata> offsets) {

    /** No input offsets: a plain guarded write. */
    public static final ConsumedOffsets NONE = new ConsumedOffsets(null, Map.of());

    public ConsumedOffsets {
        offsets = Map.copyOf(Objects.requireNonNull(offsets, "offsets"));
        if (!offsets.isEmpty()) {
            Objects.requireNonNull(group, "group");
        }
    }

    /** Whether there is nothing to commit. */
    public boolean isEmpty() {
        return offsets.isEmpty();
    }
}
