package io.krabka.coordination.chaos.harness;

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
 * A TCP relay between one member and one broker listener, so the harness can cut that
 * member off without touching anyone else. A cut is a black hole, like a dropped
 * network: open connections stay open but carry nothing, new ones are accepted and
 * carry nothing, so the member's requests time out rather than fail fast. Restoring
 * closes the black-holed connections (the member reconnects) and relays again.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int target;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;
    private volatile boolean closed;

    /** One accepted connection and, unless it was accepted during a cut, its upstream. */
    private final class Link {
        final Socket client;
        final Socket upstream;
        volatile boolean blackholed;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
            this.blackholed = upstream == null;
        }

        void close() {
            links.remove(this);
            quietly(client);
            quietly(upstream);
        }
    }

    TcpProxy(int listenPort, int target, String name) {
        this.target = target;
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress("127.0.0.1", listenPort));
        } catch (IOException e) {
            throw new UncheckedIOException("proxy " + name + " cannot listen on " + listenPort, e);
        }
        Thread acceptor = new Thread(this::accept, "proxy-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    void cut() {
        cut = true;
        links.forEach(link -> link.blackholed = true);
    }

    void restore() {
        cut = false;
        links.stream().filter(link -> link.blackholed).toList().forEach(Link::close);
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket upstream = null;
            if (!cut) {
                try {
                    upstream = new Socket("127.0.0.1", target);
                } catch (IOException brokerDown) {
                    quietly(client); // like a refused connection: the broker is not there
                    continue;
                }
            }
            Link link = new Link(client, upstream);
            links.add(link);
            pump(link, client, upstream);
            if (upstream != null) {
                pump(link, upstream, client);
            }
        }
    }

    private void pump(Link link, Socket from, Socket to) {
        Thread thread = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream()) {
                        OutputStream out = to == null ? null : to.getOutputStream();
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            if (!link.blackholed && out != null) {
                                out.write(buffer, 0, n);
                                out.flush();
                            }
                        }
                    } catch (IOException e) {
                        // one side closed: close both
                    } finally {
                        link.close();
                    }
                },
                "proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void quietly(Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        links.forEach(Link::close);
    }
}
