package io.krabka.streams.coordination.test.guide;

import io.krabka.streams.coordination.fencing.JdbcTermStore;
import io.krabka.streams.coordination.fencing.TermGate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// tag::readme[]
class Device {
    private static final Logger log = LoggerFactory.getLogger(Device.class);
    private final DataSource dataSource;
    private final TermGate gate;

    Device(DataSource dataSource) {
        this.dataSource = dataSource;
        this.gate = TermGate.perKey(new JdbcTermStore(dataSource));   // a term per role and device key, in krabka_terms
    }

    void receive(ConsumerRecord<String, String> command) throws SQLException {
        try (Connection transaction = dataSource.getConnection()) {
            transaction.setAutoCommit(false);
            try {
                TermGate.Verdict verdict = gate.within(transaction).check(command);
                if (!verdict.admitted()) {
                    transaction.rollback();
                    log.warn("device refused a command: {}", verdict.reason());
                    return;
                }
                apply(transaction, command.key(), command.value());
                transaction.commit();                                  // the effect and its term, together
            } catch (SQLException | RuntimeException e) {
                transaction.rollback();                                // neither
                throw e;
            }
        }
    }

    private void apply(Connection transaction, String device, String firmware) throws SQLException {
        try (PreparedStatement update = transaction.prepareStatement(
                "UPDATE firmware SET version = ? WHERE device = ?")) {
            update.setString(1, firmware);
            update.setString(2, device);
            update.executeUpdate();
        }
    }
}
// end::readme[]
