package io.krabka.streams.coordination.probe;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One check's answer.
 *
 * @param name the check, for example {@code transaction-version} or
 *     {@code topic.unclean-leader-election} (docs/USER-GUIDE.md lists them)
 * @param status what it found
 * @param finding what the cluster answered, with the values read
 * @param meaning one sentence on what that means for the fencing guarantees
 * @param fix what to change; null when the status is PASS or SKIPPED
 */
public record ProbeCheck(
        String name,
        ProbeStatus status,
        String finding,
        String meaning,
        @Nullable String fix) {

    public ProbeCheck {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(finding, "finding");
        Objects.requireNonNull(meaning, "meaning");
    }

    static ProbeCheck pass(String name, String finding, String meaning) {
        return new ProbeCheck(name, ProbeStatus.PASS, finding, meaning, null);
    }

    static ProbeCheck warn(String name, String finding, String meaning, @Nullable String fix) {
        return new ProbeCheck(name, ProbeStatus.WARN, finding, meaning, fix);
    }

    static ProbeCheck fail(String name, String finding, String meaning, @Nullable String fix) {
        return new ProbeCheck(name, ProbeStatus.FAIL, finding, meaning, fix);
    }

    static ProbeCheck skipped(String name, String finding, String meaning) {
        return new ProbeCheck(name, ProbeStatus.SKIPPED, finding, meaning, null);
    }

    /**
     * A FAIL, or a WARN when an unsafe setup is allowed on purpose (a development
     * cluster: {@code TopicSpec.allowUnsafe}).
     */
    static ProbeCheck unsafe(boolean allowed, String name, String finding, String meaning, String fix) {
        return allowed
                ? warn(
                        name,
                        finding + " (accepted: unsafe settings are allowed on this development cluster)",
                        meaning,
                        fix)
                : fail(name, finding, meaning, fix);
    }

    /** {@code NAME STATUS: finding. meaning [Fix: fix]} on one line. */
    @Override
    public String toString() {
        return name + " " + status + ": " + finding + (finding.endsWith(".") ? " " : ". ") + meaning
                + (fix == null ? "" : ". Fix: " + fix);
    }
}
