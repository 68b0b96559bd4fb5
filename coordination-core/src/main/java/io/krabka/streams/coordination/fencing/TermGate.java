package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;

/**
 * The device's half of fencing: admits a record (a command) only when its writer's term
 * is at least the highest term already admitted for its role, so a leader that was
 * deposed cannot command the device again once a newer leader has, even when a record it
 * wrote reaches the device late (a slow network, a retried delivery, a consumer that
 * re-reads). Kafka fences a deposed leader's writes to Kafka; a gate fences what reaches
 * the device by any path.
 *
 * <pre>{@code
 * TermGate gate = TermGate.only(Role.of("controller"), new JdbcTermStore(dataSource));
 * for (ConsumerRecord<String, String> command : consumer.poll(timeout)) {
 *     TermGate.Verdict verdict = gate.check(command);
 *     if (verdict.admitted()) {
 *         device.apply(command.value());
 *     } else {
 *         log.warn("refused: {}", verdict.reason());
 *     }
 * }
 * }</pre>
 *
 * <p>It reads the {@link TokenHeaders} every guarded write carries, or takes a role and
 * term the application carried some other way ({@link #check(Role, long)}). A record
 * without the headers is refused: nothing says a leader wrote it. Thread-safe when its
 * store is; the store decides how long the gate remembers ({@link TermStore}).
 */
public final class TermGate {

    /** What a gate said of one record. */
    public enum Outcome {
        /** Its term is the highest of its role so far (or equal to it): apply it. */
        ADMITTED,
        /** A newer leadership of its role already commanded through this gate: its writer was deposed. */
        STALE,
        /** It carries no stamp: no guarded write wrote it. */
        UNSTAMPED,
        /** Its stamp does not parse ({@link MalformedStampException}). */
        MALFORMED,
        /** It is stamped with a role this gate does not guard ({@link #only}). */
        OTHER_ROLE
    }

    /**
     * The verdict on one record.
     *
     * @param outcome what the gate decided
     * @param role the record's role; null when it had no readable stamp
     * @param term the record's term; -1 when it had no readable stamp
     * @param highest the highest term admitted for the role after this check; empty when none was
     * @param reason a sentence for a log line
     */
    public record Verdict(Outcome outcome, Role role, long term, OptionalLong highest, String reason) {

        /** Whether the record may be applied. */
        public boolean admitted() {
            return outcome == Outcome.ADMITTED;
        }
    }

    private final TermStore store;
    private final Role only;

    /** A gate for records of any role, one highest term per role, kept in {@code store}. */
    public TermGate(TermStore store) {
        this(store, null);
    }

    private TermGate(TermStore store, Role only) {
        this.store = Objects.requireNonNull(store, "store");
        this.only = only;
    }

    /** A gate that admits records of {@code role} alone and refuses every other role's as {@link Outcome#OTHER_ROLE}. */
    public static TermGate only(Role role, TermStore store) {
        return new TermGate(store, Objects.requireNonNull(role, "role"));
    }

    /** {@link #check(Headers)} of the record's headers. */
    public Verdict check(ConsumerRecord<?, ?> record) {
        return check(record.headers());
    }

    /** Checks the stamp in {@code headers} ({@link TokenHeaders}) and, when admitted, raises its role's highest term. */
    public Verdict check(Headers headers) {
        Optional<TokenHeaders.Stamp> stamp;
        try {
            stamp = TokenHeaders.read(headers);
        } catch (MalformedStampException e) {
            return new Verdict(Outcome.MALFORMED, null, -1, OptionalLong.empty(), "refused a record with a malformed stamp: "
                    + e.getMessage());
        }
        if (stamp.isEmpty()) {
            return new Verdict(Outcome.UNSTAMPED, null, -1, OptionalLong.empty(), "refused a record without the headers "
                    + TokenHeaders.ROLE + " and " + TokenHeaders.TERM + ": no guarded write wrote it");
        }
        return check(stamp.get().role(), stamp.get().token().term());
    }

    /** Checks a {@code term} of {@code role} that the application carried itself, and raises the role's highest term when admitted. */
    public Verdict check(Role role, long term) {
        Objects.requireNonNull(role, "role");
        if (only != null && !only.equals(role)) {
            return new Verdict(Outcome.OTHER_ROLE, role, term, OptionalLong.empty(), "refused term " + term + " of role "
                    + role + ": this gate guards role " + only + " alone");
        }
        if (term < 0) {
            return new Verdict(Outcome.MALFORMED, role, term, store.highest(role), "refused term " + term + " of role " + role
                    + ": no leadership has a negative term");
        }
        if (store.admit(role, term)) {
            return new Verdict(Outcome.ADMITTED, role, term, OptionalLong.of(term), "admitted term " + term + " of role " + role);
        }
        OptionalLong highest = store.highest(role);
        return new Verdict(Outcome.STALE, role, term, highest, "refused term " + term + " of role " + role
                + ": this gate already admitted term " + (highest.isPresent() ? highest.getAsLong() : "?")
                + ", so its writer was deposed");
    }

    /** The highest term admitted for {@code role}; empty before the first. */
    public OptionalLong highest(Role role) {
        return store.highest(role);
    }
}
