package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.probe.ProbeCheck;
import io.krabka.streams.coordination.spring.StartupFencingProbe;
import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code probe} detail of the {@code coordination} health contributor: short; the endpoint has the whole report. */
final class FencingProbeHealth {

    private FencingProbeHealth() {}

    static Map<String, Object> of(StartupFencingProbe.Outcome outcome) {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("mode", outcome.mode());
        if (outcome.report() == null) {
            detail.put("problem", outcome.problem());
            return detail;
        }
        detail.put("status", outcome.status().name());
        detail.put("clusterId", outcome.report().clusterId());
        if (!outcome.report().failures().isEmpty()) {
            detail.put(
                    "failures",
                    outcome.report().failures().stream().map(ProbeCheck::name).toList());
        }
        if (!outcome.report().warnings().isEmpty()) {
            detail.put(
                    "warnings",
                    outcome.report().warnings().stream().map(ProbeCheck::name).toList());
        }
        return detail;
    }
}
