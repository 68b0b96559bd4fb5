package io.krabka.streams.coordination;

/** The base of every exception this module throws about coordination itself. */
public class CoordinationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public CoordinationException(String message) {
        super(message);
    }

    public CoordinationException(String message, Throwable cause) {
        super(message, cause);
    }
}
