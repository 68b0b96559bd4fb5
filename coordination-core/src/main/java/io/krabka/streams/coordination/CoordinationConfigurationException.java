package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The cluster or the coordination topic is set up in a way this member cannot work with,
 * or is no longer the one it started on (another cluster answers at the same address), and
 * it will not heal by itself: someone has to change a setting. The message names it.
 */
public class CoordinationConfigurationException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public CoordinationConfigurationException(String message) {
        super(message);
    }

    public CoordinationConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
