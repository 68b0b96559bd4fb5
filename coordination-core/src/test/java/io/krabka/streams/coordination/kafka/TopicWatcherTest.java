package io.krabka.streams.coordination.kafka;

import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/**
 * The watcher's loop over a consumer whose polls the test makes fail or work: our own
 * back-off, not Kafka's behaviour (which {@code TopicWatcherIT} shows on a broker).
 */
class TopicWatcherTest {

    private static final String TOPIC = "__coordination_state";

    /** A consumer that keeps its assignment and counts polls, which fail while {@code failing} is set. */
    private static final class ScriptedConsumer {
        final AtomicInteger polls = new AtomicInteger();
        volatile boolean failing = true;
        private final AtomicReference<Set<TopicPartition>> assignment = new AtomicReference<>(Set.of());

        @SuppressWarnings("unchecked")
        Consumer<byte[], byte[]> consumer() {
            return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
                    Consumer.class.getClassLoader(),
                    new Class<?>[] {Consumer.class},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "assign" -> {
                            assignment.set(Set.copyOf((Collection<TopicPartition>) args[0]));
                            yield null;
                        }
                        case "assignment" -> assignment.get();
                        case "poll" -> {
                            polls.incrementAndGet();
                            if (failing) {
                                throw new TopicAuthorizationException(Set.of(TOPIC));
                            }
                            // A poll that finds nothing waits a little, as a real one waits for data.
                            TimeUnit.MILLISECONDS.sleep(20);
                            yield ConsumerRecords.empty();
                        }
                        case "toString" -> "ScriptedConsumer";
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> null;
                    });
        }
    }

    @Test
    void aPollThatKeepsFailingIsRetriedWithGrowingWaitsNotInALoopAndTheWaitsStartAgainAfterOneWorks() throws Exception {
        ScriptedConsumer scripted = new ScriptedConsumer();
        try (TopicWatcher watcher = new TopicWatcher(TOPIC, () -> 3, scripted::consumer)) {
            watcher.watch(Role.of("controller"), news -> {});
            await().atMost(Duration.ofSeconds(10)).until(() -> scripted.polls.get() >= 2);

            // 100, 200, 400, 800, 1 600 ms (± 20 %): about six polls in three seconds; a loop makes thousands.
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> scripted.polls.get() <= 12);

            scripted.failing = false;
            await().atMost(Duration.ofSeconds(20)).until(() -> scripted.polls.get() >= 14);
            scripted.failing = true;
            int before = scripted.polls.get();
            // Back at 100 ms: a few more tries within seconds, where a wait that kept growing would be 10 s.
            await().atMost(Duration.ofSeconds(5)).until(() -> scripted.polls.get() >= before + 4);
        }
    }
}
