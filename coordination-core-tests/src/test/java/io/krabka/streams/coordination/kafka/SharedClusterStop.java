package io.krabka.streams.coordination.kafka;

import org.jspecify.annotations.Nullable;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Stops this JVM's {@linkplain KafkaTestCluster#shared() shared cluster} when the test run
 * ends, as Spring Kafka's global embedded broker is stopped: after the last test class, not
 * after each. Registered, like {@code AwaitilityDefaults}, for every test JVM that has this
 * test jar on its class path, including those without Kafka's broker classes (the Boot 4.1
 * check runs broker JVMs only): so it holds what to stop as a plain {@link AutoCloseable}
 * and never loads {@link KafkaTestCluster} itself.
 */
public final class SharedClusterStop implements LauncherSessionListener {

    private static @Nullable AutoCloseable stop;

    /** What stops the shared cluster, once it has started. */
    static synchronized void register(AutoCloseable stopShared) {
        stop = stopShared;
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        AutoCloseable stopping;
        synchronized (SharedClusterStop.class) {
            stopping = stop;
            stop = null;
        }
        if (stopping != null) {
            try {
                stopping.close();
            } catch (Exception e) {
                throw new IllegalStateException("could not stop the shared test Kafka cluster", e);
            }
        }
    }
}
