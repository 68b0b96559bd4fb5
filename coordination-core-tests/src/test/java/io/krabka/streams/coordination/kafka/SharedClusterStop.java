package io.krabka.streams.coordination.kafka;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Stops this JVM's {@linkplain KafkaTestCluster#shared() shared cluster} when the test run
 * ends, as Spring Kafka's global embedded broker is stopped: after the last test class, not
 * after each. Registered, like {@code AwaitilityDefaults}, for every test JVM that has this
 * test jar on its class path.
 */
public final class SharedClusterStop implements LauncherSessionListener {

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        KafkaTestCluster.stopShared();
    }
}
