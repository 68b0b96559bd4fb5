package io.krabka.coordination.chaos.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The external device the members dispatch to: it runs in the harness JVM (it is not
 * what is under test), keeps the highest term it has accepted and refuses commands of a
 * lower one, like the sample app's device. It records every delivery in arrival order.
 */
final class Device implements AutoCloseable {

    /** One command as it reached the device. */
    record Delivery(long at, String member, long term, long seq, boolean accepted) {}

    private final ServerSocket server;
    private final List<Delivery> history = new ArrayList<>();
    private long highestTerm = -1;

    Device() {
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "device");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    synchronized List<Delivery> history() {
        return List.copyOf(history);
    }

    private synchronized boolean deliver(String member, long term, long seq) {
        boolean accepted = term >= highestTerm;
        if (accepted) {
            highestTerm = term;
        }
        history.add(new Delivery(System.currentTimeMillis(), member, term, seq, accepted));
        return accepted;
    }

    private void accept() {
        while (true) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException closed) {
                return;
            }
            Thread connection = new Thread(() -> serve(socket), "device-connection");
            connection.setDaemon(true);
            connection.start();
        }
    }

    private void serve(Socket socket) {
        try (socket;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] parts = line.split(" ");
                boolean accepted = deliver(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]));
                out.println(accepted ? "accepted" : "rejected");
            }
        } catch (IOException | RuntimeException e) {
            // the member died or was cut; it reconnects
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
