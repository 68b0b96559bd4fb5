package io.krabka.streams.coordination.probe;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import java.util.stream.Collectors;

/**
 * A {@link FencingProbe} found that the backend breaks something the fencing guarantees
 * rest on. The message names each failed check and what to change; {@link #report()} has
 * the whole answer.
 */
public class FencingProbeException extends CoordinationConfigurationException {

    private static final long serialVersionUID = 1L;

    private final transient FencingReport report;

    public FencingProbeException(FencingReport report) {
        super(message(report));
        this.report = report;
    }

    /** What the probe found. */
    public FencingReport report() {
        return report;
    }

    private static String message(FencingReport report) {
        return "the fencing probe of cluster " + report.clusterId() + " failed "
                + report.failures().size()
                + (report.failures().size() == 1 ? " check" : " checks") + ": "
                + report.failures().stream().map(ProbeCheck::toString).collect(Collectors.joining("; "));
    }
}
