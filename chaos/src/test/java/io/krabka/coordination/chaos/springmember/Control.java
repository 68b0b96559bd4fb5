package io.krabka.coordination.chaos.springmember;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the harness asks of one member JVM, read from a control file it rewrites
 * atomically (a properties file, polled every 20 ms): {@code skew} (milliseconds added
 * to the lease clock), {@code burst} (write as fast as the group commit takes) and
 * {@code release} (a count: each increase releases the dispatcher role through the
 * starter, as the actuator endpoint would). A missing file or key means no skew, no
 * burst, no release.
 */
final class Control {

    private final AtomicLong skew = new AtomicLong();
    private volatile boolean burst;
    private long releases;
    private volatile Runnable onRelease = () -> {};

    /** Starts polling {@code file}; an empty name means no control file (a member started by hand). */
    void follow(String file) {
        if (file.isEmpty()) {
            return;
        }
        Path path = Path.of(file);
        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "chaos-control");
            thread.setDaemon(true);
            return thread;
        });
        poller.scheduleWithFixedDelay(() -> poll(path), 0, 20, TimeUnit.MILLISECONDS);
    }

    long skewMillis() {
        return skew.get();
    }

    boolean burst() {
        return burst;
    }

    /** What to run when the harness asks for a release; it runs on the polling thread. */
    void onRelease(Runnable action) {
        onRelease = action;
    }

    private void poll(Path path) {
        if (!Files.exists(path)) {
            return;
        }
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(Files.readString(path)));
            skew.set(Long.parseLong(properties.getProperty("skew", "0")));
            burst = Boolean.parseBoolean(properties.getProperty("burst", "false"));
            long asked = Long.parseLong(properties.getProperty("release", "0"));
            if (asked > releases) {
                releases = asked;
                onRelease.run();
            }
        } catch (IOException | NumberFormatException unreadable) {
            // the harness replaces the file atomically; read again on the next poll
        }
    }
}
