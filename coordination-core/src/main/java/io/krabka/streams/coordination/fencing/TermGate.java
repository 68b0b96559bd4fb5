package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.Role;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The device's half of fencing: admits a record (a command) only when its writer's term
 * is at least the highest term already admitted for its role <em>in its scope</em>, so a
 * leader whose leadership ended cannot command the device again once a newer leader has,
 * even when a record it wrote reaches the device late (a slow network, a retried delivery,
 * a consumer that re-reads, a copy replayed by a bridge). Kafka fences a deposed leader's
 * writes to Kafka; a gate fences what reaches the device by any path.
 *
 * <p><b>The scope is what the device's commands are ordered by.</b> Kafka orders records
 * within a partition only: a device reading a topic of several partitions meets a new
 * holder's term on one partition before the previous holder's last committed commands on
 * another. One term per role would refuse those, though their writer still led when it
 * wrote them; so a gate keeps one term per role and scope:
 * <ul>
 * <li>{@link #perKey}: the record's key, for commands keyed by the device they command
 *     (the usual layout). A key's commands share a partition, so they arrive in order; and
 *     the key travels with a command down any other path, so a late copy meets the term
 *     the device already obeys.</li>
 * <li>{@link #perPartition}: the record's topic and partition, for commands whose key
 *     names no device. It refuses only what arrives out of order on the partition it came
 *     from.</li>
 * <li>{@link #perRole}: one term per role, for a command topic of one partition.</li>
 * </ul>
 *
 * <pre>{@code
 * TermGate gate = TermGate.perKey(new JdbcTermStore(dataSource));
 * try (Connection transaction = dataSource.getConnection()) {
 *     transaction.setAutoCommit(false);
 *     TermGate.Verdict verdict = gate.within(transaction).check(command);
 *     if (verdict.admitted()) {
 *         device.apply(transaction, command.value());                 // commits with the term
 *         transaction.commit();
 *     } else {
 *         transaction.rollback();
 *         log.warn("refused: {}", verdict.reason());
 *     }
 * }
 * }</pre>
 *
 * <p>It reads the {@link TokenHeaders} every guarded write carries, or takes a role,
 * scope and term the application carried some other way ({@link #check(Role, String, long)}).
 * A record without the headers is refused: nothing says a leader wrote it. A gate admits
 * every role, each with terms of its own, unless made for one ({@link #onlyRole}).
 * Thread-safe when its store is; the store decides how long the gate remembers
 * ({@link TermStore}).
 *
 * <p>Size: one public type for one decision. Its verdicts, the three scopes and every way
 * of naming a command (a record, headers, a role and term) meet in the one comparison with
 * the stored term, so a device has one class to read.
 */
public final class TermGate {

    /** What a gate said of one record. */
    public enum Outcome {
        /** Its term is the highest of its role and scope so far (or equal to it): apply it. */
        ADMITTED,
        /**
         * A higher term of its role came through this gate in its scope before it: its
         * writer's leadership had ended by then. It may have written the record while it
         * still led; the record arrived after a newer leader's.
         */
        STALE,
        /** It carries no stamp: no guarded write wrote it. */
        UNSTAMPED,
        /** Its stamp does not parse ({@link MalformedStampException}), or its term is negative. */
        MALFORMED,
        /** It is stamped with a role this gate does not guard ({@link #onlyRole}). */
        OTHER_ROLE,
        /** A {@link #perKey} gate got a record without a key: nothing says whose order it belongs to. */
        UNSCOPED
    }

    /**
     * The verdict on one record.
     *
     * @param outcome what the gate decided
     * @param role the record's role; null when it had no readable stamp
     * @param scope the scope it was checked in ({@link TermStore#WHOLE_ROLE} for a per-role
     *     gate); null when the gate did not get that far
     * @param term the record's term; -1 when it had no readable stamp
     * @param highest the highest term admitted for the role in the scope after this check;
     *     empty when none was
     * @param reason a sentence for a log line
     */
    public record Verdict(
            Outcome outcome,
            @Nullable Role role,
            @Nullable String scope,
            long term,
            OptionalLong highest,
            String reason) {

        /**
         * A verdict in the scope {@link TermStore#WHOLE_ROLE}.
         *
         * @deprecated name the scope
         */
        @Deprecated
        public Verdict(Outcome outcome, Role role, long term, OptionalLong highest, String reason) {
            this(outcome, role, TermStore.WHOLE_ROLE, term, highest, reason);
        }

        /** Whether the record may be applied. */
        public boolean admitted() {
            return outcome == Outcome.ADMITTED;
        }
    }

    /** What a gate takes a record's scope from, and the word its sentences use for it. */
    private enum ScopedBy {
        ROLE("scope"),
        KEY("key"),
        PARTITION("partition");

        final String noun;

        ScopedBy(String noun) {
            this.noun = noun;
        }
    }

    private final TermStore store;
    private final @Nullable Role only;
    private final ScopedBy scopedBy;

    /**
     * A gate for records of any role, one highest term per role.
     *
     * @deprecated one term per role refuses committed commands of a topic with several
     *     partitions: use {@link #perKey} or {@link #perPartition}, or {@link #perRole}
     *     for a topic of one partition
     */
    @Deprecated
    public TermGate(TermStore store) {
        this(store, null, ScopedBy.ROLE);
    }

    private TermGate(TermStore store, @Nullable Role only, ScopedBy scopedBy) {
        this.store = Objects.requireNonNull(store, "store");
        this.only = only;
        this.scopedBy = scopedBy;
    }

    /** A gate that keeps one highest term per role and record key: for commands keyed by device. */
    public static TermGate perKey(TermStore store) {
        return new TermGate(store, null, ScopedBy.KEY);
    }

    /** A gate that keeps one highest term per role and topic partition ({@code commands-2}). */
    public static TermGate perPartition(TermStore store) {
        return new TermGate(store, null, ScopedBy.PARTITION);
    }

    /**
     * A gate that keeps one highest term per role, in the scope {@link TermStore#WHOLE_ROLE}:
     * only for a command topic of one partition (or a device that reads one), since it
     * refuses a previous holder's committed commands that another partition delivers after
     * a newer holder's.
     */
    public static TermGate perRole(TermStore store) {
        return new TermGate(store, null, ScopedBy.ROLE);
    }

    /**
     * A gate that admits records of {@code role} alone, one highest term for the role.
     *
     * @deprecated use {@code perRole(store).onlyRole(role)}, or better {@link #perKey} or
     *     {@link #perPartition} with {@link #onlyRole}
     */
    @Deprecated
    public static TermGate only(Role role, TermStore store) {
        return perRole(store).onlyRole(role);
    }

    /** This gate, scoped alike on the same store, for records of {@code role} alone: others are refused as {@link Outcome#OTHER_ROLE}. */
    public TermGate onlyRole(Role role) {
        return new TermGate(store, Objects.requireNonNull(role, "role"), scopedBy);
    }

    /**
     * This gate, scoped alike, on the caller's transaction: its checks run on
     * {@code connection} ({@link JdbcTermStore#on(Connection)}) and neither commit nor
     * roll back, so the term a check raises commits with the effect of the command, or
     * rolls back with it. Cheap: make one per transaction.
     *
     * @throws IllegalStateException when this gate's store is no {@link JdbcTermStore}
     */
    public TermGate within(Connection connection) {
        if (!(store instanceof JdbcTermStore jdbc)) {
            throw new IllegalStateException("a gate on " + store.getClass().getSimpleName()
                    + " cannot check within a JDBC transaction: build it on a JdbcTermStore");
        }
        return new TermGate(jdbc.on(connection), only, scopedBy);
    }

    /** Checks the record's stamp ({@link TokenHeaders}) in the scope this gate takes from a record, and raises that scope's highest term when admitted. */
    public Verdict check(ConsumerRecord<?, ?> record) {
        Objects.requireNonNull(record, "record");
        Read read = read(record.headers());
        Verdict refused = read.refused();
        if (refused != null) {
            return refused;
        }
        TokenHeaders.Stamp stamp = read.stampOfAdmissible();
        Role role = stamp.role();
        long term = stamp.token().term();
        if (only != null && !only.equals(role)) {
            return otherRole(role, term);
        }
        String scope;
        switch (scopedBy) {
            case KEY -> {
                if (record.key() == null) {
                    return new Verdict(
                            Outcome.UNSCOPED,
                            role,
                            null,
                            term,
                            OptionalLong.empty(),
                            "refused term " + term + " of role " + role
                                    + ": the record has no key, and this gate orders commands by key");
                }
                scope = keyText(record.key());
            }
            case PARTITION -> scope = record.topic() + "-" + record.partition();
            default -> scope = TermStore.WHOLE_ROLE;
        }
        return check(role, scope, term);
    }

    /** Checks the stamp in {@code headers} ({@link TokenHeaders}) in {@code scope}, and raises the scope's highest term when admitted. */
    public Verdict check(Headers headers, String scope) {
        Objects.requireNonNull(scope, "scope");
        Read read = read(headers);
        Verdict refused = read.refused();
        if (refused != null) {
            return refused;
        }
        TokenHeaders.Stamp stamp = read.stampOfAdmissible();
        return check(stamp.role(), scope, stamp.token().term());
    }

    /** Checks a {@code term} of {@code role} in {@code scope} that the application carried itself, and raises the scope's highest term when admitted. */
    public Verdict check(Role role, String scope, long term) {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(scope, "scope");
        if (only != null && !only.equals(role)) {
            return otherRole(role, term);
        }
        String where = where(scope);
        if (term < 0) {
            return new Verdict(
                    Outcome.MALFORMED,
                    role,
                    scope,
                    term,
                    store.highest(role, scope),
                    "refused term " + term + " of role " + role + where + ": no leadership has a negative term");
        }
        if (store.admit(role, scope, term)) {
            return new Verdict(
                    Outcome.ADMITTED,
                    role,
                    scope,
                    term,
                    OptionalLong.of(term),
                    "admitted term " + term + " of role " + role + where);
        }
        OptionalLong highest = store.highest(role, scope);
        return new Verdict(
                Outcome.STALE,
                role,
                scope,
                term,
                highest,
                "refused term " + term + " of role " + role + ": it arrived after term "
                        + (highest.isPresent() ? highest.getAsLong() : "?") + where);
    }

    /**
     * {@link #check(Headers, String)} in the scope {@link TermStore#WHOLE_ROLE}.
     *
     * @throws IllegalStateException on a gate that takes its scope from the record
     * @deprecated pass the record ({@link #check(ConsumerRecord)}) or the scope
     */
    @Deprecated
    public Verdict check(Headers headers) {
        requirePerRole("check(record) or check(headers, scope)");
        return check(headers, TermStore.WHOLE_ROLE);
    }

    /**
     * {@link #check(Role, String, long)} in the scope {@link TermStore#WHOLE_ROLE}.
     *
     * @throws IllegalStateException on a gate that takes its scope from the record
     * @deprecated pass the scope
     */
    @Deprecated
    public Verdict check(Role role, long term) {
        requirePerRole("check(role, scope, term)");
        return check(role, TermStore.WHOLE_ROLE, term);
    }

    /** The highest term admitted for {@code role} in {@code scope}; empty before the first. */
    public OptionalLong highest(Role role, String scope) {
        return store.highest(role, scope);
    }

    /**
     * {@link #highest(Role, String)} in the scope {@link TermStore#WHOLE_ROLE}.
     *
     * @throws IllegalStateException on a gate that takes its scope from the record
     * @deprecated pass the scope
     */
    @Deprecated
    public OptionalLong highest(Role role) {
        requirePerRole("highest(role, scope)");
        return store.highest(role, TermStore.WHOLE_ROLE);
    }

    /** The stamp of some headers, or the verdict on headers without a readable one. */
    private record Read(
            TokenHeaders.@Nullable Stamp stamp, @Nullable Verdict refused) {

        /** The stamp, once {@link #refused()} is null: one of the two is always set. */
        TokenHeaders.Stamp stampOfAdmissible() {
            return Objects.requireNonNull(stamp, "a read is either refused or stamped");
        }
    }

    private static Read read(Headers headers) {
        Optional<TokenHeaders.Stamp> stamp;
        try {
            stamp = TokenHeaders.read(headers);
        } catch (MalformedStampException e) {
            return new Read(
                    null,
                    new Verdict(
                            Outcome.MALFORMED,
                            null,
                            null,
                            -1,
                            OptionalLong.empty(),
                            "refused a record with a malformed stamp: " + e.getMessage()));
        }
        return stamp.map(found -> new Read(found, null))
                .orElseGet(() -> new Read(
                        null,
                        new Verdict(
                                Outcome.UNSTAMPED,
                                null,
                                null,
                                -1,
                                OptionalLong.empty(),
                                "refused a record without the headers " + TokenHeaders.ROLE + " and "
                                        + TokenHeaders.TERM + ": no guarded write wrote it")));
    }

    private Verdict otherRole(Role role, long term) {
        return new Verdict(
                Outcome.OTHER_ROLE,
                role,
                null,
                term,
                OptionalLong.empty(),
                "refused term " + term + " of role " + role + ": this gate guards role " + only + " alone");
    }

    private String where(String scope) {
        return scopedBy == ScopedBy.ROLE && scope.equals(TermStore.WHOLE_ROLE)
                ? ""
                : " for " + scopedBy.noun + " " + scope;
    }

    private void requirePerRole(String instead) {
        if (scopedBy != ScopedBy.ROLE) {
            throw new IllegalStateException("this gate keeps a term per " + scopedBy.noun + ": call " + instead);
        }
    }

    /** A key as text: a String as it is, a byte[] as UTF-8 (hexadecimal, 0x..., when it is none), anything else by toString(). */
    static String keyText(Object key) {
        if (key instanceof byte[] bytes) {
            try {
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .decode(ByteBuffer.wrap(bytes))
                        .toString();
            } catch (CharacterCodingException e) {
                return "0x" + HexFormat.of().formatHex(bytes);
            }
        }
        return key.toString();
    }
}
