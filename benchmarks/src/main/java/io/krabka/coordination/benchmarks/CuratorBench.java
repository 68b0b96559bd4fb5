package io.krabka.coordination.benchmarks;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** Apache Curator's LeaderLatch on an in-process standalone ZooKeeper (curator-test's TestingServer). */
final class CuratorBench implements PeerBench {

    static final String SYSTEM = "Curator LeaderLatch (ZooKeeper)";

    /** Session timeout, the equivalent of the lease: 2 s. */
    static final int SESSION_TIMEOUT_MS = 2000;
    /** ZooKeeper's tick: session expiry is checked per tick (production default 2000 ms; that forbids a 2 s session). */
    static final int TICK_TIME_MS = 100;

    private static final AtomicInteger PATHS = new AtomicInteger();

    private final TestingServer server;

    CuratorBench() throws Exception {
        File dir = Files.createTempDirectory("bench-zk").toFile();
        InstanceSpec spec = new InstanceSpec(
                dir,
                -1,
                -1,
                -1,
                true,
                -1,
                TICK_TIME_MS,
                -1,
                Map.of("maxSessionTimeout", String.valueOf(20 * SESSION_TIMEOUT_MS)));
        this.server = new TestingServer(spec, true);
    }

    private CuratorFramework client(String connect) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS)
                .connectionTimeoutMs(SESSION_TIMEOUT_MS)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("ZooKeeper client did not connect");
        }
        return client;
    }

    private static String newPath(String prefix) {
        return "/bench/" + prefix + "-" + PATHS.incrementAndGet();
    }

    private static LeaderLatch latch(CuratorFramework client, String path, String id, CompletableFuture<Long> granted) {
        LeaderLatch latch = new LeaderLatch(client, path, id);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                granted.complete(System.nanoTime());
            }

            @Override
            public void notLeader() {}
        });
        return latch;
    }

    /** Holder latch.close() -> standby's isLeader() fires. */
    @Override
    public List<Long> handover(int warmups, int runs) throws Exception {
        try (CuratorFramework a = client(server.getConnectString());
                CuratorFramework b = client(server.getConnectString())) {
            return Timing.measure("curator handover", warmups, runs, () -> {
                String path = newPath("handover");
                CompletableFuture<Long> aGranted = new CompletableFuture<>();
                LeaderLatch held = latch(a, path, "a", aGranted);
                held.start();
                aGranted.get(30, TimeUnit.SECONDS);
                CompletableFuture<Long> bGranted = new CompletableFuture<>();
                LeaderLatch standby = latch(b, path, "b", bGranted);
                standby.start();
                Thread.sleep(300); // let b create its node and watch a's
                long start = System.nanoTime();
                held.close();
                long elapsed = bGranted.get(30, TimeUnit.SECONDS) - start;
                standby.close();
                return elapsed;
            });
        }
    }

    /**
     * Crash: the holder's connection is reset through a proxy and cannot come back; its session expires on the
     * server after the session timeout. Returns [overshoot past (last contact + negotiated timeout), kill -> grant].
     */
    @Override
    public List<long[]> crash(int warmups, int runs) throws Exception {
        List<long[]> out = new ArrayList<>();
        try (CuratorFramework b = client(server.getConnectString())) {
            Timing.measure("curator crash failover", warmups, runs, () -> {
                String path = newPath("failover");
                TcpProxy proxy = new TcpProxy(server.getPort());
                CuratorFramework a = client("127.0.0.1:" + proxy.port());
                CompletableFuture<Long> aGranted = new CompletableFuture<>();
                LeaderLatch held = latch(a, path, "a", aGranted);
                held.start();
                aGranted.get(30, TimeUnit.SECONDS);
                CompletableFuture<Long> bGranted = new CompletableFuture<>();
                LeaderLatch standby = latch(b, path, "b", bGranted);
                standby.start();
                Thread.sleep(300);
                int timeout = a.getZookeeperClient().getZooKeeper().getSessionTimeout();
                a.checkExists().forPath("/"); // a round trip: the server's last contact with a's session is now
                long killed = System.nanoTime();
                proxy.kill();
                long granted = bGranted.get(30, TimeUnit.SECONDS);
                standby.close();
                Thread closer = new Thread(a::close, "bench-curator-close"); // a is dead; do not wait for it
                closer.setDaemon(true);
                closer.start();
                long total = granted - killed;
                long overshoot = total - TimeUnit.MILLISECONDS.toNanos(timeout);
                out.add(new long[] {overshoot, total});
                return overshoot;
            });
        }
        return out.subList(warmups, out.size());
    }

    /** A new client (connect, session) and a latch on an empty path: build -> isLeader(). */
    @Override
    public List<Long> coldStart(int warmups, int runs) throws Exception {
        return Timing.measure("curator cold start", warmups, runs, () -> {
            String path = newPath("cold");
            long start = System.nanoTime();
            try (CuratorFramework a = client(server.getConnectString())) {
                CompletableFuture<Long> granted = new CompletableFuture<>();
                LeaderLatch latch = latch(a, path, "a", granted);
                latch.start();
                long elapsed = granted.get(30, TimeUnit.SECONDS) - start;
                latch.close();
                return elapsed;
            }
        });
    }

    @Override
    public void close() throws java.io.IOException {
        server.close();
    }
}
