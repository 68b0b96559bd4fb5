package io.krabka.streams.coordination.client.internal;

import java.time.Duration;

/** Durations as a log line should show them to people: {@code 15 s}, {@code 250 ms}, {@code 2 min 5 s}, not {@code PT14.999972688S}. */
public final class DurationText {

    private DurationText() {}

    public static String of(Duration duration) {
        long millis = Math.round(duration.toNanos() / 1_000_000.0);
        if (millis < 1_000) {
            return millis + " ms";
        }
        // Tenths of a second below ten seconds, where they still tell something; whole seconds above.
        if (millis < 10_000) {
            long tenths = Math.round(millis / 100.0);
            return tenths % 10 == 0 ? tenths / 10 + " s" : tenths / 10 + "." + tenths % 10 + " s";
        }
        long seconds = Math.round(millis / 1_000.0);
        if (seconds < 120) {
            return seconds + " s";
        }
        long minutes = seconds / 60;
        return seconds % 60 == 0 ? minutes + " min" : minutes + " min " + seconds % 60 + " s";
    }
}
