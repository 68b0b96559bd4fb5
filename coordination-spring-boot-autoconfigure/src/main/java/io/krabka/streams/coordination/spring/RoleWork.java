package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import java.time.Duration;

/** Work that runs only while this member holds a role. */
interface RoleWork {

    /**
     * Starts the work for a fresh leadership. Must not block. Work that ends by itself
     * tells {@code contender}, so the leadership ends with it.
     */
    void start(Leadership leadership, Contender contender) throws Exception;

    /** Stops the work, waiting at most {@code bound} for it to finish. */
    void stop(Duration bound);
}
