package io.krabka.streams.coordination.testing;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Awaitility checks a condition first after one poll interval (100 ms) unless told
 * otherwise, so every {@code await()} costs 100 ms even when its condition already holds,
 * and the suites wait in loops of them. Checking at once changes no bound: the interval
 * between checks and every {@code atMost} stay as they are.
 *
 * <p>Registered for every test JVM that has this test jar on its class path (the
 * {@code META-INF/services} entry beside it); the published test kit sets no such default.
 */
public final class AwaitilityDefaults implements LauncherSessionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        Awaitility.setDefaultPollDelay(Duration.ZERO);
    }
}
