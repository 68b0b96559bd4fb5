package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/** The base of every exception this module throws about coordination itself. */
public class CoordinationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public CoordinationException(String message) {
        super(message);
    }

    public CoordinationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
