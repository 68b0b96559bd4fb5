package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The cluster did not authenticate this member: wrong SASL credentials, or TLS settings
 * it does not trust (or that do not trust it). Like a refused ACL, retrying does not
 * help until the configuration changes, so it is a {@link CoordinationAuthorizationException}.
 */
public class CoordinationAuthenticationException extends CoordinationAuthorizationException {

    private static final long serialVersionUID = 1L;

    public CoordinationAuthenticationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
