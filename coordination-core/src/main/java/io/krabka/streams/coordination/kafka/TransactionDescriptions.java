package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTransactionsOptions;
import org.apache.kafka.clients.admin.DescribeTransactionsResult;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;

/** What the transaction coordinators report for roles (DescribeTransactions), with the transport's Admin. */
final class TransactionDescriptions {

    private final Admin admin;
    private final Duration timeout;

    TransactionDescriptions(Admin admin, Duration timeout) {
        this.admin = admin;
        this.timeout = timeout;
    }

    private static ProducerState producerState(TransactionDescription description) {
        return new ProducerState(
                description.producerId(),
                (short) description.producerEpoch(),
                description.state().toString(),
                description.transactionStartTimeMs().orElse(-1L));
    }

    /** {@link KafkaCoordinationTransport#describeEpoch(Role, Duration)}. */
    Optional<ProducerState> describeEpoch(Role role, Duration within) {
        // At least a millisecond: an answer already on its way still counts.
        long millis = Math.max(1, Math.min(within.toMillis(), timeout.toMillis()));
        try {
            TransactionDescription description = admin.describeTransactions(
                            List.of(role.name()), new DescribeTransactionsOptions().timeoutMs((int) millis))
                    .description(role.name())
                    .get(millis, TimeUnit.MILLISECONDS);
            return Optional.of(producerState(description));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TransactionalIdNotFoundException) {
                return Optional.empty();
            }
            throw KafkaErrors.translate("describing the epoch of role " + role, e);
        } catch (Exception e) {
            throw KafkaErrors.translate("describing the epoch of role " + role, e);
        }
    }

    /**
     * One DescribeTransactions for all of {@code roles} (the Admin groups the ids by
     * coordinator, so one request per broker that coordinates some of them), all within
     * one operation timeout.
     */
    Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        Map<String, Role> byName = new LinkedHashMap<>();
        roles.forEach(role -> byName.putIfAbsent(role.name(), role));
        if (byName.isEmpty()) {
            return Map.of();
        }
        String operation = "describing the epochs of " + byName.size() + " roles";
        DescribeTransactionsResult result;
        try {
            result = admin.describeTransactions(byName.keySet());
        } catch (RuntimeException e) {
            throw KafkaErrors.translate(operation, e);
        }
        long giveUpAt = System.nanoTime() + timeout.toNanos();
        Map<Role, Optional<ProducerState>> described = new LinkedHashMap<>();
        for (Map.Entry<String, Role> id : byName.entrySet()) {
            try {
                TransactionDescription description = result.description(id.getKey())
                        .get(Math.max(0, giveUpAt - System.nanoTime()), TimeUnit.NANOSECONDS);
                described.put(id.getValue(), Optional.of(producerState(description)));
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TransactionalIdNotFoundException)) {
                    throw KafkaErrors.translate(operation + " (role " + id.getValue() + ")", e);
                }
                described.put(id.getValue(), Optional.empty());
            } catch (Exception e) {
                throw KafkaErrors.translate(operation + " (role " + id.getValue() + ")", e);
            }
        }
        return described;
    }
}
