package io.krabka.streams.coordination.kafka;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP proxy in front of one broker listener that reads the Kafka protocol's frames,
 * so it can lose the answer to one commit: armed for one client's next EndTxn (by
 * {@code client.id}), it forwards the request (the coordinator commits), swallows its
 * answer and closes that connection, then holds every request of that client, on any
 * connection, until {@link #release()}. Everything else is relayed unchanged.
 *
 * <p>Requests are parsed as {@code int32 size, int16 api_key, int16 api_version, int32
 * correlation_id, string client_id} (request header v1 and v2), responses as {@code int32
 * size, int32 correlation_id}. It also keeps the error code of every EndTxn answer the
 * armed client got, so a test can tell what the coordinator said to a resent commit.
 * {@link #holdFrom} holds one client's requests from its first request of a kind instead.
 */
final class EndTxnAnswerDropper implements AutoCloseable {

    static final short END_TXN = 26;
    static final short PRODUCE = 0;

    private final ServerSocket server;
    private final int target;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private volatile Armed armed;
    private volatile boolean closed;

    /** One arming: whose EndTxn, and what became of it. */
    private static final class Armed {
        final String clientId;
        final CompletableFuture<Void> dropped = new CompletableFuture<>();
        final CountDownLatch released = new CountDownLatch(1);
        final List<Short> held = new CopyOnWriteArrayList<>();
        final List<String> endTxnAnswers = new CopyOnWriteArrayList<>();
        volatile boolean holding;
        // Holding begins at the first request with this api key (-1: not by hold()).
        volatile short holdFrom = -1;

        Armed(String clientId) {
            this.clientId = clientId;
        }
    }

    /** One client connection and its upstream to the broker. */
    private final class Link {
        final Socket client;
        final Socket upstream;
        // Requests of the armed client whose answers matter: correlation id -> api version.
        final Map<Integer, Short> endTxns = new ConcurrentHashMap<>();
        volatile int swallow = -1;
        volatile Armed swallowFor;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void close() {
            links.remove(this);
            quietly(client);
            quietly(upstream);
        }
    }

    EndTxnAnswerDropper(int target) {
        this.target = target;
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        daemon(this::accept, "end-txn-proxy-accept").start();
    }

    int port() {
        return server.getLocalPort();
    }

    /**
     * Loses the answer to the next EndTxn of the client with this {@code client.id}; any
     * earlier arming is released.
     */
    void arm(String clientId) {
        Armed before = armed;
        armed = new Armed(clientId);
        if (before != null) {
            release(before);
        }
    }

    /**
     * Holds every request of the client with this {@code client.id}, on every connection,
     * from its first request with {@code apiKey} until {@link #release()}: from its first
     * Produce, no record it sends is acknowledged meanwhile. Any earlier arming is released.
     */
    void holdFrom(String clientId, short apiKey) {
        Armed before = armed;
        Armed holding = new Armed(clientId);
        holding.holdFrom = apiKey;
        armed = holding;
        if (before != null) {
            release(before);
        }
    }

    /** Completes once the answer to the armed EndTxn was swallowed and its connection closed. */
    CompletableFuture<Void> endTxnAnswerDropped() {
        return armed.dropped;
    }

    /** Lets the held requests of the armed client through, and every later one. */
    void release() {
        Armed current = armed;
        if (current != null) {
            release(current);
        }
    }

    private static void release(Armed armed) {
        armed.holding = false;
        armed.released.countDown();
    }

    /** The api keys of the armed client's requests held back, in the order they arrived. */
    List<Short> heldRequests() {
        return List.copyOf(armed.held);
    }

    /** Each EndTxn answer the armed client got (the swallowed one included): version and error code. */
    List<String> endTxnAnswers() {
        return List.copyOf(armed.endTxnAnswers);
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket upstream;
            try {
                upstream = new Socket("127.0.0.1", target);
            } catch (IOException brokerDown) {
                quietly(client);
                continue;
            }
            Link link = new Link(client, upstream);
            links.add(link);
            daemon(() -> requests(link), "end-txn-proxy-requests").start();
            daemon(() -> responses(link), "end-txn-proxy-responses").start();
        }
    }

    /** Client to broker, a frame at a time. */
    private void requests(Link link) {
        try {
            DataInputStream in = new DataInputStream(link.client.getInputStream());
            DataOutputStream out = new DataOutputStream(link.upstream.getOutputStream());
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                ByteBuffer header = ByteBuffer.wrap(frame);
                short apiKey = header.getShort();
                short apiVersion = header.getShort();
                int correlationId = header.getInt();
                String clientId = clientId(header);
                Armed current = armed;
                boolean ofArmed = current != null && current.clientId.equals(clientId);
                if (ofArmed && apiKey == current.holdFrom && current.released.getCount() > 0) {
                    current.holding = true;
                }
                if (ofArmed && current.holding) {
                    current.held.add(apiKey);
                    current.released.await();
                }
                if (ofArmed && apiKey == END_TXN) {
                    link.endTxns.put(correlationId, apiVersion);
                    if (!current.dropped.isDone() && link.swallow < 0 && current.released.getCount() > 0) {
                        // Set before the request leaves, so the answer cannot overtake it.
                        link.swallowFor = current;
                        link.swallow = correlationId;
                        current.holding = true;
                    }
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            link.close();
        }
    }

    /** Broker to client, a frame at a time. */
    private void responses(Link link) {
        try {
            DataInputStream in = new DataInputStream(link.upstream.getInputStream());
            DataOutputStream out = new DataOutputStream(link.client.getOutputStream());
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                ByteBuffer body = ByteBuffer.wrap(frame);
                int correlationId = body.getInt();
                Short endTxnVersion = link.endTxns.remove(correlationId);
                Armed current = armed;
                if (endTxnVersion != null && current != null) {
                    current.endTxnAnswers.add("EndTxn v" + endTxnVersion + " error " + endTxnError(body, endTxnVersion)
                            + (correlationId == link.swallow ? " (dropped)" : ""));
                }
                if (correlationId == link.swallow) {
                    // The commit landed (or will); its answer never reaches the client, and neither does the
                    // connection.
                    link.close();
                    link.swallowFor.dropped.complete(null);
                    return;
                }
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed
        } finally {
            link.close();
        }
    }

    /** The client_id of request header v1 and v2: int16 length, then UTF-8 (null when -1). */
    private static String clientId(ByteBuffer header) {
        if (header.remaining() < 2) {
            return null;
        }
        short length = header.getShort();
        if (length < 0 || length > header.remaining()) {
            return null;
        }
        return new String(header.array(), header.position(), length, StandardCharsets.UTF_8);
    }

    /**
     * The error code of an EndTxn response after its correlation id: flexible from version
     * 3 (response header v1: tagged fields), then throttle_time_ms and error_code.
     */
    private static short endTxnError(ByteBuffer body, short version) {
        if (version >= 3) {
            int tags = unsignedVarint(body);
            for (int i = 0; i < tags; i++) {
                unsignedVarint(body);
                int size = unsignedVarint(body);
                body.position(body.position() + size);
            }
        }
        body.getInt(); // throttle_time_ms
        return body.getShort();
    }

    private static int unsignedVarint(ByteBuffer buffer) {
        int value = 0;
        int shift = 0;
        byte b;
        do {
            b = buffer.get();
            value |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return value;
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void quietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        release();
        quietly(server);
        links.forEach(Link::close);
    }

    private static void quietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
