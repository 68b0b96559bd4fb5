package io.krabka.coordination.sample;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.boot.context.event.SpringApplicationEvent;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts an {@link EmbeddedKafkaBroker} when {@code spring.kafka.bootstrap-servers} is
 * not given, before the application context is created, and points
 * {@code spring.kafka.bootstrap-servers} at it. The broker is closed after every bean
 * that uses it (it is the context's first disposable bean, so its last to be destroyed),
 * or at once when startup fails before there is a context.
 *
 * <p>Runs after the configuration files, the command line and logging are set up
 * ({@link Ordered#LOWEST_PRECEDENCE}). Settings: {@code sample.broker.host} (default
 * 127.0.0.1) and {@code sample.broker.port} (default 9092).
 */
final class EmbeddedBrokerStarter implements ApplicationListener<SpringApplicationEvent>, Ordered {

    static final String BOOTSTRAP_SERVERS = "spring.kafka.bootstrap-servers";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedBrokerStarter.class);

    private EmbeddedKafkaBroker broker;
    private final AtomicBoolean closed = new AtomicBoolean();
    private boolean handedToContext;

    @Override
    public void onApplicationEvent(SpringApplicationEvent event) {
        if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
            environmentPrepared(prepared.getEnvironment());
        } else if (event instanceof ApplicationPreparedEvent prepared && broker != null) {
            // The first disposable bean is destroyed last: after the leadership loop released
            // its role and every client closed.
            if (prepared.getApplicationContext().getBeanFactory() instanceof DefaultSingletonBeanRegistry registry) {
                registry.registerDisposableBean("embeddedKafkaBroker", this::close);
                handedToContext = true;
            }
        } else if (event instanceof ApplicationFailedEvent && broker != null && !handedToContext) {
            close();
        }
    }

    private void environmentPrepared(ConfigurableEnvironment environment) {
        Binder binder = Binder.get(environment);
        List<String> given =
                binder.bind(BOOTSTRAP_SERVERS, Bindable.listOf(String.class)).orElse(List.of());
        if (!given.isEmpty()) {
            log.info("Joining the Kafka cluster at {}; no embedded broker", String.join(",", given));
            return;
        }
        String host = binder.bind("sample.broker.host", String.class).orElse("127.0.0.1");
        int port = binder.bind("sample.broker.port", Integer.class).orElse(9092);
        log.info("No {} given: starting an embedded Kafka broker on {}:{}", BOOTSTRAP_SERVERS, host, port);
        broker = EmbeddedKafkaBroker.start(host, port);
        environment
                .getPropertySources()
                .addFirst(new MapPropertySource(
                        "embeddedKafkaBroker", Map.of(BOOTSTRAP_SERVERS, broker.bootstrapServers())));
        log.info("Embedded Kafka broker at {}", broker.bootstrapServers());
    }

    private void close() {
        if (broker != null && closed.compareAndSet(false, true)) {
            log.info("Stopping the embedded Kafka broker at {}", broker.bootstrapServers());
            broker.close();
        }
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
