package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link TermStore} in a table of any SQL database, one row per role and scope
 * ({@link #createTableStatement()}):
 *
 * <pre>{@code
 * CREATE TABLE krabka_terms (role VARCHAR(249) NOT NULL, scope_name VARCHAR(512) NOT NULL,
 *     last_term BIGINT NOT NULL, PRIMARY KEY (role, scope_name))
 * }</pre>
 *
 * The store never creates or alters its table: run that statement once, or put it in your
 * migrations. The check is one conditional update, so the database does the
 * compare-and-raise atomically:
 *
 * <pre>{@code
 * UPDATE krabka_terms SET last_term = ? WHERE role = ? AND scope_name = ? AND last_term <= ?
 * }</pre>
 *
 * One row updated: admitted. None: the row holds a higher term (refused) or there is no
 * row yet (inserted, admitted). Plain JDBC and standard SQL only.
 *
 * <p>Check inside the transaction that applies the command ({@link TermGate#within},
 * {@link #on(Connection)}, {@link #admit(Connection, Role, String, long)}), so the
 * command and the term that allowed it commit together: a leader deposed between the
 * check and the effect then cannot get its effect in, because its term check and a newer
 * leader's conflict on the same row.
 *
 * <p>A table of the earlier layout, one row per role ({@code role VARCHAR(249) PRIMARY KEY,
 * last_term BIGINT NOT NULL}), gains the scope in place; its rows become the rows of the
 * scope {@link TermStore#WHOLE_ROLE}, which a {@link TermGate#perRole} gate reads as before:
 *
 * <pre>{@code
 * ALTER TABLE krabka_terms ADD COLUMN scope_name VARCHAR(512) DEFAULT '' NOT NULL;
 * ALTER TABLE krabka_terms DROP PRIMARY KEY;     -- PostgreSQL: DROP CONSTRAINT krabka_terms_pkey
 * ALTER TABLE krabka_terms ADD PRIMARY KEY (role, scope_name);
 * }</pre>
 */
public final class JdbcTermStore implements TermStore {

    /** The table {@link #JdbcTermStore(DataSource)} uses. */
    public static final String DEFAULT_TABLE = "krabka_terms";

    // A plain or schema-qualified identifier: the table name goes into SQL text.
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
    /** The longest scope the table holds, in characters: with the role, a key MySQL can index (3 072 bytes). */
    public static final int MAX_SCOPE_LEN = 512;
    /** Conditional updates one check tries while the row's term stays no higher than its own. */
    private static final int UPDATE_ROUNDS = 3;

    private final DataSource dataSource;
    private final String table;

    /** A store in {@value #DEFAULT_TABLE}. */
    public JdbcTermStore(DataSource dataSource) {
        this(dataSource, DEFAULT_TABLE);
    }

    /**
     * A store in {@code table}.
     *
     * @throws IllegalArgumentException when {@code table} is not a plain identifier
     *     (letters, digits, underscores, optionally {@code schema.table})
     */
    public JdbcTermStore(DataSource dataSource, String table) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(table, "table");
        if (!TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("term store table \"" + table + "\" is not a plain identifier"
                    + " (letters, digits and underscores, optionally schema.table)");
        }
        this.table = table;
    }

    /** The DDL of the table, in standard SQL; run it once, or put it in your migrations: the store never creates its table. */
    public String createTableStatement() {
        return "CREATE TABLE " + table + " (role VARCHAR(" + Role.MAX_ROLE_LEN + ") NOT NULL, scope_name VARCHAR("
                + MAX_SCOPE_LEN + ") NOT NULL, last_term BIGINT NOT NULL, PRIMARY KEY (role, scope_name))";
    }

    /**
     * {@link #admit(Connection, Role, String, long)} on a connection of its own in
     * auto-commit: for a gate whose device state lives elsewhere. A concurrent first insert
     * of the same role and scope is retried once.
     *
     * @throws CoordinationException when the database fails, naming the table
     * @throws IllegalArgumentException when {@code scope} is longer than {@value #MAX_SCOPE_LEN} characters
     */
    @Override
    public boolean admit(Role role, String scope, long term) {
        requireScope(scope);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            try {
                return admitOn(connection, role, scope, term);
            } catch (SQLException raced) {
                if (!isConstraintViolation(raced)) {
                    throw raced;
                }
                // Another gate inserted the scope's first row meanwhile: the update decides now.
                return admitOn(connection, role, scope, term);
            }
        } catch (SQLException e) {
            throw failure("admitting term " + term + " of role " + role + in(scope), e);
        }
    }

    /**
     * The check on the caller's connection, in the caller's transaction: commit it with the
     * command's effect, roll both back otherwise. The conditional update locks the row of
     * the role and scope until then, so a concurrent check of the same row waits for this
     * transaction.
     *
     * @throws CoordinationException when the database fails, or when another transaction
     *     inserted the first row of the role and scope at the same time (roll back and retry)
     * @throws IllegalArgumentException when {@code scope} is longer than {@value #MAX_SCOPE_LEN} characters
     */
    public boolean admit(Connection connection, Role role, String scope, long term) {
        Objects.requireNonNull(connection, "connection");
        requireScope(scope);
        try {
            return admitOn(connection, role, scope, term);
        } catch (SQLException e) {
            throw failure(
                    isConstraintViolation(e)
                            ? "admitting term " + term + " of role " + role + in(scope)
                                    + ": another transaction inserted its"
                                    + " first row at the same time; roll back and retry"
                            : "admitting term " + term + " of role " + role + in(scope),
                    e);
        }
    }

    /**
     * {@link #admit(Connection, Role, String, long)} in the scope {@link TermStore#WHOLE_ROLE}.
     *
     * @deprecated pass the scope, or check through {@link TermGate#within}
     */
    @Deprecated
    public boolean admit(Connection connection, Role role, long term) {
        return admit(connection, role, WHOLE_ROLE, term);
    }

    @Override
    public OptionalLong highest(Role role, String scope) {
        requireScope(scope);
        try (Connection connection = dataSource.getConnection()) {
            return select(connection, role, scope);
        } catch (SQLException e) {
            throw failure("reading the highest term of role " + role + in(scope), e);
        }
    }

    /**
     * This store on the caller's connection: its checks run in the caller's transaction
     * ({@link #admit(Connection, Role, String, long)}) and its reads see what that
     * transaction wrote; it never commits, rolls back or closes the connection. What
     * {@link TermGate#within} checks on.
     */
    public TermStore on(Connection connection) {
        Objects.requireNonNull(connection, "connection");
        return new TermStore() {

            @Override
            public boolean admit(Role role, String scope, long term) {
                return JdbcTermStore.this.admit(connection, role, scope, term);
            }

            @Override
            public OptionalLong highest(Role role, String scope) {
                requireScope(scope);
                try {
                    return select(connection, role, scope);
                } catch (SQLException e) {
                    throw failure("reading the highest term of role " + role + in(scope), e);
                }
            }

            @Override
            public String toString() {
                return "JdbcTermStore[" + table + ", on the caller's connection]";
            }
        };
    }

    private boolean admitOn(Connection connection, Role role, String scope, long term) throws SQLException {
        Objects.requireNonNull(role, "role");
        if (term < 0) {
            throw new IllegalArgumentException("term must not be negative, but is " + term);
        }
        // The row may appear or rise between the update and the select (another gate's
        // first insert, or its raise): a term the select finds no lower than is updated again.
        for (int round = 1; ; round++) {
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE " + table + " SET last_term = ? WHERE role = ? AND scope_name = ? AND last_term <= ?")) {
                update.setLong(1, term);
                update.setString(2, role.name());
                update.setString(3, scope);
                update.setLong(4, term);
                if (update.executeUpdate() == 1) {
                    return true;
                }
            }
            OptionalLong highest = select(connection, role, scope);
            if (highest.isEmpty()) {
                break;
            }
            if (highest.getAsLong() > term) {
                return false;
            }
            if (round == UPDATE_ROUNDS) {
                throw new SQLException("the row of role " + role + in(scope) + " holds " + highest.getAsLong()
                        + ", no more than term " + term + ", yet " + UPDATE_ROUNDS
                        + " conditional updates changed nothing:"
                        + " is the isolation level above READ COMMITTED?");
            }
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + table + " (role, scope_name, last_term) VALUES (?, ?, ?)")) {
            insert.setString(1, role.name());
            insert.setString(2, scope);
            insert.setLong(3, term);
            insert.executeUpdate();
            return true;
        }
    }

    private OptionalLong select(Connection connection, Role role, String scope) throws SQLException {
        try (PreparedStatement select =
                connection.prepareStatement("SELECT last_term FROM " + table + " WHERE role = ? AND scope_name = ?")) {
            select.setString(1, role.name());
            select.setString(2, scope);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    private static void requireScope(String scope) {
        Objects.requireNonNull(scope, "scope");
        if (scope.length() > MAX_SCOPE_LEN) {
            throw new IllegalArgumentException("scope \"" + scope.substring(0, 40) + "...\" is " + scope.length()
                    + " characters long; the table holds at most " + MAX_SCOPE_LEN);
        }
    }

    private static String in(String scope) {
        return scope.equals(WHOLE_ROLE) ? "" : " in scope " + scope;
    }

    // SQLSTATE class 23: integrity constraint violation (here: the primary key).
    private static boolean isConstraintViolation(SQLException e) {
        return e instanceof java.sql.SQLIntegrityConstraintViolationException
                || (e.getSQLState() != null && e.getSQLState().startsWith("23"));
    }

    private CoordinationException failure(String what, SQLException e) {
        String message = what + " in table " + table + " failed: " + e.getMessage();
        if (e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("scope_name")) {
            message += " (a table created before scopes has no column scope_name: migrate it as JdbcTermStore's"
                    + " documentation shows)";
        }
        return new CoordinationException(message, e);
    }
}
