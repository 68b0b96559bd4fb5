package io.krabka.coordination.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** One system's samples of one measure, in nanoseconds (or any unit), with nearest-rank percentiles. */
record Samples(String measure, String system, List<Long> values) {

    Samples {
        values = new ArrayList<>(values);
        Collections.sort(values);
        values = List.copyOf(values);
    }

    int n() {
        return values.size();
    }

    /** Nearest-rank percentile: with 30 samples p99 is the maximum, with 10 p90 is the 9th. */
    long percentile(double p) {
        if (values.isEmpty()) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100.0 * values.size());
        return values.get(Math.max(0, Math.min(values.size() - 1, rank - 1)));
    }

    long max() {
        if (values.isEmpty()) {
            return 0;
        }
        return values.get(values.size() - 1);
    }

    double mean() {
        return values.stream().mapToLong(Long::longValue).average().orElse(Double.NaN);
    }
}
