package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The coordination topic is missing and may not be created, or exists with settings
 * that break the module's guarantees, or changed under a running member (deleted,
 * created again, its partitions altered). The message names each offending setting.
 */
public class TopicConfigurationException extends CoordinationConfigurationException {

    private static final long serialVersionUID = 1L;

    public TopicConfigurationException(String message) {
        super(message);
    }

    public TopicConfigurationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
