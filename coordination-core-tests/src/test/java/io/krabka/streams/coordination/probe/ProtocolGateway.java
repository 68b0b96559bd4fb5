package io.krabka.streams.coordination.probe;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * A fake Kafka gateway: a TCP proxy in front of one broker listener that reads the Kafka
 * protocol's frames with kafka-clients' own classes and answers some requests itself,
 * as a gateway that is not a Kafka broker might: {@code answer} gets each parsed request
 * and returns the response to send instead of forwarding it, or empty to forward it.
 * Answers go back in request order on each connection, as Kafka's clients require.
 * The broker's listener must advertise this proxy's port, so that every connection of
 * the clients, not only the bootstrap one, passes through it.
 */
final class ProtocolGateway implements AutoCloseable {

    private final ServerSocket server;
    private final Function<AbstractRequest, Optional<AbstractResponse>> answer;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final List<String> answered = new CopyOnWriteArrayList<>();
    private volatile int target = -1;

    ProtocolGateway(Function<AbstractRequest, Optional<AbstractResponse>> answer) {
        this.answer = answer;
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts relaying to the broker's port; returns the port to advertise. */
    int relayTo(int brokerPort) {
        if (target < 0) {
            target = brokerPort;
            daemon(this::accept, "gateway-accept").start();
        }
        return server.getLocalPort();
    }

    /** What the gateway answered itself: "API_KEY vN -> ERROR". */
    List<String> answered() {
        return List.copyOf(answered);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket("127.0.0.1", target);
                sockets.add(client);
                sockets.add(upstream);
                BlockingQueue<CompletableFuture<byte[]>> order = new LinkedBlockingQueue<>();
                Map<Integer, CompletableFuture<byte[]>> forwarded = new ConcurrentHashMap<>();
                daemon(() -> requests(client, upstream, order, forwarded), "gateway-requests")
                        .start();
                daemon(() -> responses(upstream, forwarded), "gateway-responses")
                        .start();
                daemon(() -> writer(client, order), "gateway-writer").start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void requests(
            Socket client,
            Socket upstream,
            BlockingQueue<CompletableFuture<byte[]>> order,
            Map<Integer, CompletableFuture<byte[]>> forwarded) {
        try {
            DataInputStream in = new DataInputStream(client.getInputStream());
            DataOutputStream out = new DataOutputStream(upstream.getOutputStream());
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                ByteBuffer buffer = ByteBuffer.wrap(frame);
                RequestHeader header = RequestHeader.parse(buffer);
                Optional<AbstractResponse> own = Optional.empty();
                if (header.apiKey() != ApiKeys.API_VERSIONS) {
                    AbstractRequest request = AbstractRequest.parseRequest(
                                    header.apiKey(), header.apiVersion(), new ByteBufferAccessor(buffer))
                            .request;
                    own = answer.apply(request);
                }
                CompletableFuture<byte[]> slot = new CompletableFuture<>();
                order.put(slot);
                if (own.isPresent()) {
                    answered.add(header.apiKey() + " v" + header.apiVersion() + " -> "
                            + own.get().errorCounts().keySet());
                    ByteBuffer body = RequestUtils.serialize(
                            header.toResponseHeader().data(),
                            header.toResponseHeader().headerVersion(),
                            own.get().data(),
                            header.apiVersion());
                    byte[] bytes = new byte[body.remaining()];
                    body.get(bytes);
                    slot.complete(bytes);
                } else {
                    forwarded.put(header.correlationId(), slot);
                    out.writeInt(frame.length);
                    out.write(frame);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // one side closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            quietly(client);
            quietly(upstream);
        }
    }

    private void responses(Socket upstream, Map<Integer, CompletableFuture<byte[]>> forwarded) {
        try {
            DataInputStream in = new DataInputStream(upstream.getInputStream());
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                CompletableFuture<byte[]> slot =
                        forwarded.remove(ByteBuffer.wrap(frame).getInt());
                if (slot != null) {
                    slot.complete(frame);
                }
            }
        } catch (IOException e) {
            // one side closed
        } finally {
            quietly(upstream);
        }
    }

    /** Sends each answer once every answer before it on the connection went. */
    private void writer(Socket client, BlockingQueue<CompletableFuture<byte[]>> order) {
        try {
            DataOutputStream out = new DataOutputStream(client.getOutputStream());
            while (!client.isClosed()) {
                byte[] frame = order.take().join();
                out.writeInt(frame.length);
                out.write(frame);
                out.flush();
            }
        } catch (IOException e) {
            // closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            quietly(client);
        }
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void quietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        quietly(server);
        sockets.forEach(ProtocolGateway::quietly);
    }
}
