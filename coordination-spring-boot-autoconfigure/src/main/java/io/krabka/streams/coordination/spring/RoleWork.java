package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.Leadership;
import java.time.Duration;

/** Work that runs only while this member holds a role. */
interface RoleWork {

    /** Starts the work for a fresh leadership. Must not block. */
    void start(Leadership leadership);

    /** Stops the work, waiting at most {@code bound} for it to finish. */
    void stop(Duration bound);

    /** A name for logs. */
    String describe();
}
