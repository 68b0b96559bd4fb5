package io.krabka.streams.coordination.probe;

/** What one check of a {@link FencingProbe} found, worst last. */
public enum ProbeStatus {
    /** The check ran and found what the guarantees rest on. */
    PASS,
    /** Not checked: a read-only run skips the checks that write. Says nothing either way. */
    SKIPPED,
    /** The guarantees hold, but something could not be read or is close to a limit. */
    WARN,
    /** Something the guarantees rest on is missing: do not contend on this backend until it is fixed. */
    FAIL;

    /** The worse of the two. */
    ProbeStatus worse(ProbeStatus other) {
        return other.ordinal() > ordinal() ? other : this;
    }
}
