package io.krabka.coordination.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** Spring Integration's LockRegistryLeaderInitiator on a JdbcLockRegistry, in-memory H2 shared by the members. */
final class SpringBench implements PeerBench {

    static final String SYSTEM = "Spring Integration (JDBC lock, H2)";

    /** Lock time-to-live, the equivalent of the lease: 2 s. */
    static final Duration TTL = Duration.ofSeconds(2);
    /** The holder re-acquires (renews) the lock every heart beat: 0.6 s, as our renew interval. */
    static final long HEART_BEAT_MS = 600;
    /** After a failed acquisition round a standby sleeps this long (the default, 50 ms). */
    static final long BUSY_WAIT_MS = 50;
    /** Inside one acquisition round a standby retries the insert/update this often: 100 ms (the default). */
    static final Duration IDLE_BETWEEN_TRIES = Duration.ofMillis(100);

    private static final AtomicInteger ROLES = new AtomicInteger();

    private final JdbcDataSource database;
    private final JdbcTemplate jdbc;

    SpringBench() throws SQLException {
        database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:bench-locks;DB_CLOSE_DELAY=-1");
        jdbc = new JdbcTemplate(database);
        try (Connection c = database.getConnection();
                Statement s = c.createStatement()) {
            s.execute(
                    "CREATE TABLE INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36),"
                            + " CREATED_DATE TIMESTAMP NOT NULL, EXPIRED_AFTER TIMESTAMP NOT NULL,"
                            + " constraint INT_LOCK_PK primary key (LOCK_KEY, REGION))");
        }
    }

    /** A member's data source; kill() makes every later connection attempt fail, as for a dead process. */
    static final class KillableDataSource extends DelegatingDataSource {
        private volatile boolean killed;

        KillableDataSource(DataSource target) {
            super(target);
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (killed) {
                throw new SQLException("member killed");
            }
            return super.getConnection();
        }

        void kill() {
            killed = true;
        }
    }

    /** One member: its own repository (its own client id), registry and initiator. */
    private final class Member {
        final KillableDataSource dataSource = new KillableDataSource(database);
        final CompletableFuture<Long> granted = new CompletableFuture<>();
        final LockRegistryLeaderInitiator initiator;

        Member(String id, String role) {
            DefaultLockRepository repository = new DefaultLockRepository(dataSource);
            repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
            repository.setCheckDatabaseOnStart(false);
            repository.afterPropertiesSet();
            repository.afterSingletonsInstantiated();
            repository.start();
            JdbcLockRegistry registry = new JdbcLockRegistry(repository, TTL);
            registry.setIdleBetweenTries(IDLE_BETWEEN_TRIES);
            initiator = new LockRegistryLeaderInitiator(registry, new DefaultCandidate(id, role) {
                @Override
                public void onGranted(Context context) {
                    granted.complete(System.nanoTime());
                }
            });
            initiator.setHeartBeatMillis(HEART_BEAT_MS);
            initiator.setBusyWaitMillis(BUSY_WAIT_MS);
        }

        long awaitGranted() throws Exception {
            return granted.get(30, TimeUnit.SECONDS);
        }
    }

    private static String newRole(String prefix) {
        return prefix + "-" + ROLES.incrementAndGet();
    }

    /** Holder initiator.stop() (it unlocks: deletes its row) -> standby's onGranted. */
    @Override
    public List<Long> handover(int warmups, int runs) throws Exception {
        return Timing.measure("spring handover", warmups, runs, () -> {
            String role = newRole("handover");
            Member a = new Member("a", role);
            a.initiator.start();
            a.awaitGranted();
            Member b = new Member("b", role);
            b.initiator.start();
            Thread.sleep(300);
            long start = System.nanoTime();
            a.initiator.stop();
            long elapsed = b.awaitGranted() - start;
            b.initiator.stop();
            return elapsed;
        });
    }

    /** Crash: the holder's database connections fail from now on; returns [overshoot past EXPIRED_AFTER, kill -> grant]. */
    @Override
    public List<long[]> crash(int warmups, int runs) throws Exception {
        List<long[]> out = new ArrayList<>();
        Timing.measure("spring crash failover", warmups, runs, () -> {
            String role = newRole("failover");
            Member a = new Member("a", role);
            a.initiator.start();
            a.awaitGranted();
            Member b = new Member("b", role);
            b.initiator.start();
            Thread.sleep(300);
            long killedNanos = System.nanoTime();
            long killedMillis = System.currentTimeMillis();
            a.dataSource.kill();
            // The deadline the standby waits for: the row's EXPIRED_AFTER, written (UTC) by a's last renewal.
            Timestamp expiry = jdbc.queryForObject(
                    "SELECT EXPIRED_AFTER FROM INT_LOCK WHERE REGION = 'DEFAULT'"
                            + " AND LOCK_KEY = (SELECT LOCK_KEY FROM INT_LOCK WHERE REGION = 'DEFAULT' AND CLIENT_ID IS NOT NULL"
                            + " ORDER BY CREATED_DATE DESC LIMIT 1)",
                    Timestamp.class);
            long deadlineMillis =
                    expiry.toLocalDateTime().toInstant(ZoneOffset.UTC).toEpochMilli();
            long granted = b.awaitGranted();
            long total = granted - killedNanos;
            long overshoot = total - TimeUnit.MILLISECONDS.toNanos(deadlineMillis - killedMillis);
            a.initiator.stop();
            b.initiator.stop();
            out.add(new long[] {overshoot, total});
            return overshoot;
        });
        return out.subList(warmups, out.size());
    }

    /** A new member (repository, registry, initiator) on an empty role: build -> onGranted. */
    @Override
    public List<Long> coldStart(int warmups, int runs) throws Exception {
        return Timing.measure("spring cold start", warmups, runs, () -> {
            String role = newRole("cold");
            long start = System.nanoTime();
            Member a = new Member("a", role);
            a.initiator.start();
            long elapsed = a.awaitGranted() - start;
            a.initiator.stop();
            return elapsed;
        });
    }

    @Override
    public void close() {
        jdbc.execute("SHUTDOWN");
    }
}
