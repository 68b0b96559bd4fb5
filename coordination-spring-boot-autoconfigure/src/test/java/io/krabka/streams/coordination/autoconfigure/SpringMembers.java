package io.krabka.streams.coordination.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Spring Boot members of one test application on a test broker, the setup every starter IT
 * needs: each member starts with the broker's address, its member id and the test's own
 * coordination topic (one replica, so the unsafe settings are allowed), and every member a
 * test started is closed after it. Register it per test, so each test gets a fresh topic
 * and no roster or lease leaks from one test to the next:
 *
 * <pre>{@code
 * @RegisterExtension
 * final SpringMembers members = SpringMembers.of(MemberApp.class, cluster::bootstrapServers)
 *         .with("krabka.coordination.roles=controller").withFastLeases();
 * }</pre>
 *
 * <p>Properties are Spring Boot default properties, given as {@code key=value}; a later one
 * replaces an earlier one of the same key: the base ones here, then {@link #with}, then the
 * ones of one {@link #start}.
 */
public final class SpringMembers implements AfterEachCallback {

    private final Class<?> application;
    private final Supplier<String> bootstrapServers;
    private final Map<String, Object> defaults = new LinkedHashMap<>();
    private final List<ConfigurableApplicationContext> started = new CopyOnWriteArrayList<>();
    private final String topic = "coordination-" + UUID.randomUUID().toString().substring(0, 8);

    private SpringMembers(Class<?> application, Supplier<String> bootstrapServers) {
        this.application = application;
        this.bootstrapServers = bootstrapServers;
        put(
                defaults,
                "krabka.coordination.topic.name=" + topic,
                "krabka.coordination.topic.replication-factor=1",
                "krabka.coordination.topic.allow-unsafe=true",
                "krabka.coordination.topic.partitions=3",
                "server.port=0");
    }

    /** Members of {@code application} on the broker at {@code bootstrapServers}, asked when a member starts. */
    public static SpringMembers of(Class<?> application, Supplier<String> bootstrapServers) {
        return new SpringMembers(application, bootstrapServers);
    }

    /** Adds properties every member of this test starts with. */
    public SpringMembers with(String... properties) {
        put(defaults, properties);
        return this;
    }

    /** A 3 s lease renewed every second, standbys a second apart: failovers that fit a test. */
    public SpringMembers withFastLeases() {
        return with(
                "krabka.coordination.lease.duration=3s",
                "krabka.coordination.lease.renew-interval=1s",
                "krabka.coordination.lease.challenge-stagger=1s");
    }

    /** This test's coordination topic. */
    public String topic() {
        return topic;
    }

    /** Starts member {@code member} with these properties on top of the test's. */
    public ConfigurableApplicationContext start(String member, String... more) {
        Map<String, Object> properties = new LinkedHashMap<>(defaults);
        properties.put("spring.kafka.bootstrap-servers", bootstrapServers.get());
        properties.put("krabka.coordination.member-id", member);
        put(properties, more);
        ConfigurableApplicationContext app =
                new SpringApplicationBuilder(application).properties(properties).run();
        started.add(app);
        return app;
    }

    /** Closes {@code app} now, as a member that stops gracefully does; it is not closed again after the test. */
    public void stop(ConfigurableApplicationContext app) {
        started.remove(app);
        app.close();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<ConfigurableApplicationContext> closing = new ArrayList<>(started);
        started.clear();
        closing.forEach(ConfigurableApplicationContext::close);
    }

    private static void put(Map<String, Object> into, String... properties) {
        for (String property : properties) {
            int equals = property.indexOf('=');
            if (equals < 1) {
                throw new IllegalArgumentException("not a key=value property: " + property);
            }
            into.put(property.substring(0, equals), property.substring(equals + 1));
        }
    }
}
