package io.krabka.streams.coordination.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.record.TimestampType;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link JdbcTermStore} against a real SQL database: H2, in memory, in its default (standard SQL) mode. */
class JdbcTermStoreTest {

    private static final Role CONTROLLER = Role.of("controller");

    private final JdbcDataSource dataSource = new JdbcDataSource();
    private JdbcTermStore store;

    @BeforeEach
    void createTable() throws Exception {
        // DB_CLOSE_DELAY=-1: the database lives until the JVM ends, not until the last connection closes.
        dataSource.setURL("jdbc:h2:mem:terms-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
        store = new JdbcTermStore(dataSource);
        try (Connection connection = dataSource.getConnection();
                Statement ddl = connection.createStatement()) {
            ddl.execute(store.createTableStatement());
        }
    }

    @Test
    void theFirstTermOfAScopeInsertsItsRowHigherOrEqualTermsRaiseItAndALowerOneIsRefused() {
        assertThat(store.highest(CONTROLLER, "dev-1")).isEmpty();
        assertThat(store.admit(CONTROLLER, "dev-1", 5)).isTrue();
        assertThat(store.admit(CONTROLLER, "dev-1", 5)).isTrue();
        assertThat(store.admit(CONTROLLER, "dev-1", 9)).isTrue();
        assertThat(store.admit(CONTROLLER, "dev-1", 8)).isFalse();
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(9);
        assertThat(store.admit(CONTROLLER, "dev-2", 1))
                .as("each scope has its row")
                .isTrue();
        assertThat(store.admit(Role.of("sweeper"), "dev-1", 1))
                .as("each role has its rows")
                .isTrue();
        assertThat(store.admit(CONTROLLER, TermStore.WHOLE_ROLE, 2))
                .as("the role-wide scope is one more row")
                .isTrue();
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(9);
    }

    @Test
    void aCheckInsideTheCallersTransactionIsUndoneWithItsRollback() throws Exception {
        store.admit(CONTROLLER, "dev-1", 3);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(store.admit(connection, CONTROLLER, "dev-1", 10)).isTrue();
            // ... the command's effect failed: roll both back.
            connection.rollback();
        }
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(3);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(store.admit(connection, CONTROLLER, "dev-1", 10)).isTrue();
            connection.commit();
        }
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(10);
    }

    @Test
    void aGateWithinTheDevicesTransactionCommitsTheTermWithTheEffectOrRollsBothBack() throws Exception {
        execute("CREATE TABLE applied (command VARCHAR(64) NOT NULL)");
        TermGate gate = TermGate.perKey(store).onlyRole(CONTROLLER);

        try (Connection transaction = dataSource.getConnection()) {
            transaction.setAutoCommit(false);
            assertThat(gate.within(transaction).check(command("dev-1", 10)).admitted())
                    .isTrue();
            apply(transaction, "open");
            transaction.rollback(); // the effect failed
        }
        assertThat(store.highest(CONTROLLER, "dev-1"))
                .as("the term rolled back with the effect")
                .isEmpty();
        assertThat(applied()).isEmpty();

        try (Connection transaction = dataSource.getConnection()) {
            transaction.setAutoCommit(false);
            TermGate within = gate.within(transaction);
            assertThat(within.check(command("dev-1", 7)).admitted())
                    .as("term 10 was never admitted")
                    .isTrue();
            apply(transaction, "close");
            assertThat(within.check(command("dev-1", 9)).admitted()).isTrue();
            assertThat(within.highest(CONTROLLER, "dev-1"))
                    .as("the transaction reads its own raise")
                    .hasValue(9);
            TermGate.Verdict stale = within.check(command("dev-1", 8));
            assertThat(stale.outcome()).isEqualTo(TermGate.Outcome.STALE);
            assertThat(stale.reason())
                    .isEqualTo("refused term 8 of role controller: it arrived after term 9 for key dev-1");
            transaction.commit();
        }
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(9);
        assertThat(applied()).containsExactly("close");
    }

    @Test
    void aTableOfTheEarlierLayoutIsNamedAsSuchAndAfterTheDocumentedMigrationItsRowsAreTheRoleWideScope()
            throws Exception {
        execute("CREATE TABLE legacy_terms (role VARCHAR(249) PRIMARY KEY, last_term BIGINT NOT NULL)");
        execute("INSERT INTO legacy_terms (role, last_term) VALUES ('controller', 68)");
        JdbcTermStore legacy = new JdbcTermStore(dataSource, "legacy_terms");
        assertThatThrownBy(() -> legacy.admit(CONTROLLER, "dev-1", 1))
                .isInstanceOf(CoordinationException.class)
                .hasMessageContaining("legacy_terms")
                .hasMessageContaining("has no column scope_name: migrate it");

        // The migration JdbcTermStore's documentation and the user guide show (H2 and MySQL spelling).
        execute("ALTER TABLE legacy_terms ADD COLUMN scope_name VARCHAR(512) DEFAULT '' NOT NULL");
        execute("ALTER TABLE legacy_terms DROP PRIMARY KEY");
        execute("ALTER TABLE legacy_terms ADD PRIMARY KEY (role, scope_name)");

        assertThat(TermGate.perRole(legacy)
                        .check(CONTROLLER, TermStore.WHOLE_ROLE, 67)
                        .outcome())
                .as("a per-role gate reads the old row")
                .isEqualTo(TermGate.Outcome.STALE);
        assertThat(TermGate.perKey(legacy).check(CONTROLLER, "dev-1", 1).admitted())
                .as("a scope starts empty")
                .isTrue();
        assertThat(legacy.highest(CONTROLLER, TermStore.WHOLE_ROLE)).hasValue(68);
        assertThat(legacy.highest(CONTROLLER, "dev-1")).hasValue(1);
    }

    private void execute(String sql) throws Exception {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static void apply(Connection transaction, String command) throws Exception {
        try (PreparedStatement insert = transaction.prepareStatement("INSERT INTO applied (command) VALUES (?)")) {
            insert.setString(1, command);
            insert.executeUpdate();
        }
    }

    private List<String> applied() throws Exception {
        List<String> commands = new ArrayList<>();
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                java.sql.ResultSet rows = statement.executeQuery("SELECT command FROM applied")) {
            while (rows.next()) {
                commands.add(rows.getString(1));
            }
        }
        return commands;
    }

    private static ConsumerRecord<String, String> command(String device, long term) {
        return new ConsumerRecord<>(
                "commands",
                0,
                0,
                0L,
                TimestampType.CREATE_TIME,
                0,
                0,
                device,
                "",
                TokenHeaders.stamp(new ProducerRecord<>("commands", ""), CONTROLLER, FencingToken.of(term, 1000, (short)
                                0))
                        .headers(),
                Optional.empty());
    }

    @Test
    void gatesRacingOnARoleWithoutARowAllGetAnAnswerAndTheHighestTermWins() throws Exception {
        // Every thread's first check finds no row and inserts: all but one insert conflict on
        // the primary key, and the store retries them instead of failing.
        ExecutorService threads = Executors.newFixedThreadPool(4);
        List<Future<Boolean>> answers = new ArrayList<>();
        try {
            for (int t = 0; t < 4; t++) {
                long term = 100 + t;
                answers.add(threads.submit(() -> store.admit(CONTROLLER, "dev-1", term)));
            }
            for (Future<Boolean> answer : answers) {
                answer.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(103);
        assertThat(store.admit(CONTROLLER, "dev-1", 102)).isFalse();
    }

    @Test
    void aRowAnotherGateInsertsRightAfterTheUpdateMissedItDoesNotRefuseAHigherTerm() {
        // The window of a first-insert race, made certain: the conditional update finds no
        // row, then another gate inserts term 102 before this check looks for the row.
        JdbcTermStore other = new JdbcTermStore(dataSource);
        JdbcTermStore checked =
                new JdbcTermStore(afterFirstUpdate(dataSource, () -> other.admit(CONTROLLER, "dev-1", 102)));

        assertThat(checked.admit(CONTROLLER, "dev-1", 103)).isTrue();
        assertThat(store.highest(CONTROLLER, "dev-1")).hasValue(103);
    }

    /** {@code source}, whose connections run {@code meanwhile} once, right after the first UPDATE that changed nothing. */
    private static DataSource afterFirstUpdate(DataSource source, Runnable meanwhile) {
        AtomicBoolean ran = new AtomicBoolean();
        InvocationHandler connections = (proxy, method, args) -> {
            Object result = invoke(source, method, args);
            if (!(result instanceof Connection connection)) {
                return result;
            }
            return Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (c, m, a) -> {
                        Object made = invoke(connection, m, a);
                        if (!(made instanceof PreparedStatement statement) || !((String) a[0]).startsWith("UPDATE")) {
                            return made;
                        }
                        return Proxy.newProxyInstance(
                                PreparedStatement.class.getClassLoader(),
                                new Class<?>[] {PreparedStatement.class},
                                (st, sm, sa) -> {
                                    Object out = invoke(statement, sm, sa);
                                    if (sm.getName().equals("executeUpdate")
                                            && Integer.valueOf(0).equals(out)
                                            && ran.compareAndSet(false, true)) {
                                        meanwhile.run();
                                    }
                                    return out;
                                });
                    });
        };
        return (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, connections);
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void aGateOnTheStoreRefusesADeposedLeadersTerm() {
        TermGate gate = TermGate.perKey(store).onlyRole(CONTROLLER);
        assertThat(gate.check(CONTROLLER, "dev-1", 40).admitted()).isTrue();
        assertThat(gate.check(CONTROLLER, "dev-1", 12).outcome()).isEqualTo(TermGate.Outcome.STALE);
        assertThat(gate.check(CONTROLLER, "dev-1", 12).highest()).hasValue(40);
        assertThat(gate.check(CONTROLLER, "dev-2", 12).admitted()).isTrue();
    }

    @Test
    void aTableNameThatIsNoPlainIdentifierAndAMissingTableAreNamed() {
        assertThatThrownBy(() -> new JdbcTermStore(dataSource, "terms; DROP TABLE x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a plain identifier");
        assertThat(new JdbcTermStore(dataSource, "app.krabka_terms")).isNotNull();

        JdbcTermStore missing = new JdbcTermStore(dataSource, "no_such_table");
        assertThatThrownBy(() -> missing.admit(CONTROLLER, "dev-1", 1))
                .as("the store creates no table")
                .isInstanceOf(CoordinationException.class)
                .hasMessageContaining("no_such_table")
                .hasMessageContaining("role controller in scope dev-1");
        assertThatThrownBy(() -> store.admit(CONTROLLER, "d".repeat(JdbcTermStore.MAX_SCOPE_LEN + 1), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 512");
    }
}
