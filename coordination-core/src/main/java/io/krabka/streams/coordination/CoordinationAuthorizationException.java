package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The cluster refused this member an operation it needs: Write or Describe on the
 * role's {@code TransactionalId}, IdempotentWrite on the cluster, or Read/Write on the
 * coordination topic. Retrying does not help until the ACLs change.
 */
public class CoordinationAuthorizationException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public CoordinationAuthorizationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
