package io.krabka.streams.coordination;

/**
 * The cluster did not answer within the time allowed, or a member did not win a role
 * before its deadline. The message says which operation waited and for how long.
 */
public class CoordinationTimeoutException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public CoordinationTimeoutException(String message) {
        super(message);
    }

    public CoordinationTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
