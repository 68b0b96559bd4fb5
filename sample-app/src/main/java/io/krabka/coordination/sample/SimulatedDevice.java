package io.krabka.coordination.sample;

import io.krabka.streams.coordination.fencing.TermGate;
import io.krabka.streams.coordination.fencing.TermStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A device that takes its commands from the log, the way a fenced resource should: it
 * reads {@code sample-commands} with {@code isolation.level=read_committed} (so a
 * deposed leader's writes, which the broker aborted, never reach it) and passes every
 * record through a {@link TermGate}: a command is accepted when the term its guarded
 * write stamped on it is at least the highest the gate has admitted on its partition, and
 * rejected otherwise (and so is a record no guarded write stamped). The topic has one
 * partition; a device reading several keeps a term per device key ({@link TermGate#perKey}). It counts both per member and keeps the last {@value #KEPT} commands, and the
 * role's history from the commands it accepted ({@link RoleHistory}: who held the role
 * under which term, and the gaps between holders).
 *
 * <p>Every member runs one; they all read the same log and so agree.
 */
@Component
public class SimulatedDevice implements SmartLifecycle {

    static final int KEPT = 20;

    private static final Logger log = LoggerFactory.getLogger(SimulatedDevice.class);

    private final Map<String, Object> consumerSettings;
    private final TopicPartition partition;
    private final JsonMapper json;
    private final RoleHistory history;

    private final Map<String, Long> accepted = new TreeMap<>();
    private final Map<String, Long> rejected = new TreeMap<>();
    private final Deque<Received> last = new ArrayDeque<>();
    // Commands that answer a request: which requests were answered, and which twice.
    private final Set<String> answered = new HashSet<>();
    private final Deque<Received> lastAnswers = new ArrayDeque<>();
    private long answeredTwice;
    // The device keeps its high-water term in memory: it re-reads the log from the start.
    // One term per partition, as Kafka orders records per partition (it reads one).
    private final TermGate gate = TermGate.perPartition(TermStore.inMemory());
    private long highestTerm = -1;
    private long malformed;
    private long readUpTo;

    private volatile boolean running;
    private volatile Thread thread;
    private volatile KafkaConsumer<byte[], byte[]> consumer;

    public SimulatedDevice(
            ConsumerFactory<?, ?> consumerFactory,
            JsonMapper json,
            @Value("${sample.commands-topic:sample-commands}") String topic,
            @Value("${sample.dispatch-interval:200ms}") Duration dispatchInterval,
            @Value("${sample.history.min-gap:#{null}}") Duration minGap) {
        // Spring Kafka's connection and security settings; the device's own reading mode.
        Map<String, Object> settings = new HashMap<>(consumerFactory.getConfigurationProperties());
        settings.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        settings.put(ConsumerConfig.CLIENT_ID_CONFIG, "sample-device");
        this.consumerSettings = settings;
        this.partition = new TopicPartition(topic, 0);
        this.json = json;
        this.history = RoleHistory.forDispatchInterval(dispatchInterval, minGap);
    }

    /** What the device has seen, for {@code GET /device}. */
    public synchronized DeviceReport report() {
        return new DeviceReport(
                highestTerm < 0 ? null : highestTerm,
                new TreeMap<>(accepted),
                new TreeMap<>(rejected),
                List.copyOf(last),
                malformed,
                readUpTo,
                new Answers(answered.size(), answeredTwice, List.copyOf(lastAnswers)));
    }

    /** The role's tenures and gaps that overlap the {@code length} before {@code now}, for {@code GET /history}. */
    RoleHistory.History history(Instant now, Duration length) {
        return history.window(now, length);
    }

    synchronized void receive(ConsumerRecord<byte[], byte[]> record) {
        long offset = record.offset();
        byte[] value = record.value();
        readUpTo = offset + 1;
        Command command;
        try {
            command = json.readValue(value, Command.class);
        } catch (JacksonException e) {
            malformed++;
            log.warn("Device skips the malformed command at offset {}: {}", offset, e.getOriginalMessage());
            return;
        }
        TermGate.Verdict verdict = gate.check(record);
        boolean accept = verdict.admitted();
        if (accept) {
            if (verdict.term() > highestTerm && highestTerm >= 0) {
                log.info(
                        "Device now obeys term {} ({}); it refuses every lower term", verdict.term(), command.member());
            }
            highestTerm = verdict.term();
            accepted.merge(command.member(), 1L, Long::sum);
            history.record(command.member(), verdict.term(), command.sentAt());
        } else {
            rejected.merge(command.member(), 1L, Long::sum);
            log.warn("Device rejected command {} from {}: {}", command.seq(), command.member(), verdict.reason());
        }
        Received received = new Received(
                offset,
                command.member(),
                command.term(),
                command.seq(),
                command.producerId(),
                command.producerEpoch(),
                command.sentAt(),
                accept ? "accepted" : "rejected",
                command.requestId());
        keep(last, received);
        if (command.requestId() != null) {
            if (!answered.add(command.requestId())) {
                answeredTwice++;
                log.warn("Device got a second command for request {} at offset {}", command.requestId(), offset);
            }
            keep(lastAnswers, received);
        }
    }

    private static void keep(Deque<Received> newestFirst, Received received) {
        newestFirst.addFirst(received);
        while (newestFirst.size() > KEPT) {
            newestFirst.removeLast();
        }
    }

    private void run() {
        try (KafkaConsumer<byte[], byte[]> reader = consumer) {
            reader.assign(List.of(partition));
            reader.seekToBeginning(List.of(partition));
            while (running) {
                try {
                    for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(500))) {
                        receive(record);
                    }
                } catch (WakeupException e) {
                    break;
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    log.warn("Device could not read {}; trying again: {}", partition, e.toString());
                }
            }
        }
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        consumer = new KafkaConsumer<>(consumerSettings);
        running = true;
        Thread reader = new Thread(this::run, "sample-device");
        reader.setDaemon(true);
        thread = reader;
        reader.start();
        log.info("Device reads {} from the beginning, read_committed", partition);
    }

    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        consumer.wakeup();
        try {
            thread.join(Duration.ofSeconds(10).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Early in startup and late in shutdown: before the leadership loop starts, after it stops. */
    @Override
    public int getPhase() {
        return 0;
    }

    /**
     * What {@code GET /device} returns.
     *
     * @param highestTerm the highest term seen, null before the first command
     * @param accepted accepted commands per member
     * @param rejected rejected commands per member (a lower term than one already seen)
     * @param last the newest commands, newest first
     * @param malformed records that were not a command
     * @param readUpTo the offset after the last record read
     * @param requests the commands that answer requests
     */
    public record DeviceReport(
            Long highestTerm,
            Map<String, Long> accepted,
            Map<String, Long> rejected,
            List<Received> last,
            long malformed,
            long readUpTo,
            Answers requests) {}

    /**
     * The commands that answer requests, as the device saw them.
     *
     * @param answered distinct requests with a command
     * @param answeredTwice commands for a request that already had one: exactly once means 0
     * @param last the newest of them, newest first
     */
    public record Answers(long answered, long answeredTwice, List<Received> last) {}

    /** One command as the device saw it. */
    public record Received(
            long offset,
            String member,
            long term,
            long seq,
            long producerId,
            short producerEpoch,
            Instant sentAt,
            String verdict,
            String requestId) {}
}
