package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.transport.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What guarded writes of uniquely numbered commands reported, and the check of that
 * against what the log holds ({@link #violations()}), as {@link Leadership#write(List)}
 * documents the outcomes: a write that returned is in the log exactly once, at the offset
 * it reported if any; one that threw {@link FencedException}, or another
 * {@link CoordinationException} that says nothing was written, is absent; one of unknown
 * outcome is there at most once. And nothing is there that no write sent, and a role's
 * commands are in the order of their leaderships' terms (an older term's after a newer
 * one's is a deposed holder's write: two writers at once).
 */
final class WriteOutcomes {

    /** What a write reported. */
    enum Outcome {
        /** {@code write} returned: written, once. */
        RETURNED,
        /** {@link FencedException}: nothing written. */
        FENCED,
        /** {@link CommitOutcomeUnknownException}: either. */
        UNKNOWN,
        /** Another {@link CoordinationException}: failed before the commit was sent, nothing written. */
        FAILED,
        /** Anything else: no outcome the API names. */
        THREW
    }

    /** One guarded write of one command; its outcome null while it runs. */
    static final class Write {
        final long id;
        final String member;
        final Role role;
        final long term;
        /** Whether its member's process crashed: a write of a crashed process may never end. */
        final BooleanSupplier crashed;

        volatile Outcome outcome;
        volatile String detail = "";
        volatile List<RecordMetadata> metadata;

        Write(long id, String member, Role role, long term, BooleanSupplier crashed) {
            this.id = id;
            this.member = member;
            this.role = role;
            this.term = term;
            this.crashed = crashed;
        }

        @Override
        public String toString() {
            return "command " + id + " of " + member + " for " + role + " (term " + term + "): " + outcome + detail;
        }
    }

    private static final String PREFIX = "command-";

    private final InMemoryCluster cluster;
    private final String topic;
    private final Map<Long, Write> writes = new ConcurrentHashMap<>();
    private final AtomicLong next = new AtomicLong();

    /** The writes of commands to {@code topic} on {@code cluster}. */
    WriteOutcomes(InMemoryCluster cluster, String topic) {
        this.cluster = cluster;
        this.topic = topic;
    }

    /** Writes the next command under {@code leadership} and records what the write reported. */
    Write write(Leadership leadership, String member, BooleanSupplier crashed) {
        Write write = new Write(next.incrementAndGet(), member, leadership.role(), leadership.term(), crashed);
        writes.put(write.id, write);
        try {
            write.metadata = leadership.write(List.of(command(write)));
            write.outcome = Outcome.RETURNED;
        } catch (CommitOutcomeUnknownException unknown) {
            write.detail = " (" + unknown.getMessage() + ")";
            write.outcome = Outcome.UNKNOWN;
        } catch (FencedException fenced) {
            write.detail = " (" + fenced.getMessage() + ")";
            write.outcome = Outcome.FENCED;
        } catch (CoordinationException failed) {
            write.detail = " (" + failed + ")";
            write.outcome = Outcome.FAILED;
        } catch (RuntimeException other) {
            write.detail = " (" + other + ")";
            write.outcome = Outcome.THREW;
        }
        return write;
    }

    /** Adds a write that {@code writer} made outside any leadership: for the controls. */
    Write forge(
            String member,
            Role role,
            long term,
            Outcome outcome,
            java.util.function.Function<ProducerRecord<byte[], byte[]>, RecordMetadata> writer) {
        Write write = new Write(next.incrementAndGet(), member, role, term, () -> false);
        writes.put(write.id, write);
        write.metadata = List.of(writer.apply(command(write)));
        write.outcome = outcome;
        return write;
    }

    /** Whether a write reported {@code outcome}. */
    boolean any(Outcome outcome) {
        return writes.values().stream().anyMatch(write -> write.outcome == outcome);
    }

    /** How many writes reported {@code outcome}. */
    long count(Outcome outcome) {
        return writes.values().stream()
                .filter(write -> write.outcome == outcome)
                .count();
    }

    /** The newest write that reported {@code outcome}. */
    Optional<Write> last(Outcome outcome) {
        return writes.values().stream()
                .filter(write -> write.outcome == outcome)
                .max(Comparator.comparingLong(w -> w.id));
    }

    private ProducerRecord<byte[], byte[]> command(Write write) {
        // Keyed by role: a role's commands share a partition, so their log order is their commit order.
        return new ProducerRecord<>(
                topic,
                write.role.name().getBytes(StandardCharsets.UTF_8),
                (PREFIX + write.id).getBytes(StandardCharsets.UTF_8));
    }

    private static long idOf(RawRecord raw) {
        return Long.parseLong(new String(raw.value(), StandardCharsets.UTF_8).substring(PREFIX.length()));
    }

    /** Every way what the writes reported disagrees with the log; empty when none does. */
    List<String> violations() {
        Map<Long, List<RawRecord>> logged = new HashMap<>();
        Map<Long, Integer> partitionOf = new HashMap<>();
        List<String> found = new ArrayList<>();
        for (int partition = 0; partition < cluster.partitionsFor(topic).size(); partition++) {
            // Per role, the write of the last command in log order.
            Map<Role, Write> lastOfRole = new HashMap<>();
            for (RawRecord raw : cluster.records(new TopicPartition(topic, partition))) {
                long id = idOf(raw);
                logged.computeIfAbsent(id, i -> new ArrayList<>()).add(raw);
                partitionOf.put(id, partition);
                Write write = writes.get(id);
                if (write == null) {
                    found.add("command " + id + " is in the log at " + topic + "-" + partition + "@" + raw.offset()
                            + ", but no write sent it");
                    continue;
                }
                Write before = lastOfRole.put(write.role, write);
                if (before != null && before.term > write.term) {
                    found.add(write + " is in the log after command " + before.id + " of the newer term " + before.term
                            + " of " + write.role + ": two writers at once");
                }
            }
        }
        for (Write write : writes.values()) {
            List<RawRecord> copies = logged.getOrDefault(write.id, List.of());
            String where = "; in the log " + copies.size() + (copies.size() == 1 ? " time" : " times");
            Outcome outcome = write.outcome;
            if (outcome == null) {
                if (!write.crashed.getAsBoolean()) {
                    found.add(write + ": it never returned nor threw" + where);
                } else if (copies.size() > 1) {
                    found.add(write + where);
                }
                continue;
            }
            switch (outcome) {
                case RETURNED -> {
                    if (copies.size() != 1) {
                        found.add(write + where);
                        continue;
                    }
                    RecordMetadata metadata = write.metadata.get(0);
                    int partition = partitionOf.get(write.id);
                    if (metadata.hasOffset()
                            && (metadata.offset() != copies.get(0).offset() || metadata.partition() != partition)) {
                        found.add(write + " reported offset " + metadata.partition() + "@" + metadata.offset()
                                + ", but it is at " + partition + "@"
                                + copies.get(0).offset());
                    }
                }
                case FENCED, FAILED -> {
                    if (!copies.isEmpty()) {
                        found.add(write + where);
                    }
                }
                case UNKNOWN -> {
                    if (copies.size() > 1) {
                        found.add(write + where);
                    }
                }
                case THREW -> found.add(write + ": an outcome the API does not name" + where);
                default -> throw new IllegalStateException(outcome.toString());
            }
        }
        return found;
    }

    /** How many writes reported each outcome, and how many of unknown outcome are in the log. */
    Map<String, Long> tally() {
        Map<String, Long> tally = new HashMap<>();
        List<Long> logged = new ArrayList<>();
        for (int partition = 0; partition < cluster.partitionsFor(topic).size(); partition++) {
            cluster.records(new TopicPartition(topic, partition)).forEach(raw -> logged.add(idOf(raw)));
        }
        java.util.Set<Long> present = new java.util.HashSet<>(logged);
        for (Write write : writes.values()) {
            tally.merge(write.outcome == null ? "unanswered (crashed)" : write.outcome.toString(), 1L, Long::sum);
            if (write.outcome == Outcome.UNKNOWN && present.contains(write.id)) {
                tally.merge("UNKNOWN, in the log", 1L, Long::sum);
            }
        }
        return tally;
    }
}
