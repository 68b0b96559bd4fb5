package io.krabka.streams.coordination;

/**
 * A transient failure (a leader moved, a coordinator is loading, a transaction was
 * aborted by the coordinator): the operation may succeed if tried again. The
 * leadership, if any, is not known to have ended.
 */
public class RetriableCoordinationException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public RetriableCoordinationException(String message, Throwable cause) {
        super(message, cause);
    }
}
