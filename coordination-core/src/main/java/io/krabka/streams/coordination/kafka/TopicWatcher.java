package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.utils.ExponentialBackoff;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread and one {@code read_committed} consumer per transport that follow the end
 * of the partitions of the watched roles and tell each role's watchers when a record of
 * that role was committed, so a contender waiting between passes wakes on a release or a
 * new lease at once instead of polling for it. Only a wake-up: it reads no state and
 * decides nothing, and a missed wake-up costs latency, never safety (contenders pass
 * again at least every second).
 */
final class TopicWatcher implements AutoCloseable {

    /** Hears the news of one role. */
    @FunctionalInterface
    interface NewsListener extends java.util.function.Consumer<RoleNews> {}

    private static final Logger log = LoggerFactory.getLogger(TopicWatcher.class);
    private static final Duration POLL = Duration.ofSeconds(1);
    private static final Duration RETRY = Duration.ofSeconds(1);
    /**
     * The waits after failed polls: 100 ms, doubling to 10 s, reset by a poll that works.
     * A poll that keeps failing (no Read on the topic, a failed SASL login) fails at once,
     * so without them the watcher would spin.
     */
    private static final ExponentialBackoff FAILED_POLLS = new ExponentialBackoff(100, 2, 10_000, 0.2);
    /** A watcher that keeps failing says so at WARN at most this often. */
    static final Duration WARN_INTERVAL = Duration.ofMinutes(1);
    /** News that names nobody: every contender of the role reads. */
    private static final RoleNews UNPLACED = new RoleNews(true, null);

    private final String topic;
    private final IntSupplier partitionCount;
    private final Supplier<Consumer<byte[], byte[]>> consumers;
    private final Map<Role, List<NewsListener>> watchers = new ConcurrentHashMap<>();
    // Per followed partition, the offset of the first record this watcher got from it
    // since it began following it: it has told every committed record from there on to
    // the watchers of its role (or will, once polled).
    private final Map<Integer, Long> coveredFrom = new ConcurrentHashMap<>();
    private volatile boolean changed;
    // When to look for the topic's partition count again, or 0; the watcher's thread only.
    private long followAgainAt;
    private volatile boolean closed;
    private volatile @Nullable Consumer<byte[], byte[]> consumer;
    private @Nullable Thread thread;
    // Failures in a row and when they began and were last reported; the watcher's thread only.
    private int failures;
    private long failingSinceNanos;
    private long warnedAtNanos;

    TopicWatcher(String topic, IntSupplier partitionCount, Supplier<Consumer<byte[], byte[]>> consumers) {
        this.topic = topic;
        this.partitionCount = partitionCount;
        this.consumers = consumers;
    }

    /** Tells {@code onNews} (on the watcher's thread: it must not block) of each committed record of {@code role}. */
    synchronized AutoCloseable watch(Role role, NewsListener onNews) {
        if (closed) {
            return () -> {};
        }
        watchers.computeIfAbsent(role, r -> new CopyOnWriteArrayList<>()).add(onNews);
        changed = true;
        notifyAll();
        if (thread == null) {
            thread = new Thread(this::run, "krabka-coordination-watcher");
            thread.setDaemon(true);
            thread.start();
        } else {
            wakeUp();
        }
        return () -> unwatch(role, onNews);
    }

    private synchronized void unwatch(Role role, NewsListener onNews) {
        List<NewsListener> those = watchers.get(role);
        if (those != null) {
            those.remove(onNews);
            if (those.isEmpty()) {
                watchers.remove(role);
            }
        }
        changed = true;
        notifyAll();
        wakeUp();
    }

    private void wakeUp() {
        Consumer<byte[], byte[]> current = consumer;
        if (current != null) {
            current.wakeup();
        }
    }

    private void run() {
        try (Consumer<byte[], byte[]> reader = consumers.get()) {
            consumer = reader;
            while (!closed) {
                try {
                    if (changed || followAgainAt != 0 && System.nanoTime() - followAgainAt >= 0) {
                        changed = false;
                        followAgainAt = 0;
                        follow(reader);
                    }
                    if (reader.assignment().isEmpty()) {
                        pause(POLL);
                        continue;
                    }
                    ConsumerRecords<byte[], byte[]> records = reader.poll(POLL);
                    recovered();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        tell(record);
                    }
                } catch (WakeupException wokenForAChange) {
                    // Picks the change up at the top of the loop.
                } catch (RuntimeException e) {
                    // Whatever failed, the watcher no longer vouches for having seen everything.
                    coveredFrom.clear();
                    if (closed) {
                        break;
                    }
                    long wait = failed(e);
                    changed = true;
                    backOff(wait);
                }
            }
        } finally {
            consumer = null;
        }
    }

    /**
     * Assigns the partitions of the watched roles; a partition new to it starts at its end.
     * Until the transport knows the topic's partition count, it follows nothing and looks
     * again a second later.
     */
    private void follow(Consumer<byte[], byte[]> reader) {
        Set<TopicPartition> wanted = new HashSet<>();
        if (!watchers.isEmpty()) {
            int count = partitionCount.getAsInt();
            if (count <= 0) {
                // Not pinned yet (or no longer valid): follow once a contender pinned the topic.
                followAgainAt = System.nanoTime() + RETRY.toNanos();
                if (!reader.assignment().isEmpty()) {
                    // Kafka logs every assignment at INFO: once a second while a topic that does
                    // not match the settings keeps the contenders out filled the log.
                    reader.assign(Set.of());
                }
                return;
            }
            for (Role role : watchers.keySet()) {
                wanted.add(new TopicPartition(topic, RolePartitioner.partitionFor(role, count)));
            }
        }
        Set<TopicPartition> added = new HashSet<>(wanted);
        added.removeAll(reader.assignment());
        coveredFrom.keySet().removeIf(partition -> !wanted.contains(new TopicPartition(topic, partition)));
        if (!wanted.equals(reader.assignment())) {
            reader.assign(wanted);
        }
        if (!added.isEmpty()) {
            reader.seekToEnd(added);
            // What was committed before the watcher followed these partitions it never saw:
            // their roles' contenders read once, as after news they cannot place.
            int count = partitionCount.getAsInt();
            for (Map.Entry<Role, List<NewsListener>> watched : watchers.entrySet()) {
                if (added.contains(new TopicPartition(topic, RolePartitioner.partitionFor(watched.getKey(), count)))) {
                    watched.getValue().forEach(onNews -> onNews.accept(UNPLACED));
                }
            }
        }
    }

    /**
     * Whether this watcher tells (or, once it polls them, will tell) every record of
     * {@code partition} committed at {@code fromOffset} or later to the watchers of its
     * role: a watcher registered before it read up to {@code fromOffset} misses no news.
     * False while that cannot be vouched for: not followed yet, no record seen since it
     * began following, or a failure since.
     */
    boolean covers(int partition, long fromOffset) {
        Long covered = coveredFrom.get(partition);
        return covered != null && covered <= fromOffset;
    }

    private void tell(ConsumerRecord<byte[], byte[]> record) {
        // Before anything can fail: this offset was seen, whatever it holds.
        coveredFrom.putIfAbsent(record.partition(), record.offset());
        Role role;
        RoleNews news;
        try {
            CoordinationKey key = CoordinationCodec.decodeKey(record.key());
            role = key.role();
            news = RoleNews.of(key, record.value());
        } catch (RuntimeException malformed) {
            return;
        }
        for (NewsListener onNews : watchers.getOrDefault(role, List.of())) {
            try {
                onNews.accept(news);
            } catch (RuntimeException e) {
                log.warn("A watcher of role {} failed", role, e);
            }
        }
    }

    /** Reports a failure (WARN at first, then at most once a {@link #WARN_INTERVAL}); returns the wait before the next try. */
    private long failed(RuntimeException failure) {
        long now = System.nanoTime();
        long wait = FAILED_POLLS.backoff(failures);
        failures++;
        if (failingSinceNanos == 0) {
            failingSinceNanos = now;
        }
        if (warnedAtNanos == 0 || now - warnedAtNanos >= WARN_INTERVAL.toNanos()) {
            boolean first = warnedAtNanos == 0;
            warnedAtNanos = now;
            log.warn(
                    "Watching {} for news of its roles failed: {}. Contenders still read the topic on every pass, so only "
                            + "their wake-ups are late. It keeps trying{}",
                    topic,
                    failure.toString(),
                    first
                            ? ", backing off up to 10 s, and says so again at most once a minute while this lasts"
                            : " (failing for " + TimeUnit.NANOSECONDS.toSeconds(now - failingSinceNanos) + " s, "
                                    + failures + " tries)");
        } else {
            log.debug("Watching {} failed again; trying again in {} ms: {}", topic, wait, failure.toString());
        }
        return wait;
    }

    private void recovered() {
        if (failures == 0) {
            return;
        }
        log.info(
                "Watching {} works again after {} s and {} failed tries",
                topic,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - failingSinceNanos),
                failures);
        failures = 0;
        failingSinceNanos = 0;
        warnedAtNanos = 0;
    }

    /** Waits {@code millis} after a failure; only closing ends it early (a watch that changes is followed after). */
    private void backOff(long millis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (this) {
            try {
                for (long left = until - System.nanoTime(); !closed && left > 0; left = until - System.nanoTime()) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closed = true;
            }
        }
    }

    private void pause(Duration duration) {
        synchronized (this) {
            try {
                if (!closed && !changed) {
                    wait(duration.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closed = true;
            }
        }
    }

    @Override
    public void close() {
        Thread running;
        synchronized (this) {
            closed = true;
            running = thread;
            notifyAll();
        }
        wakeUp();
        if (running != null) {
            try {
                running.join(Duration.ofSeconds(5).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
