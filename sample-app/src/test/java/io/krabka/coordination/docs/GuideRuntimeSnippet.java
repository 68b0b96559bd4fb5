package io.krabka.coordination.docs;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.concurrent.ExecutorService;

/** The compiled twin of the USER-GUIDE's runtime of your own (compiled, never run; the build targets Java 17). */
class GuideRuntimeSnippet {

    CoordinationClient client(CoordinationTransport transport, ExecutorService virtualThreads) {
        // snippet-begin docs/USER-GUIDE.md: a runtime of your own
        // virtualThreads = Executors.newVirtualThreadPerTaskExecutor() on Java 21
        CoordinationRuntime runtime = CoordinationRuntime.builder()
            .callbacks(virtualThreads)
            .workers(virtualThreads)
            .build();
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        // snippet-end
        return client;
    }
}
