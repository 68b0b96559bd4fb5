package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.Objects;

/**
 * Whether this member has had an answer from the cluster yet: the first cluster operation
 * of its transport that returned. Until then a member that contends cannot tell a cluster
 * that is slow to answer from a mistyped address, so health must not call it up; the
 * first operation's failure (one operation timeout later) says which it was.
 *
 * <p>It learns this from the transport it {@link #track tracks}: the auto-configuration
 * tracks the transport of the client it builds. An application that builds its own
 * {@link io.krabka.streams.coordination.client.CoordinationClient} can track its transport
 * the same way; when nothing is tracked, {@link #tracking()} is false and health does not
 * wait for a contact it would never see.
 */
public final class ClusterContact {

    private volatile boolean tracking;
    private volatile boolean made;

    /** {@code transport}, reporting here each operation that returned. Delegates everything else unchanged. */
    public CoordinationTransport track(CoordinationTransport transport) {
        Objects.requireNonNull(transport, "transport");
        tracking = true;
        return new ContactRecordingTransport(transport, this);
    }

    /** Whether a transport is {@link #track tracked}, so that {@link #made()} means something. */
    public boolean tracking() {
        return tracking;
    }

    /** Whether a cluster operation of the tracked transport returned. */
    public boolean made() {
        return made;
    }

    /** Called after each operation that returned; only the first one writes. */
    void answered() {
        if (!made) {
            made = true;
        }
    }
}
