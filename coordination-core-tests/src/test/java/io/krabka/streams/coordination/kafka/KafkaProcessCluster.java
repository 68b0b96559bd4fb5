package io.krabka.streams.coordination.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntBinaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.awaitility.Awaitility;

/**
 * A KRaft cluster whose nodes are separate JVMs, so a test can kill (-9), pause
 * (SIGSTOP) and restart a broker for real. Every node is a combined controller and
 * broker with a static voter set, so a three-node cluster keeps its quorum with one
 * node down. The JVMs run {@code kafka.Kafka} from this JVM's class path.
 *
 * <p>Listeners: {@code CONTROLLER}, {@code INTERNAL} (PLAINTEXT; inter-broker and the
 * test's own clients, see {@link #bootstrapServers()}) and any number of extra client
 * listeners, each with its own security protocol and, optionally, an advertised port
 * that differs from the bound one (a TCP proxy in between).
 */
public final class KafkaProcessCluster implements AutoCloseable {

    /**
     * The brokers' {@code request.timeout.ms}. Inter-broker requests to a crashed broker
     * (the transaction coordinator's commit markers among them) wait this long; Kafka's
     * 30 s default stalls a role for 30 s after a broker crash (docs/RELIABILITY.md).
     */
    public static final Duration BROKER_REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /**
     * The brokers' {@code broker.session.timeout.ms}: how long after a broker's last
     * heartbeat the controller fences it and moves its partition leaderships (and so the
     * transaction coordinators it hosted) to other brokers.
     */
    public static final Duration BROKER_SESSION_TIMEOUT = Duration.ofSeconds(3);

    /** An extra client listener. {@code advertisedPort} maps (node id, bound port) to the port clients are told. */
    public record Listener(String name, String securityProtocol, IntBinaryOperator advertisedPort) {
        public Listener(String name, String securityProtocol) {
            this(name, securityProtocol, (node, bound) -> bound);
        }
    }

    private final Path dir;
    private final int nodes;
    private final String clusterId = Uuid.randomUuid().toString();
    private final List<Listener> listeners;
    private final Map<String, String> settings;
    private final String classPath;
    private final List<String> jvmOptions;
    private final List<Node> all = new ArrayList<>();

    private KafkaProcessCluster(Builder builder) {
        this.dir = builder.dir;
        this.nodes = builder.nodes;
        this.listeners = List.copyOf(builder.listeners);
        this.settings = new LinkedHashMap<>(builder.settings);
        this.classPath = builder.classPath;
        this.jvmOptions = List.copyOf(builder.jvmOptions);
    }

    public static Builder builder(Path dir) {
        return new Builder(dir);
    }

    public static final class Builder {
        private final Path dir;
        private int nodes = 1;
        private final List<Listener> listeners = new ArrayList<>();
        private final Map<String, String> settings = new LinkedHashMap<>();
        private String classPath = System.getProperty("java.class.path");
        // Quick to start, not fast: a test's broker lives for seconds.
        private List<String> jvmOptions =
                List.of("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

        private Builder(Path dir) {
            this.dir = dir;
        }

        /**
         * The nodes' class path: by default this JVM's, so the brokers are the test kit's
         * Kafka; the class path of another Kafka release runs brokers of that release.
         */
        public Builder classPath(String classPath) {
            this.classPath = classPath;
            return this;
        }

        /**
         * The nodes' JVM options (heap, collector, compiler), replacing the defaults, which
         * start quickly but run slowly (C1 only): a benchmark's broker wants Kafka's own.
         */
        public Builder jvmOptions(List<String> options) {
            this.jvmOptions = List.copyOf(options);
            return this;
        }

        public Builder nodes(int nodes) {
            this.nodes = nodes;
            return this;
        }

        public Builder listener(Listener listener) {
            listeners.add(listener);
            return this;
        }

        /** A broker setting; it overrides the defaults of this class. */
        public Builder setting(String key, String value) {
            settings.put(key, value);
            return this;
        }

        public Builder settings(Map<String, String> more) {
            settings.putAll(more);
            return this;
        }

        /** Formats every node's storage and starts the nodes; returns once every broker is registered. */
        public KafkaProcessCluster start() {
            KafkaProcessCluster cluster = new KafkaProcessCluster(this);
            try {
                cluster.startAll();
                return cluster;
            } catch (RuntimeException e) {
                cluster.close();
                throw e;
            }
        }
    }

    /** One node: its ports, its directory, and its JVM while it runs. */
    public final class Node {
        final int id;
        final Map<String, Integer> ports = new LinkedHashMap<>();
        final Path home;
        Process process;

        Node(int id) {
            this.id = id;
            this.home = dir.resolve("node-" + id);
        }

        public int id() {
            return id;
        }

        public int port(String listener) {
            return ports.get(listener);
        }

        public boolean running() {
            return process != null && process.isAlive();
        }

        public long pid() {
            return process.pid();
        }

        public Path logFile() {
            return home.resolve("server.out");
        }
    }

    private void startAll() {
        for (int id = 1; id <= nodes; id++) {
            Node node = new Node(id);
            node.ports.put("CONTROLLER", freePort());
            node.ports.put("INTERNAL", freePort());
            for (Listener listener : listeners) {
                node.ports.put(listener.name(), freePort());
            }
            all.add(node);
        }
        String voters = all.stream()
                .map(n -> n.id + "@127.0.0.1:" + n.port("CONTROLLER"))
                .collect(Collectors.joining(","));
        // Every node's storage formatted side by side: a format is a JVM of its own, a few seconds each.
        Map<Node, Process> formats = new LinkedHashMap<>();
        for (Node node : all) {
            writeProperties(node, voters);
            formats.put(
                    node,
                    startJvm(
                            node,
                            node.home.resolve("format.out"),
                            "kafka.tools.StorageTool",
                            "format",
                            "-t",
                            clusterId,
                            "-c",
                            node.home.resolve("server.properties").toString()));
        }
        formats.forEach(this::awaitFormatted);
        all.forEach(this::launch);
        awaitBrokers(all.size(), Duration.ofSeconds(90));
    }

    private void writeProperties(Node node, String voters) {
        int replicas = Math.min(3, nodes);
        String minIsr = Integer.toString(Math.min(2, replicas));
        Map<String, String> props = new LinkedHashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", Integer.toString(node.id));
        props.put("controller.quorum.voters", voters);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "INTERNAL");
        List<String> bound = new ArrayList<>();
        List<String> advertised = new ArrayList<>();
        List<String> protocols = new ArrayList<>(List.of("CONTROLLER:PLAINTEXT", "INTERNAL:PLAINTEXT"));
        bound.add("CONTROLLER://127.0.0.1:" + node.port("CONTROLLER"));
        bound.add("INTERNAL://127.0.0.1:" + node.port("INTERNAL"));
        advertised.add("INTERNAL://127.0.0.1:" + node.port("INTERNAL"));
        for (Listener listener : listeners) {
            int port = node.port(listener.name());
            bound.add(listener.name() + "://127.0.0.1:" + port);
            advertised.add(listener.name() + "://127.0.0.1:"
                    + listener.advertisedPort().applyAsInt(node.id, port));
            protocols.add(listener.name() + ":" + listener.securityProtocol());
        }
        props.put("listeners", String.join(",", bound));
        props.put("advertised.listeners", String.join(",", advertised));
        props.put("listener.security.protocol.map", String.join(",", protocols));
        props.put("log.dirs", node.home.resolve("data").toString());
        props.put("metadata.log.dir", node.home.resolve("metadata").toString());
        // Every topic the harness cares about is replicated like production: RF 3, min.insync 2.
        props.put("default.replication.factor", Integer.toString(replicas));
        props.put("min.insync.replicas", minIsr);
        props.put("offsets.topic.replication.factor", Integer.toString(replicas));
        props.put("offsets.topic.num.partitions", "4");
        props.put("transaction.state.log.replication.factor", Integer.toString(replicas));
        props.put("transaction.state.log.min.isr", minIsr);
        props.put("transaction.state.log.num.partitions", "8");
        props.put("unclean.leader.election.enable", "false");
        props.put("group.initial.rebalance.delay.ms", "0");
        // A killed broker is fenced by the controller after this, not the 9 s default.
        props.put("broker.heartbeat.interval.ms", "500");
        props.put("broker.session.timeout.ms", Long.toString(BROKER_SESSION_TIMEOUT.toMillis()));
        props.put("auto.create.topics.enable", "false");
        props.put("request.timeout.ms", Long.toString(BROKER_REQUEST_TIMEOUT.toMillis()));
        props.put("num.network.threads", "2");
        props.put("num.io.threads", "2");
        props.put("log.cleaner.threads", "1");
        props.put("num.recovery.threads.per.data.dir", "1");
        props.putAll(settings);
        try {
            Files.createDirectories(node.home);
            try (Writer out = Files.newBufferedWriter(node.home.resolve("server.properties"))) {
                Properties properties = new Properties();
                properties.putAll(props);
                properties.store(out, "node " + node.id);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void awaitFormatted(Node node, Process format) {
        try {
            if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
                format.destroyForcibly();
                throw new IllegalStateException(
                        "could not format node " + node.id + ": " + Files.readString(node.home.resolve("format.out")));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void launch(Node node) {
        node.process = startJvm(
                node,
                node.logFile(),
                "kafka.Kafka",
                node.home.resolve("server.properties").toString());
    }

    private Process startJvm(Node node, Path output, String mainClass, String... args) {
        return ChildJvm.start(
                classPath,
                mainClass,
                Stream.concat(
                                jvmOptions.stream(),
                                Stream.of(
                                        "-Dkafka.logs.dir=" + node.home.resolve("logs"),
                                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"))
                        .toList(),
                List.of(args),
                output);
    }

    /** Blocks until {@code count} brokers are registered and unfenced in the metadata. */
    public void awaitBrokers(int count, Duration timeout) {
        try (Admin admin = admin()) {
            Awaitility.await("brokers of " + this)
                    .atMost(timeout)
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsMatching(e -> e instanceof ExecutionException || e instanceof TimeoutException)
                    .until(() -> {
                        for (Node node : all) {
                            if (node.process != null && !node.process.isAlive() && node.process.exitValue() != 137) {
                                throw new IllegalStateException("node " + node.id + " exited with "
                                        + node.process.exitValue() + "; see " + node.logFile());
                            }
                        }
                        return admin.describeCluster()
                                        .nodes()
                                        .get(5, TimeUnit.SECONDS)
                                        .size()
                                >= count;
                    });
        }
    }

    public List<Node> nodes() {
        return List.copyOf(all);
    }

    public Node node(int id) {
        return all.get(id - 1);
    }

    /** Bootstrap addresses of the INTERNAL (PLAINTEXT) listener of every node. */
    public String bootstrapServers() {
        return bootstrapServers("INTERNAL");
    }

    /** Bootstrap addresses (as bound, not as advertised) of one listener of every node. */
    public String bootstrapServers(String listener) {
        return all.stream().map(n -> "127.0.0.1:" + n.port(listener)).collect(Collectors.joining(","));
    }

    /** An admin on the INTERNAL listener; the caller closes it. */
    public Admin admin() {
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10000));
    }

    /** SIGKILL: no shutdown hook, no controlled shutdown. */
    public void kill(int id) {
        Node node = node(id);
        if (node.running()) {
            node.process.destroyForcibly();
            waitFor(node.process);
        }
    }

    /** Starts a stopped or killed node again on its old storage and ports; returns once it listens. */
    public void restart(int id) {
        Node node = node(id);
        if (node.running()) {
            throw new IllegalStateException("node " + id + " is running");
        }
        launch(node);
        // Until the controller fences it, the killed node still counts as registered;
        // wait for the new JVM to accept connections instead.
        Awaitility.await("node " + id + " listening again")
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    if (!node.process.isAlive()) {
                        throw new IllegalStateException(
                                "node " + id + " exited with " + node.process.exitValue() + "; see " + node.logFile());
                    }
                    return listening(node.port("INTERNAL"));
                });
    }

    public void pause(int id) {
        ChildJvm.signal(node(id).pid(), "STOP");
    }

    public void resume(int id) {
        ChildJvm.signal(node(id).pid(), "CONT");
    }

    private static void waitFor(Process process) {
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("process " + process.pid() + " did not exit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static final java.util.concurrent.atomic.AtomicInteger NEXT_PORT =
            new java.util.concurrent.atomic.AtomicInteger(20000 + new java.util.Random().nextInt(8000));

    /**
     * A port that was free a moment ago, below the kernel's ephemeral range (32768+ on
     * Linux): a restarted broker must bind its old ports again, and a port from the
     * ephemeral range may meanwhile be the local end of some client's connection.
     */
    public static int freePort() {
        while (true) {
            int port = NEXT_PORT.getAndIncrement();
            if (port >= 32000) {
                NEXT_PORT.compareAndSet(port + 1, 20000);
                continue;
            }
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException taken) {
                // try the next one
            }
        }
    }

    /** True when something accepts connections on the port. */
    public static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Kills every node (SIGKILL: the data is thrown away with the directory anyway). */
    @Override
    public void close() {
        for (Node node : all) {
            if (node.process != null) {
                node.process.destroyForcibly();
                waitFor(node.process);
            }
        }
    }

    @Override
    public String toString() {
        return "KafkaProcessCluster[" + nodes + " nodes, " + dir + ", cluster id " + clusterId + "]";
    }
}
