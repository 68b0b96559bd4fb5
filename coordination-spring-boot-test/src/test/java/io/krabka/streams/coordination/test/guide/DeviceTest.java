package io.krabka.streams.coordination.test.guide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.fencing.JdbcTermStore;
import io.krabka.streams.coordination.fencing.TokenHeaders;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.record.TimestampType;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The user guide's {@link Device} on H2: a command's effect and the term that admitted it commit together or not at all. */
class DeviceTest {

    private static final Role ROLLOUT = Role.of("rollout");

    private final JdbcDataSource dataSource = new JdbcDataSource();
    private final JdbcTermStore terms = new JdbcTermStore(dataSource);
    private Device device;

    @BeforeEach
    void createTables() throws SQLException {
        dataSource.setURL("jdbc:h2:mem:device-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        // The store never creates its table: the guide's DDL, as a migration would run it.
        execute(terms.createTableStatement());
        execute("CREATE TABLE firmware (device VARCHAR(64) PRIMARY KEY, version VARCHAR(16) NOT NULL)");
        execute("INSERT INTO firmware (device, version) VALUES ('dev-1', '1.0'), ('dev-2', '1.0')");
        device = new Device(dataSource);
    }

    @Test
    void anAdmittedCommandCommitsWithItsTermAndALaterCommandOfALowerTermIsRefused() throws SQLException {
        device.receive(command("dev-1", 68, "2.0"));
        device.receive(command("dev-2", 1, "1.1"));                   // another partition, read late: admitted
        device.receive(command("dev-1", 1, "1.1"));                   // a late copy for dev-1: refused

        assertThat(version("dev-1")).isEqualTo("2.0");
        assertThat(version("dev-2")).isEqualTo("1.1");
        assertThat(terms.highest(ROLLOUT, "dev-1")).hasValue(68);
        assertThat(terms.highest(ROLLOUT, "dev-2")).hasValue(1);
    }

    @Test
    void anEffectThatFailsRollsBackTheTermThatAdmittedIt() throws SQLException {
        device.receive(command("dev-1", 5, "2.0"));

        assertThatThrownBy(() -> device.receive(command("dev-1", 9, "a version too long for the column")))
                .isInstanceOf(SQLException.class);

        assertThat(version("dev-1")).isEqualTo("2.0");
        assertThat(terms.highest(ROLLOUT, "dev-1")).as("term 9 rolled back with its effect").hasValue(5);
        device.receive(command("dev-1", 7, "2.1"));
        assertThat(version("dev-1")).as("a term above 5 still commands dev-1").isEqualTo("2.1");
    }

    private static ConsumerRecord<String, String> command(String device, long term, String firmware) {
        return new ConsumerRecord<>("commands", 0, 0, 0L, TimestampType.CREATE_TIME, 0, 0, device, firmware,
                TokenHeaders.stamp(new ProducerRecord<>("commands", firmware), ROLLOUT,
                        FencingToken.of(term, 1000, (short) 0)).headers(), Optional.empty());
    }

    private String version(String device) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement select = connection.createStatement();
                ResultSet row = select.executeQuery("SELECT version FROM firmware WHERE device = '" + device + "'")) {
            row.next();
            return row.getString(1);
        }
    }

    private void execute(String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
