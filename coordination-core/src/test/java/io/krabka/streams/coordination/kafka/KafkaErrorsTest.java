package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.junit.jupiter.api.Test;

/** The one place Kafka's errors become this library's: the refusals that retrying cannot heal. */
class KafkaErrorsTest {

    @Test
    void aFailedTlsHandshakeOrSaslLoginIsAnAuthenticationRefusalThatNamesTheSettingsToCheck() {
        CoordinationException tls = KafkaErrors.translate(
                "creating topic t", new ExecutionException(new SslAuthenticationException("SSL handshake failed")));
        CoordinationException sasl = KafkaErrors.translate(
                "registering m",
                new SaslAuthenticationException("Authentication failed: Invalid username or password"));

        assertThat(tls)
                .isInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("creating topic t")
                .hasMessageContaining("SSL handshake failed")
                .hasMessageContaining("TLS trust settings");
        assertThat(sasl)
                .isInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("SASL credentials");
    }

    @Test
    void aRefusedAclIsAnAuthorizationRefusalButNotAnAuthenticationOne() {
        CoordinationException denied = KafkaErrors.translate(
                "initializing the epoch of role r",
                new TransactionalIdAuthorizationException("Transactional Id authorization failed."));

        assertThat(denied)
                .isInstanceOf(CoordinationAuthorizationException.class)
                .isNotInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("refused by the cluster's ACLs");
    }

    @Test
    void aTransactionTimeoutAboveTheBrokersMaximumIsAConfigurationErrorInEitherForm() {
        // The typed exception, and the plain KafkaException kafka-clients 4.1.2 throws from initTransactions.
        CoordinationException typed = KafkaErrors.translate(
                "initializing the epoch of role r",
                new org.apache.kafka.common.errors.InvalidTxnTimeoutException("too long"));
        CoordinationException wrapped = KafkaErrors.translate(
                "initializing the epoch of role r",
                new org.apache.kafka.common.KafkaException("Unexpected error in InitProducerIdResponse; "
                        + org.apache.kafka.common.protocol.Errors.INVALID_TRANSACTION_TIMEOUT.message()));
        for (CoordinationException translated : java.util.List.of(typed, wrapped)) {
            assertThat(translated)
                    .isInstanceOf(io.krabka.streams.coordination.CoordinationConfigurationException.class)
                    .hasMessageContaining("transaction.max.timeout.ms")
                    .hasMessageContaining("krabka.coordination.lease.duration");
        }
    }

    @Test
    void fencingStillWinsOverEverythingElse() {
        assertThat(KafkaErrors.translate("writing", new ProducerFencedException("newer epoch")))
                .isInstanceOf(FencedException.class);
    }

    @Test
    void aCommitRefusedForTheTransactionsStateIsFencedNotTransient() {
        // What a version 2 broker answers a commit that raced the coordinator's own abort.
        CoordinationException refused = KafkaErrors.translate(
                "a transaction of role r",
                new KafkaException(
                        "Cannot execute transactional method because we are in an error state",
                        new InvalidTxnStateException(
                                "The producer attempted a transactional operation in an invalid state.")));

        assertThat(refused)
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("a transaction of role r was fenced");
    }
}
