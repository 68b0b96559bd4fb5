package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.Role;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link TermStore} in a table of any SQL database, one row per role:
 * {@code (role VARCHAR(249) PRIMARY KEY, last_term BIGINT NOT NULL)}
 * ({@link #createTableStatement()}). The check is one conditional update, so the
 * database does the compare-and-raise atomically:
 *
 * <pre>{@code
 * UPDATE krabka_terms SET last_term = ? WHERE role = ? AND last_term <= ?
 * }</pre>
 *
 * One row updated: admitted. None: the role's row holds a higher term (refused) or there
 * is no row yet (inserted, admitted). Plain JDBC and standard SQL only.
 *
 * <p>Use {@link #admit(Connection, Role, long)} inside the transaction that applies the
 * command, so the command and the term that allowed it commit together: a leader deposed
 * between the check and the effect then cannot get its effect in, because its term check
 * and a newer leader's conflict on the same row.
 */
public final class JdbcTermStore implements TermStore {

    /** The table {@link #JdbcTermStore(DataSource)} uses. */
    public static final String DEFAULT_TABLE = "krabka_terms";

    // A plain or schema-qualified identifier: the table name goes into SQL text.
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
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

    /** The DDL of the table, in standard SQL; run it once, or put it in your migrations. */
    public String createTableStatement() {
        return "CREATE TABLE " + table + " (role VARCHAR(" + Role.MAX_ROLE_LEN + ") PRIMARY KEY, last_term BIGINT NOT NULL)";
    }

    /**
     * {@link #admit(Connection, Role, long)} on a connection of its own in auto-commit:
     * for a gate whose device state lives elsewhere. A concurrent first insert of the same
     * role is retried once.
     *
     * @throws CoordinationException when the database fails, naming the table
     */
    @Override
    public boolean admit(Role role, long term) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            try {
                return admitOn(connection, role, term);
            } catch (SQLException raced) {
                if (!isConstraintViolation(raced)) {
                    throw raced;
                }
                // Another gate inserted the role's first row meanwhile: the update decides now.
                return admitOn(connection, role, term);
            }
        } catch (SQLException e) {
            throw failure("admitting term " + term + " of role " + role, e);
        }
    }

    /**
     * The check on the caller's connection, in the caller's transaction: commit it with the
     * command's effect, roll both back otherwise. The conditional update locks the role's
     * row until then, so a concurrent check of the same role waits for this transaction.
     *
     * @throws CoordinationException when the database fails, or when another transaction
     *     inserted the role's first row at the same time (roll back and retry)
     */
    public boolean admit(Connection connection, Role role, long term) {
        Objects.requireNonNull(connection, "connection");
        try {
            return admitOn(connection, role, term);
        } catch (SQLException e) {
            throw failure(isConstraintViolation(e)
                    ? "admitting term " + term + " of role " + role + ": another transaction inserted the role's first row"
                            + " at the same time; roll back and retry"
                    : "admitting term " + term + " of role " + role, e);
        }
    }

    @Override
    public OptionalLong highest(Role role) {
        try (Connection connection = dataSource.getConnection()) {
            return select(connection, role);
        } catch (SQLException e) {
            throw failure("reading the highest term of role " + role, e);
        }
    }

    private boolean admitOn(Connection connection, Role role, long term) throws SQLException {
        Objects.requireNonNull(role, "role");
        if (term < 0) {
            throw new IllegalArgumentException("term must not be negative, but is " + term);
        }
        // The row may appear or rise between the update and the select (another gate's
        // first insert, or its raise): a term the select finds no lower than is updated again.
        for (int round = 1; ; round++) {
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE " + table + " SET last_term = ? WHERE role = ? AND last_term <= ?")) {
                update.setLong(1, term);
                update.setString(2, role.name());
                update.setLong(3, term);
                if (update.executeUpdate() == 1) {
                    return true;
                }
            }
            OptionalLong highest = select(connection, role);
            if (highest.isEmpty()) {
                break;
            }
            if (highest.getAsLong() > term) {
                return false;
            }
            if (round == UPDATE_ROUNDS) {
                throw new SQLException("the row of role " + role + " holds " + highest.getAsLong() + ", no more than term "
                        + term + ", yet " + UPDATE_ROUNDS + " conditional updates changed nothing: is the isolation level "
                        + "above READ COMMITTED?");
            }
        }
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO " + table + " (role, last_term) VALUES (?, ?)")) {
            insert.setString(1, role.name());
            insert.setLong(2, term);
            insert.executeUpdate();
            return true;
        }
    }

    private OptionalLong select(Connection connection, Role role) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT last_term FROM " + table + " WHERE role = ?")) {
            select.setString(1, role.name());
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    // SQLSTATE class 23: integrity constraint violation (here: the primary key).
    private static boolean isConstraintViolation(SQLException e) {
        return e instanceof java.sql.SQLIntegrityConstraintViolationException
                || (e.getSQLState() != null && e.getSQLState().startsWith("23"));
    }

    private CoordinationException failure(String what, SQLException e) {
        return new CoordinationException(what + " in table " + table + " failed: " + e.getMessage(), e);
    }
}
