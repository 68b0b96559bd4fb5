package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Where a challenger's InitProducerId ({@code initTransactions()}) spends its time, on the benchmark's
 * in-process one-broker KRaft cluster ({@link KafkaTestCluster}, as {@link OursBench} starts it).
 *
 * <p>Shapes, each on a fresh producer of the role built with the library's transactional settings and connected to
 * the bootstrap address beforehand ({@code partitionsFor}), as {@link HandoverFloors} does:
 * <ul>
 * <li>{@code A} the role's last transaction completed seconds ago;
 * <li>{@code B} right after another producer of the role returned from committing a one-record transaction;
 * <li>{@code C} the same with a tombstone on a compacted topic (the library's release);
 * <li>{@code A+node}, {@code C+node}: A or C with the client also connected to the broker's own node id beforehand
 * (a metadata request for another topic goes there), not only to the bootstrap address;
 * <li>{@code C+visible}: C, but InitProducerId only once a read_committed long poll has returned the tombstone (the
 * library's standby path: it asks after its watcher sees the release); {@code C+visible+node} both;
 * <li>{@code C+described}: C, but DescribeTransactions is polled until the state leaves PrepareCommit first;
 * <li>{@code C+probe}: C+node with a DescribeTransactions poller beside it, recording when the state leaves
 * PrepareCommit, printed per run beside the InitProducerId answers.
 * </ul>
 * for transaction version 2 then 1 and each {@code retry.backoff.ms}. For each run it records the client's transactional
 * requests and responses (TRACE of {@code TransactionManager}, DEBUG of {@code Sender} and {@code NetworkClient}, with
 * slf4j-simple's output taken in-process and stamped on arrival) and the broker's per-request log
 * ({@code kafka.request.logger} DEBUG: queue, local, remote, response-queue and send time, and the error code), plus the
 * broker's {@code RequestMetrics} histograms (deltas of their count and sum around each InitProducerId).
 *
 * <pre>
 * ./mvnw -B -q -o -Pbench -pl benchmarks -am -DskipTests package \
 *     org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -Xmx1g -cp benchmarks/target/classes:$(cat /tmp/cp.txt) \
 *     io.krabka.coordination.benchmarks.InitProducerIdBreakdown --runs=40 --warmups=5 --backoffs=0,1,5,20 \
 *     --variant-backoffs=1,5 --tv=2,1 [--logs=false]
 * </pre>
 * (About 3 minutes on a 2-core machine; stdout is the report, stderr the clients' and broker's INFO lines.)
 *
 * <p>What it showed (kafka-clients and broker 4.1.2): every {@code initTransactions()} of a fresh producer
 * sleeps {@code retry.backoff.ms} once between the FindCoordinator answer and the InitProducerId request, whatever the
 * coordinator's state and the transaction version: the Sender, finding the coordinator unknown, enqueues FindCoordinator
 * and re-enqueues InitProducerId as a retry ({@code Sender.maybeFindCoordinatorAndRetry}), and a retried request waits
 * out the back-off before it is sent. CONCURRENT_TRANSACTIONS is rare: the previous transaction is complete ~3 ms after
 * its commit returned, before the challenger usually asks.
 * Options: {@code --logs=false} (no client or broker logging: timing and Yammer metrics only, to see what logging
 * costs), {@code --dump=true} (print two runs' log lines per cell), {@code --node-topic=ipb-other} (the topic whose
 * metadata the +node variants ask for, e.g. {@code __transaction_state}),
 * {@code --shapes=A,B,C,A+node,C+node,C+visible,C+visible+node,C+described,C+probe} (the variants run only at
 * {@code --variant-backoffs}, default 5).
 */
public final class InitProducerIdBreakdown {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final byte[] VALUE = new byte[64];
    private static final byte[] KEY = "lease".getBytes(StandardCharsets.UTF_8);
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final List<String> REQUESTS =
            List.of("InitProducerId", "FindCoordinator", "EndTxn", "Produce", "WriteTxnMarkers", "AddPartitionsToTxn");
    private static final List<String> PARTS = List.of(
            "RequestQueueTimeMs",
            "LocalTimeMs",
            "RemoteTimeMs",
            "ResponseQueueTimeMs",
            "ResponseSendTimeMs",
            "ThrottleTimeMs",
            "TotalTimeMs");
    private static final Map<Integer, String> API = Map.of(
            22,
            "InitProducerId",
            10,
            "FindCoordinator",
            26,
            "EndTxn",
            0,
            "Produce",
            27,
            "WriteTxnMarkers",
            24,
            "AddPartitionsToTxn",
            65,
            "DescribeTransactions");
    private static final Map<Integer, String> ERRORS = Map.of(
            0,
            "NONE",
            51,
            "CONCURRENT_TRANSACTIONS",
            14,
            "COORDINATOR_LOAD_IN_PROGRESS",
            15,
            "COORDINATOR_NOT_AVAILABLE",
            16,
            "NOT_COORDINATOR",
            47,
            "INVALID_PRODUCER_EPOCH",
            90,
            "PRODUCER_FENCED");

    private static Capture capture;
    private static boolean DUMP;
    private static String NODE_TOPIC = "ipb-other";

    private InitProducerIdBreakdown() {}

    public static void main(String[] args) throws Exception {
        int runs = Integer.parseInt(arg(args, "runs", "40"));
        int warmups = Integer.parseInt(arg(args, "warmups", "5"));
        boolean logs = Boolean.parseBoolean(arg(args, "logs", "true"));
        DUMP = Boolean.parseBoolean(arg(args, "dump", "false"));
        NODE_TOPIC = arg(args, "node-topic", NODE_TOPIC);
        List<Integer> backoffs = ints(arg(args, "backoffs", "1,5,20"));
        List<Integer> versions = ints(arg(args, "tv", "2,1"));
        List<Integer> variantBackoffs = ints(arg(args, "variant-backoffs", "5"));
        Set<String> shapes =
                Set.of(arg(args, "shapes", "A,B,C,A+node,C+node,C+visible,C+visible+node,C+described,C+probe")
                        .split(","));
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        if (logs) {
            System.setProperty(
                    "org.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals.TransactionManager",
                    "trace");
            System.setProperty(
                    "org.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals.Sender", "debug");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "debug");
            System.setProperty("org.slf4j.simpleLogger.log.kafka.request.logger", "debug");
        }
        PrintStream original = System.err;
        capture = new Capture(original);
        System.setErr(new PrintStream(capture, true, StandardCharsets.UTF_8));
        PrintStream out = System.out;
        out.printf(
                "# InitProducerId breakdown: runs=%d warmups=%d logs=%s backoffs=%s tv=%s%n",
                runs, warmups, logs, backoffs, versions);
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            String data = "ipb-data";
            String compacted = "ipb-compacted";
            cluster.createTopic(data, 1);
            cluster.admin()
                    .createTopics(
                            List.of(new NewTopic(compacted, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all()
                    .get(20, TimeUnit.SECONDS);
            cluster.createTopic("ipb-other", 1);
            // JIT and connection warm-up, not reported.
            new Cell(cluster, 2, 5, "B", data, compacted).run(40, 1, new PrintStream(OutputStream.nullOutputStream()));
            for (int version : versions) {
                cluster.setTransactionVersion((short) version);
                Timing.sleep(2_000); // the feature reaches the broker's metadata cache, and new clients' ApiVersions
                for (int backoff : backoffs) {
                    for (String shape : List.of("A", "B", "C")) {
                        if (shapes.contains(shape)) {
                            new Cell(cluster, version, backoff, shape, data, compacted).run(warmups, runs, out);
                        }
                    }
                }
                for (int backoff : variantBackoffs) {
                    for (String shape :
                            List.of("A+node", "C+node", "C+visible", "C+visible+node", "C+described", "C+probe")) {
                        if (shapes.contains(shape) && (version == 2 || !shape.equals("C+probe"))) {
                            new Cell(cluster, version, backoff, shape, data, compacted).run(warmups, runs, out);
                        }
                    }
                }
            }
        } finally {
            System.setErr(original);
        }
        out.println("# done");
        System.exit(0);
    }

    /** One (transaction version, back-off, shape) cell: its runs and its report. */
    private static final class Cell {
        final KafkaTestCluster cluster;
        final int version;
        final int backoff;
        final String shape;
        final String data;
        final String compacted;
        final List<Run> results = new ArrayList<>();
        final Map<String, double[]> yammer = new TreeMap<>(); // "request part" -> {count, sum}

        Cell(KafkaTestCluster cluster, int version, int backoff, String shape, String data, String compacted) {
            this.cluster = cluster;
            this.version = version;
            this.backoff = backoff;
            this.shape = shape;
            this.data = data;
            this.compacted = compacted;
        }

        void run(int warmups, int runs, PrintStream out) throws Exception {
            Map<String, Object> connection = new HashMap<>(cluster.connection());
            connection.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, backoff);
            String prefix =
                    "ipb-tv" + version + "-b" + backoff + "-" + shape.replace('+', '-') + "-" + IDS.incrementAndGet();
            int total = warmups + runs;
            List<Role> roles = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                roles.add(Role.of(prefix + "-" + i));
            }
            TopicPartition tombstones = new TopicPartition(compacted, 0);
            try (Admin admin = Admin.create(KafkaCoordinationTransport.adminSettings(cluster.connection(), TIMEOUT));
                    PartitionWatcher watcher = shape.startsWith("C+visible")
                            ? new PartitionWatcher(cluster.connection(), tombstones, "ipb-watcher")
                            : null) {
                if (shape.startsWith("A")) {
                    // The roles' last transactions, completed long before each is measured.
                    for (Role role : roles) {
                        try (KafkaProducer<byte[], byte[]> holder = transactional(connection, role, "old")) {
                            holder.initTransactions();
                            transaction(holder, data, false);
                        }
                    }
                    Timing.sleep(3_000);
                }
                for (int i = 0; i < total; i++) {
                    Role role = roles.get(i);
                    KafkaProducer<byte[], byte[]> holder = null;
                    if (!shape.startsWith("A")) {
                        holder = transactional(connection, role, "holder");
                        holder.initTransactions();
                        transaction(holder, data, false);
                    }
                    String clientId = prefix + "-challenger-" + i;
                    KafkaProducer<byte[], byte[]> challenger = transactional(connection, role, clientId);
                    challenger.partitionsFor(data);
                    if (shape.endsWith("+node") || shape.equals("C+probe")) {
                        challenger.partitionsFor(NODE_TOPIC); // a metadata request to the broker's own node id
                    }
                    Map<String, double[]> y0 = yammer();
                    Probe probe = null;
                    long committed = 0;
                    long beforeInit = 0;
                    long described = -1;
                    CompletableFuture<Long> visible = watcher == null ? null : watcher.next();
                    if (holder != null) {
                        transaction(holder, shape.startsWith("C") ? compacted : data, shape.startsWith("C"));
                        committed = System.nanoTime();
                        if (shape.equals("C+probe")) {
                            probe = new Probe(admin, role.name(), committed);
                        } else if (shape.startsWith("C+visible")) {
                            visible.get(30, TimeUnit.SECONDS);
                        } else if (shape.equals("C+described")) {
                            while (true) {
                                TransactionDescription d = admin.describeTransactions(List.of(role.name()))
                                        .all()
                                        .get()
                                        .get(role.name());
                                if (d.state() != TransactionState.PREPARE_COMMIT) {
                                    break;
                                }
                            }
                            described = System.nanoTime() - committed;
                        }
                    }
                    // Between a commit and an immediate InitProducerId nothing may run: the snapshot (~1 ms) would
                    // let the coordinator finish; there the broker's window is the commit's and the InitProducerId's.
                    boolean immediate = holder != null && visible == null && described < 0 && probe == null;
                    Map<String, double[]> y1 = immediate ? y0 : yammer();
                    capture.begin(clientId);
                    beforeInit = System.nanoTime();
                    challenger.initTransactions();
                    long inited = System.nanoTime();
                    List<Capture.Line> lines = capture.end();
                    Map<String, double[]> y2 = yammer();
                    long probeLeft = probe == null ? -1 : probe.stop();
                    challenger.close(Duration.ZERO);
                    if (holder != null) {
                        holder.close(Duration.ZERO);
                    }
                    if (i >= warmups) {
                        Run run = new Run(
                                inited - beforeInit,
                                committed == 0 ? -1 : beforeInit - committed,
                                described,
                                probeLeft < 0 ? -1 : probeLeft,
                                beforeInit,
                                lines,
                                clientId);
                        results.add(run);
                        if (immediate) {
                            add(y0, y2, "commit+init ");
                        } else {
                            add(y1, y2, "init ");
                            if (holder != null) {
                                add(y0, y1, "commit ");
                            }
                        }
                    }
                }
            }
            report(out);
        }

        private void add(Map<String, double[]> before, Map<String, double[]> after, String window) {
            after.forEach((name, values) -> {
                double[] was = before.getOrDefault(name, new double[2]);
                double[] sum = yammer.computeIfAbsent(window + name, n -> new double[2]);
                sum[0] += values[0] - was[0];
                sum[1] += values[1] - was[1];
            });
        }

        void report(PrintStream out) {
            out.printf("%n## TV%d retry.backoff.ms=%d shape %s (%d runs)%n", version, backoff, shape, results.size());
            out.println("client: "
                    + quantiles(
                            "initTransactions() total",
                            results.stream().map(r -> r.total).toList()));
            if (shape.startsWith("C+visible") || shape.equals("C+described")) {
                out.println("client: "
                        + quantiles(
                                "commit returned -> InitProducerId asked",
                                results.stream().map(r -> r.waited).toList()));
                out.println("client: "
                        + quantiles(
                                "commit returned -> InitProducerId done",
                                results.stream().map(r -> r.waited + r.total).toList()));
            }
            if (!shape.startsWith("A") && !shape.startsWith("C+visible") && !shape.equals("C+described")) {
                out.println("client: "
                        + quantiles(
                                "commit returned -> initTransactions() called",
                                results.stream().map(r -> r.waited).toList()));
            }
            if (shape.equals("C+probe")) {
                out.println("describe: "
                        + quantiles(
                                "commit returned -> state left PrepareCommit",
                                results.stream()
                                        .filter(r -> r.probeLeft >= 0)
                                        .map(r -> r.probeLeft)
                                        .toList()));
            }
            if (DUMP) {
                for (Run run : results.subList(0, Math.min(2, results.size()))) {
                    out.println("  run's log, ms from the start of initTransactions():");
                    for (Capture.Line line : run.lines) {
                        String text = line.text();
                        out.printf(
                                Locale.ROOT,
                                "  %8.3f %s%n",
                                (line.nanos() - run.start) / 1e6,
                                text.length() > 400 ? text.substring(0, 400) : text);
                    }
                }
            }
            if (results.get(0).lines.isEmpty()) {
                out.println("(no logs)");
            } else {
                reportLogs(out);
            }
            StringBuilder b = new StringBuilder("broker RequestMetrics (mean ms per request over the window, from "
                    + "the Yammer histograms' count and sum):");
            for (String window : List.of("init ", "commit ", "commit+init ")) {
                for (String request : REQUESTS) {
                    double[] totals = yammer.get(window + request + " TotalTimeMs");
                    if (totals == null || totals[0] < 0.5) {
                        continue;
                    }
                    b.append(String.format(
                            Locale.ROOT,
                            "%n  %-11s %-18s n/run %.2f",
                            window.trim(),
                            request,
                            totals[0] / results.size()));
                    for (String part : PARTS) {
                        double[] v = yammer.get(window + request + " " + part);
                        b.append(String.format(Locale.ROOT, " %s %.2f", part.replace("TimeMs", ""), v[1] / v[0]));
                    }
                }
                yammer.forEach((name, v) -> {
                    if (name.startsWith(window) && name.contains("Errors:") && v[0] > 0.5) {
                        b.append(String.format(
                                Locale.ROOT,
                                "%n  %-11s errors %s: %.0f",
                                window.trim(),
                                name.substring(window.length()),
                                v[0]));
                    }
                });
            }
            out.println(b);
            out.flush();
        }

        private void reportLogs(PrintStream out) {
            Map<String, Integer> attempts = new TreeMap<>();
            Map<String, Integer> clientErrors = new TreeMap<>();
            List<Long> find = new ArrayList<>();
            List<Long> connect = new ArrayList<>();
            List<Long> gap = new ArrayList<>();
            List<Long> lastRtt = new ArrayList<>();
            List<Long> firstRtt = new ArrayList<>();
            List<Long> lastCt = new ArrayList<>();
            List<Long> tail = new ArrayList<>();
            List<Long> sleeps = new ArrayList<>();
            Map<String, List<double[]>> broker = new TreeMap<>();
            int runsWithCt = 0;
            for (Run run : results) {
                Parsed p = Parsed.of(run);
                attempts.merge(p.initSends.size() + " InitProducerId", 1, Integer::sum);
                p.initErrors.forEach(e -> clientErrors.merge(e, 1, Integer::sum));
                if (p.fcRecv > 0) {
                    find.add(p.fcRecv);
                }
                if (p.connDone > 0) {
                    connect.add(p.connDone - p.connStart);
                }
                if (!p.initSends.isEmpty()) {
                    gap.add(p.initSends.get(0) - Math.max(p.fcRecv, p.connDone));
                    firstRtt.add(p.initRecvs.get(0) - p.initSends.get(0));
                    int last = p.initSends.size() - 1;
                    lastRtt.add(p.initRecvs.get(last) - p.initSends.get(last));
                    tail.add(run.total - p.initRecvs.get(last));
                    for (int k = 1; k < p.initSends.size(); k++) {
                        sleeps.add(p.initSends.get(k) - p.initRecvs.get(k - 1));
                    }
                }
                if (p.lastCt > 0) {
                    runsWithCt++;
                    lastCt.add(p.lastCt + Math.max(0, run.waited));
                }
                p.broker.forEach((k, v) ->
                        broker.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
                if (shape.equals("C+probe")) {
                    StringBuilder b = new StringBuilder(String.format(
                            Locale.ROOT,
                            "  probe: ms after commit returned: state left PrepareCommit %.2f; InitProducerId",
                            run.probeLeft / 1e6));
                    for (int k = 0; k < p.initSends.size(); k++) {
                        b.append(String.format(
                                Locale.ROOT,
                                " [sent %.2f %s %.2f]",
                                (p.initSends.get(k) + run.waited) / 1e6,
                                p.initErrors.get(k),
                                (p.initRecvs.get(k) + run.waited) / 1e6));
                    }
                    out.println(b);
                }
            }
            out.println("client: InitProducerId requests per initTransactions(): " + attempts + "; their errors: "
                    + clientErrors + "; runs with CONCURRENT_TRANSACTIONS: " + runsWithCt);
            out.println("client: " + quantiles("start -> FindCoordinator response", find));
            if (!connect.isEmpty()) {
                out.println("client: " + quantiles("connection to the coordinator's node (TCP + ApiVersions)", connect)
                        + " in " + connect.size() + " runs");
            }
            out.println("client: "
                    + quantiles("FindCoordinator answered (and node ready) -> first InitProducerId sent", gap));
            out.println("client: " + quantiles("first InitProducerId round trip", firstRtt));
            if (!sleeps.isEmpty()) {
                out.println("client: " + quantiles("error response -> retried InitProducerId sent", sleeps));
            }
            out.println("client: " + quantiles("last InitProducerId round trip", lastRtt));
            out.println("client: " + quantiles("last response -> initTransactions() returns", tail));
            if (!lastCt.isEmpty()) {
                out.println("client: " + quantiles("commit returned -> last CONCURRENT_TRANSACTIONS response", lastCt));
            }
            broker.forEach((key, rows) -> {
                double[] mean = new double[6];
                List<Long> totals = new ArrayList<>();
                for (double[] r : rows) {
                    for (int k = 0; k < 6; k++) {
                        mean[k] += r[k] / rows.size();
                    }
                    totals.add((long) (r[5] * 1e6));
                }
                out.printf(
                        Locale.ROOT,
                        "broker log: %-55s n %3d  queue %.3f local %.3f remote %.3f respQueue %.3f "
                                + "send %.3f | total p50 %.3f p90 %.3f ms%n",
                        key,
                        rows.size(),
                        mean[0],
                        mean[1],
                        mean[2],
                        mean[3],
                        mean[4],
                        pct(totals, 50) / 1e6,
                        pct(totals, 90) / 1e6);
            });
        }
    }

    /** One measured initTransactions(). */
    private record Run(
            long total,
            long waited,
            long described,
            long probeLeft,
            long start,
            List<Capture.Line> lines,
            String clientId) {}

    /** What a run's log lines say, in nanoseconds from the start of initTransactions(). */
    private static final class Parsed {
        long fcRecv = -1;
        long connStart = -1;
        long connDone = -1;
        long lastCt = -1;
        final List<Long> initSends = new ArrayList<>();
        final List<Long> initRecvs = new ArrayList<>();
        final List<String> initErrors = new ArrayList<>();
        final Map<String, List<double[]>> broker = new TreeMap<>();

        private static final Pattern SENDING = Pattern.compile("Sending transactional request (\\w+)");
        private static final Pattern RECEIVED =
                Pattern.compile("Received transactional response (\\w+).*?errorCode=(-?\\d+)");
        private static final Pattern API_KEY = Pattern.compile("\"requestApiKey\":(\\d+)");
        private static final Pattern CLIENT = Pattern.compile("\"clientId\":\"([^\"]*)\"");
        private static final Pattern ERROR = Pattern.compile("\"response\":\\{.*?\"errorCode\":(-?\\d+)");
        private static final List<String> FIELDS = List.of(
                "requestQueueTimeMs",
                "localTimeMs",
                "remoteTimeMs",
                "responseQueueTimeMs",
                "sendTimeMs",
                "totalTimeMs");

        static Parsed of(Run run) {
            Parsed p = new Parsed();
            for (Capture.Line line : run.lines) {
                long t = line.nanos() - run.start;
                String s = line.text();
                if (s.contains("Completed request:")) {
                    Matcher api = API_KEY.matcher(s);
                    double[] row = times(s);
                    if (!api.find() || row == null) {
                        continue;
                    }
                    String name = API.getOrDefault(Integer.parseInt(api.group(1)), "api " + api.group(1));
                    Matcher client = CLIENT.matcher(s);
                    String who = client.find() && client.group(1).equals(run.clientId) ? "challenger" : "other";
                    Matcher error = ERROR.matcher(s);
                    String code = error.find() ? errorName(Integer.parseInt(error.group(1))) : "?";
                    p.broker
                            .computeIfAbsent(name + " (" + who + ") " + code, k -> new ArrayList<>())
                            .add(row);
                    continue;
                }
                if (!s.contains("clientId=" + run.clientId + ",")) {
                    continue;
                }
                Matcher m = SENDING.matcher(s);
                if (m.find()) {
                    if (m.group(1).startsWith("InitProducerId")) {
                        p.initSends.add(t);
                    }
                    continue;
                }
                m = RECEIVED.matcher(s);
                if (m.find()) {
                    String error = errorName(Integer.parseInt(m.group(2)));
                    if (m.group(1).startsWith("FindCoordinator") && p.fcRecv < 0) {
                        p.fcRecv = t;
                    } else if (m.group(1).startsWith("InitProducerId")) {
                        p.initRecvs.add(t);
                        p.initErrors.add(error);
                        if (error.equals("CONCURRENT_TRANSACTIONS")) {
                            p.lastCt = t;
                        }
                    }
                    continue;
                }
                if (s.contains("Initiating connection to node") && !s.contains("id: -1")) {
                    p.connStart = t;
                } else if (s.contains("Completed connection to node") && !s.contains("node -1") && p.connStart >= 0) {
                    // the ApiVersions exchange follows; "Recorded API versions" ends it
                } else if (s.contains("Recorded API versions for node") && !s.contains("node -1") && p.connStart >= 0) {
                    p.connDone = t;
                }
            }
            if (p.initRecvs.size() < p.initSends.size()) {
                p.initSends.subList(p.initRecvs.size(), p.initSends.size()).clear();
            }
            return p;
        }

        /** queue, local, remote, response queue, send, total (ms) from a request-log line; null if one is missing. */
        private static double[] times(String s) {
            double[] row = new double[FIELDS.size()];
            for (int k = 0; k < row.length; k++) {
                Matcher m =
                        Pattern.compile("\"" + FIELDS.get(k) + "\":([0-9.E-]+)").matcher(s);
                if (!m.find()) {
                    return null;
                }
                row[k] = Double.parseDouble(m.group(1));
            }
            return row;
        }
    }

    /** DescribeTransactions in a loop on its own thread: when the role's state first leaves PrepareCommit. */
    private static final class Probe {
        private final Thread thread;
        private volatile boolean stopped;
        private volatile long left = -1;

        Probe(Admin admin, String id, long from) {
            thread = new Thread(
                    () -> {
                        while (!stopped && left < 0) {
                            try {
                                TransactionDescription d = admin.describeTransactions(List.of(id))
                                        .all()
                                        .get()
                                        .get(id);
                                if (d.state() != TransactionState.PREPARE_COMMIT) {
                                    left = System.nanoTime() - from;
                                }
                            } catch (Exception e) {
                                return;
                            }
                        }
                    },
                    "ipb-probe");
            thread.setDaemon(true);
            thread.start();
        }

        long stop() throws InterruptedException {
            thread.join(5_000); // it stops by itself once the state has moved on
            stopped = true;
            return left;
        }
    }

    /** The broker's RequestMetrics histograms (count, sum) and error meters (count) for {@link #REQUESTS}. */
    private static Map<String, double[]> yammer() {
        // By reflection: the broker's Yammer classes are on the runtime class path only.
        Map<String, double[]> values = new HashMap<>();
        try {
            Object registry = Class.forName("org.apache.kafka.server.metrics.KafkaYammerMetrics")
                    .getMethod("defaultRegistry")
                    .invoke(null);
            Map<?, ?> all =
                    (Map<?, ?>) registry.getClass().getMethod("allMetrics").invoke(registry);
            for (Map.Entry<?, ?> e : all.entrySet()) {
                Object name = e.getKey();
                Class<?> n = name.getClass();
                String type = (String) n.getMethod("getType").invoke(name);
                String scope = (String) n.getMethod("getScope").invoke(name);
                String metricName = (String) n.getMethod("getName").invoke(name);
                if (!"RequestMetrics".equals(type) || scope == null) {
                    continue;
                }
                String[] parts = scope.split("\\."); // "request.InitProducerId" or "request.InitProducerId.error.NONE"
                if (parts.length < 2 || !REQUESTS.contains(parts[1])) {
                    continue;
                }
                Object metric = e.getValue();
                String kind = metric.getClass().getSimpleName();
                if (kind.equals("Histogram") && PARTS.contains(metricName) && parts.length == 2) {
                    values.put(parts[1] + " " + metricName, new double[] {
                        ((Number) metric.getClass().getMethod("count").invoke(metric)).doubleValue(),
                        ((Number) metric.getClass().getMethod("sum").invoke(metric)).doubleValue()
                    });
                } else if (kind.equals("Meter")
                        && metricName.equals("ErrorsPerSec")
                        && parts.length == 4
                        && !parts[3].equals("NONE")) {
                    values.put(parts[1] + " Errors:" + parts[3], new double[] {
                        ((Number) metric.getClass().getMethod("count").invoke(metric)).doubleValue(), 0
                    });
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not read the broker's Yammer metrics", e);
        }
        return values;
    }

    /** slf4j-simple's stderr, line by line: a window's lines are kept with the instant each arrived. */
    private static final class Capture extends OutputStream {
        record Line(long nanos, String text) {}

        private final PrintStream original;
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        private List<Line> lines = Collections.synchronizedList(new ArrayList<>());
        private volatile boolean active;

        Capture(PrintStream original) {
            this.original = original;
        }

        void begin(String clientId) {
            lines = Collections.synchronizedList(new ArrayList<>());
            active = true;
        }

        List<Line> end() {
            active = false;
            synchronized (lines) {
                return new ArrayList<>(lines);
            }
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                flushLine();
            } else {
                buffer.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] bytes, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(bytes[i]);
            }
        }

        private void flushLine() {
            long now = System.nanoTime();
            String line = buffer.toString(StandardCharsets.UTF_8);
            buffer.reset();
            if (line.contains(" DEBUG ") || line.contains(" TRACE ")) {
                if (active) {
                    lines.add(new Line(now, line));
                }
                return;
            }
            original.println(line);
        }
    }

    private static void transaction(KafkaProducer<byte[], byte[]> producer, String topic, boolean tombstone)
            throws Exception {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, 0, KEY, tombstone ? null : VALUE));
        producer.commitTransaction();
    }

    private static KafkaProducer<byte[], byte[]> transactional(
            Map<String, Object> connection, Role role, String clientId) {
        Map<String, Object> settings =
                new HashMap<>(KafkaCoordinationTransport.transactionalSettings(connection, role, TIMEOUT, TIMEOUT));
        settings.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-" + IDS.incrementAndGet());
        if (!clientId.equals("old") && !clientId.equals("holder")) {
            settings.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        }
        return new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static String errorName(int code) {
        return ERRORS.getOrDefault(code, "error " + code);
    }

    private static String quantiles(String label, List<Long> nanos) {
        if (nanos.isEmpty()) {
            return label + ": none";
        }
        return String.format(
                Locale.ROOT,
                "%s: p50 %.2f p90 %.2f max %.2f ms (n %d)",
                label,
                pct(nanos, 50) / 1e6,
                pct(nanos, 90) / 1e6,
                pct(nanos, 100) / 1e6,
                nanos.size());
    }

    private static double pct(List<Long> values, int p) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static List<Integer> ints(String csv) {
        List<Integer> values = new ArrayList<>();
        for (String s : csv.split(",")) {
            values.add(Integer.parseInt(s.trim()));
        }
        return values;
    }

    private static String arg(String[] args, String name, String fallback) {
        for (String a : args) {
            if (a.startsWith("--" + name + "=")) {
                return a.substring(name.length() + 3);
            }
        }
        return fallback;
    }
}
