package io.krabka.coordination.benchmarks;

import java.util.List;

/** A peer elector measured beside ours (Curator, Spring Integration): the same measures, each on its own store. */
interface PeerBench extends AutoCloseable {

    /** Graceful handovers: the holder gives up, time to the standby's grant. */
    List<Long> handover(int warmups, int runs) throws Exception;

    /** Crash failovers: [overshoot past the dead holder's deadline, kill -> granted] per sample. */
    List<long[]> crash(int warmups, int runs) throws Exception;

    /** Cold starts to the first grant. */
    List<Long> coldStart(int warmups, int runs) throws Exception;

    /** Stops the peer's store. */
    @Override
    void close() throws java.io.IOException;
}
