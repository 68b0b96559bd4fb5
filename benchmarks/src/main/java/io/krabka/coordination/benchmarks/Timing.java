package io.krabka.coordination.benchmarks;

import java.util.ArrayList;
import java.util.List;

/** The plain harness: one warm-up, then {@code runs} samples of a step that returns nanoseconds. */
final class Timing {

    interface Step {
        long run() throws Exception;
    }

    private Timing() {}

    static List<Long> measure(String label, int warmups, int runs, Step step) throws Exception {
        for (int i = 0; i < warmups; i++) {
            step.run();
        }
        List<Long> samples = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            samples.add(step.run());
        }
        System.err.printf("  done: %s (%d samples)%n", label, runs);
        return samples;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
