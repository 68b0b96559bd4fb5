package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.junit.jupiter.api.Test;

/** The one place Kafka's errors become this library's: the refusals that retrying cannot heal. */
class KafkaErrorsTest {

    @Test
    void aFailedTlsHandshakeOrSaslLoginIsAnAuthenticationRefusalThatNamesTheSettingsToCheck() {
        CoordinationException tls = KafkaErrors.translate("creating topic t",
                new ExecutionException(new SslAuthenticationException("SSL handshake failed")));
        CoordinationException sasl = KafkaErrors.translate("registering m",
                new SaslAuthenticationException("Authentication failed: Invalid username or password"));

        assertThat(tls).isInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("creating topic t").hasMessageContaining("SSL handshake failed")
                .hasMessageContaining("TLS trust settings");
        assertThat(sasl).isInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("SASL credentials");
    }

    @Test
    void aRefusedAclIsAnAuthorizationRefusalButNotAnAuthenticationOne() {
        CoordinationException denied = KafkaErrors.translate("initializing the epoch of role r",
                new TransactionalIdAuthorizationException("Transactional Id authorization failed."));

        assertThat(denied).isInstanceOf(CoordinationAuthorizationException.class)
                .isNotInstanceOf(CoordinationAuthenticationException.class)
                .hasMessageContaining("refused by the cluster's ACLs");
    }

    @Test
    void fencingStillWinsOverEverythingElse() {
        assertThat(KafkaErrors.translate("writing", new ProducerFencedException("newer epoch")))
                .isInstanceOf(FencedException.class);
    }
}
