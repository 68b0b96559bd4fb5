package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.probe.ProbeCheck;
import io.krabka.streams.coordination.probe.ProbeStatus;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the core's {@link FencingProbe} once at startup, before the {@link LeadershipLoop}
 * contends (a phase just below the loop's), so before the first grant. What a FAIL does
 * is {@code krabka.coordination.probe}: {@link Mode#FAIL} stops startup with the
 * {@link io.krabka.streams.coordination.probe.FencingProbeException}, which Boot's failure
 * analysis shows as the failed checks and their fixes; {@link Mode#WARN} logs it and
 * contends anyway; {@link Mode#OFF} runs nothing. Each WARN is logged once. A cluster the
 * probe cannot reach at all does not stop startup: the members report that themselves.
 * One that has not answered within {@link #NO_ANSWER_WARNING_AFTER} is named at WARN then
 * ({@link #noAnswerYet}), not only at the probe's timeout.
 */
public final class StartupFencingProbe implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(StartupFencingProbe.class);

    /** {@code krabka.coordination.probe}. */
    public enum Mode {
        /** A FAIL stops startup. */
        FAIL,
        /** A FAIL is logged at ERROR; the member contends anyway. */
        WARN,
        /** The probe does not run. */
        OFF
    }

    /**
     * What the startup probe found, for the endpoint and health.
     *
     * @param mode {@code fail}, {@code warn} or {@code off}
     * @param status the report's status; null when the probe did not run
     * @param problem why it did not run (off, not a Kafka transport, the cluster did not
     *     answer); null when it ran
     * @param report what it found; null when it did not run
     */
    public record Outcome(
            String mode,
            @Nullable ProbeStatus status,
            @Nullable String problem,
            @Nullable FencingReport report) {

        /** Without the report: the mode, the status and why it did not run. */
        public Outcome summary() {
            return new Outcome(mode, status, problem, null);
        }
    }

    /**
     * How long the probe waits for the cluster's first answer before it warns that there is
     * none yet ({@link #noAnswerYet}): a cluster answers within a second, and a wrong
     * address or a cluster that is down would otherwise show only at the timeout.
     */
    public static final Duration NO_ANSWER_WARNING_AFTER = Duration.ofSeconds(3);

    private final Mode mode;
    private final Supplier<FencingProbe> probe;
    private volatile Outcome outcome;
    private volatile boolean running;

    /** @param probe the probe to run, or a supplier of null when there is nothing to probe (not a Kafka transport) */
    public StartupFencingProbe(Mode mode, Supplier<FencingProbe> probe) {
        this.mode = mode;
        this.probe = probe;
        this.outcome =
                new Outcome(name(mode), null, mode == Mode.OFF ? "krabka.coordination.probe=off" : "not run yet", null);
    }

    /** What the probe found, or why it did not run. */
    public Outcome outcome() {
        return outcome;
    }

    @Override
    public void start() {
        if (running) {
            return;
        }
        running = true;
        if (mode == Mode.OFF) {
            return;
        }
        FencingProbe toRun = probe.get();
        if (toRun == null) {
            outcome =
                    new Outcome(name(mode), null, "the coordination transport is not Kafka's: nothing to probe", null);
            return;
        }
        FencingReport report;
        try {
            report = toRun.run();
        } catch (CoordinationException e) {
            outcome = new Outcome(name(mode), null, e.getMessage(), null);
            log.warn(
                    "The fencing probe did not run: {}. The member contends without it and reports the cluster's answers"
                            + " itself",
                    e.getMessage());
            return;
        }
        outcome = new Outcome(name(mode), report.status(), null, report);
        for (ProbeCheck warning : report.warnings()) {
            log.warn("Fencing probe of cluster {}: {}", report.clusterId(), warning);
        }
        if (report.failures().isEmpty()) {
            log.info(
                    "Fencing probe of cluster {}: {} ({} checks, {} warned, {} skipped) in {} ms",
                    report.clusterId(),
                    report.status(),
                    report.checks().size(),
                    report.warnings().size(),
                    report.skipped().size(),
                    report.tookMillis());
            return;
        }
        if (mode == Mode.FAIL) {
            report.requireNoFailure();
        }
        for (ProbeCheck failure : report.failures()) {
            log.error(
                    "Fencing probe of cluster {}: {}. Contending anyway: krabka.coordination.probe=warn",
                    report.clusterId(),
                    failure);
        }
    }

    /**
     * Logs, at WARN on one line, that the probe has had no answer from the cluster yet
     * ({@code notice}, from {@link FencingProbe.Builder#onNoAnswer}, names the bootstrap
     * servers and the timeout), and what the member does: it waits until the timeout, then
     * contends without the probe. Whatever the mode: a cluster that does not answer does
     * not stop startup.
     */
    public static void noAnswerYet(String notice) {
        log.warn(
                "{}: check spring.kafka.bootstrap-servers and that the brokers are up. Startup waits for the probe until"
                        + " that timeout, then this member contends without it and reports the cluster's answers"
                        + " itself; its health is not UP until the cluster answers",
                capitalized(notice));
    }

    private static String capitalized(String text) {
        return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Just before the {@link LeadershipLoop}, which contends when it starts. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1001;
    }

    private static String name(Mode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }
}
