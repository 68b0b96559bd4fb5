package io.krabka.streams.coordination.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CoordinationException;
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
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
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
        try (Connection connection = dataSource.getConnection(); Statement ddl = connection.createStatement()) {
            ddl.execute(store.createTableStatement());
        }
    }

    @Test
    void theFirstTermInsertsTheRowHigherOrEqualTermsRaiseItAndALowerOneIsRefused() {
        assertThat(store.highest(CONTROLLER)).isEmpty();
        assertThat(store.admit(CONTROLLER, 5)).isTrue();
        assertThat(store.admit(CONTROLLER, 5)).isTrue();
        assertThat(store.admit(CONTROLLER, 9)).isTrue();
        assertThat(store.admit(CONTROLLER, 8)).isFalse();
        assertThat(store.highest(CONTROLLER)).hasValue(9);
        assertThat(store.admit(Role.of("sweeper"), 1)).as("each role has its row").isTrue();
        assertThat(store.highest(CONTROLLER)).hasValue(9);
    }

    @Test
    void aCheckInsideTheCallersTransactionIsUndoneWithItsRollback() throws Exception {
        store.admit(CONTROLLER, 3);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(store.admit(connection, CONTROLLER, 10)).isTrue();
            // ... the command's effect failed: roll both back.
            connection.rollback();
        }
        assertThat(store.highest(CONTROLLER)).hasValue(3);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThat(store.admit(connection, CONTROLLER, 10)).isTrue();
            connection.commit();
        }
        assertThat(store.highest(CONTROLLER)).hasValue(10);
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
                answers.add(threads.submit(() -> store.admit(CONTROLLER, term)));
            }
            for (Future<Boolean> answer : answers) {
                answer.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(store.highest(CONTROLLER)).hasValue(103);
        assertThat(store.admit(CONTROLLER, 102)).isFalse();
    }

    @Test
    void aRowAnotherGateInsertsRightAfterTheUpdateMissedItDoesNotRefuseAHigherTerm() {
        // The window of a first-insert race, made certain: the conditional update finds no
        // row, then another gate inserts term 102 before this check looks for the row.
        JdbcTermStore other = new JdbcTermStore(dataSource);
        JdbcTermStore checked = new JdbcTermStore(afterFirstUpdate(dataSource, () -> other.admit(CONTROLLER, 102)));

        assertThat(checked.admit(CONTROLLER, 103)).isTrue();
        assertThat(store.highest(CONTROLLER)).hasValue(103);
    }

    /** {@code source}, whose connections run {@code meanwhile} once, right after the first UPDATE that changed nothing. */
    private static DataSource afterFirstUpdate(DataSource source, Runnable meanwhile) {
        AtomicBoolean ran = new AtomicBoolean();
        InvocationHandler connections = (proxy, method, args) -> {
            Object result = invoke(source, method, args);
            if (!(result instanceof Connection connection)) {
                return result;
            }
            return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (c, m, a) -> {
                        Object made = invoke(connection, m, a);
                        if (!(made instanceof PreparedStatement statement) || !((String) a[0]).startsWith("UPDATE")) {
                            return made;
                        }
                        return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                                new Class<?>[] {PreparedStatement.class}, (st, sm, sa) -> {
                                    Object out = invoke(statement, sm, sa);
                                    if (sm.getName().equals("executeUpdate") && Integer.valueOf(0).equals(out)
                                            && ran.compareAndSet(false, true)) {
                                        meanwhile.run();
                                    }
                                    return out;
                                });
                    });
        };
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                connections);
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
        TermGate gate = TermGate.only(CONTROLLER, store);
        assertThat(gate.check(CONTROLLER, 40).admitted()).isTrue();
        assertThat(gate.check(CONTROLLER, 12).outcome()).isEqualTo(TermGate.Outcome.STALE);
        assertThat(gate.check(CONTROLLER, 12).highest()).hasValue(40);
    }

    @Test
    void aTableNameThatIsNoPlainIdentifierAndAMissingTableAreNamed() {
        assertThatThrownBy(() -> new JdbcTermStore(dataSource, "terms; DROP TABLE x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a plain identifier");
        assertThat(new JdbcTermStore(dataSource, "app.krabka_terms")).isNotNull();

        JdbcTermStore missing = new JdbcTermStore(dataSource, "no_such_table");
        assertThatThrownBy(() -> missing.admit(CONTROLLER, 1)).isInstanceOf(CoordinationException.class)
                .hasMessageContaining("no_such_table").hasMessageContaining("role controller");
    }
}
