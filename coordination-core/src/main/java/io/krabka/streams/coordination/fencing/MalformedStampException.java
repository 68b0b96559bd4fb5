package io.krabka.streams.coordination.fencing;

import io.krabka.streams.coordination.CoordinationException;

/**
 * A record's {@link TokenHeaders} are there but are not what a guarded write stamps:
 * missing some of the four, or values that do not parse. The message names the header.
 */
public final class MalformedStampException extends CoordinationException {

    public MalformedStampException(String message) {
        super(message);
    }
}
