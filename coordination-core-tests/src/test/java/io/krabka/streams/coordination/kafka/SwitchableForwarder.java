package io.krabka.streams.coordination.kafka;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One address in front of one of several clusters, as a DNS name or a load balancer that
 * a disaster-recovery switch points elsewhere: a TCP relay that forwards every new
 * connection to the current target port, and on {@link #switchTo} closes every relayed
 * connection, so the clients connect again, to the new target. The brokers of every
 * target advertise this relay's port, so no client learns a broker's own address.
 */
final class SwitchableForwarder implements AutoCloseable {

    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile int target = -1;

    SwitchableForwarder() {
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", KafkaProcessCluster.freePort()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "switchable-forwarder");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The port clients connect to, and brokers advertise. */
    int port() {
        return server.getLocalPort();
    }

    /** Relays new connections to {@code port} and closes the ones relayed so far. */
    void switchTo(int port) {
        target = port;
        sockets.forEach(SwitchableForwarder::quietly);
        sockets.clear();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException closed) {
                return;
            }
            Socket upstream;
            try {
                upstream = new Socket("127.0.0.1", target);
            } catch (IOException | IllegalArgumentException noTarget) {
                quietly(client); // like a refused connection
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            pump(client, upstream);
            pump(upstream, client);
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // one side closed: close both
                    } finally {
                        quietly(from);
                        quietly(to);
                        sockets.remove(from);
                        sockets.remove(to);
                    }
                },
                "switchable-forwarder-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** Closes a socket (or the server socket) that may be closed already. */
    private static void quietly(java.io.Closeable socket) {
        try {
            socket.close();
        } catch (IOException alreadyClosed) {
            // nothing left to close
        }
    }

    @Override
    public void close() {
        quietly(server);
        sockets.forEach(SwitchableForwarder::quietly);
    }
}
