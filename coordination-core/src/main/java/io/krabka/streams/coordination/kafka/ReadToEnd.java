package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.transport.RawRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * One read of some partitions, each from its own offset up to the end first found for it
 * ({@code read_committed}: the last stable offset), a slice at a time: the one slice loop
 * of {@link TopicReaders#read} (one partition) and {@link TopicReaders#readAll} (many).
 * Between slices the consumer serves other reads; each slice seeks again, unless the
 * consumer is still where the read left it.
 *
 * <p>A consumer keeps every partition it was ever asked to read assigned and pauses the
 * ones a read does not want ({@link #focus}): Kafka's consumer logs every assignment at
 * INFO, and a partition dropped from the assignment loses its position, so its next read
 * seeks, another INFO line. Reassigning per read, a member polled by the endpoint once a
 * second logged 81 such lines a minute (four roles, the sample's lease timings).
 */
final class ReadToEnd {

    static final Duration POLL_STEP = Duration.ofMillis(100);

    private final Duration timeout;
    private final Map<TopicPartition, Long> next;
    private final Map<TopicPartition, List<RawRecord>> records = new HashMap<>();
    private @Nullable Map<TopicPartition, Long> ends;

    ReadToEnd(Map<TopicPartition, Long> fromOffsets, Duration timeout) {
        this.next = new HashMap<>(fromOffsets);
        fromOffsets.keySet().forEach(partition -> records.put(partition, new ArrayList<>()));
        this.timeout = timeout;
    }

    /**
     * Runs one slice on {@code reader}, whose lock the caller holds: looks up the ends
     * while they are unknown, then polls the partitions short of them until each reaches
     * its end or {@code sliceEnd} (a {@link System#nanoTime()}) passes.
     *
     * @return whether every partition reached its end (false too while the ends are unknown)
     */
    boolean slice(Consumer<byte[], byte[]> reader, long sliceEnd) {
        if (ends == null) {
            // endOffsets updates the last stable offset of each assigned partition and
            // logs a WARN for every other one it was asked about.
            focus(reader, next.keySet());
            Map<TopicPartition, Long> found;
            try {
                found = reader.endOffsets(next.keySet(), Duration.ofNanos(Math.max(1, sliceEnd - System.nanoTime())));
            } catch (org.apache.kafka.common.errors.TimeoutException notYet) {
                return false;
            }
            // With under a millisecond left, Kafka returns at once what it has, which may be
            // nothing: a partition it did not answer for is not at its end.
            for (TopicPartition partition : next.keySet()) {
                if (found.get(partition) == null) {
                    return false;
                }
            }
            ends = found;
        }
        Set<TopicPartition> behind = behind();
        if (behind.isEmpty()) {
            return true;
        }
        Set<TopicPartition> assigned = reader.assignment();
        focus(reader, behind);
        behind.forEach(partition -> seek(reader, partition, next(partition), assigned.contains(partition)));
        while (!behind.isEmpty() && System.nanoTime() < sliceEnd) {
            var polled = reader.poll(POLL_STEP);
            for (TopicPartition partition : List.copyOf(behind)) {
                collect(polled.records(partition), records(partition));
                long position = reader.position(partition, timeout);
                next.put(partition, position);
                if (position >= end(partition)) {
                    behind.remove(partition);
                    if (!behind.isEmpty()) {
                        // Done: fetch only the others from now on. The next read focuses
                        // on its own partitions, so none stays paused that it wants.
                        reader.pause(Set.of(partition));
                    }
                }
            }
        }
        return behind.isEmpty();
    }

    /** Whether the ends are known: some slice got them in time. */
    boolean endsKnown() {
        return ends != null;
    }

    /** The end found for {@code partition}; only once {@link #endsKnown()}. */
    long end(TopicPartition partition) {
        return Objects.requireNonNull(knownEnds().get(partition));
    }

    /** Whether every partition reached its end. */
    boolean done() {
        return ends != null && behind().isEmpty();
    }

    /** The partitions whose next offset is short of their end; only once {@link #endsKnown()}. */
    Set<TopicPartition> behind() {
        Set<TopicPartition> behind = new HashSet<>();
        knownEnds().forEach((partition, end) -> {
            if (next(partition) < end) {
                behind.add(partition);
            }
        });
        return behind;
    }

    /** The offset to read {@code partition} from next. */
    long next(TopicPartition partition) {
        return Objects.requireNonNull(next.get(partition));
    }

    /** What was read of {@code partition} so far, in offset order; the list itself, to add to. */
    List<RawRecord> records(TopicPartition partition) {
        return Objects.requireNonNull(records.get(partition));
    }

    private Map<TopicPartition, Long> knownEnds() {
        return Objects.requireNonNull(ends, "the ends are not known yet");
    }

    /**
     * Makes {@code partitions} the only ones {@code reader} fetches: assigns those it does
     * not have yet on top of the others (each assign logs a line at INFO; the partitions
     * kept keep their positions) and pauses every other assigned partition. The caller
     * holds the reader's lock; every read focuses before it polls.
     */
    static void focus(Consumer<byte[], byte[]> reader, Set<TopicPartition> partitions) {
        Set<TopicPartition> assigned = reader.assignment();
        if (!assigned.containsAll(partitions)) {
            Set<TopicPartition> more = new HashSet<>(assigned);
            more.addAll(partitions);
            reader.assign(more);
            assigned = more;
        }
        Set<TopicPartition> others = new HashSet<>(assigned);
        others.removeAll(partitions);
        if (!others.isEmpty()) {
            reader.pause(others);
        }
        Set<TopicPartition> paused = new HashSet<>(reader.paused());
        paused.retainAll(partitions);
        if (!paused.isEmpty()) {
            reader.resume(paused);
        }
    }

    /**
     * Seeks {@code partition} to {@code offset} unless the reader is there already. Kafka's
     * consumer logs every seek at INFO, and a standby reads its role's partition from
     * where it stopped after every record of the holder: 118 lines a minute of "Seeking to
     * offset" from a standby whose holder sent twice a second. Only a partition that was
     * assigned before is asked for its position (without waiting, so no request is sent
     * for one whose position is known); any doubt seeks.
     */
    static void seek(Consumer<byte[], byte[]> reader, TopicPartition partition, long offset, boolean wasAssigned) {
        if (wasAssigned) {
            try {
                if (reader.position(partition, Duration.ZERO) == offset) {
                    return;
                }
            } catch (org.apache.kafka.common.errors.InterruptException e) {
                throw e;
            } catch (RuntimeException unknown) {
                // No valid position right now (being reset or validated): seeking sets one.
            }
        }
        reader.seek(partition, offset);
    }

    static void collect(List<ConsumerRecord<byte[], byte[]>> polled, List<RawRecord> into) {
        for (ConsumerRecord<byte[], byte[]> record : polled) {
            into.add(new RawRecord(record.offset(), record.timestamp(), record.key(), record.value()));
        }
    }
}
