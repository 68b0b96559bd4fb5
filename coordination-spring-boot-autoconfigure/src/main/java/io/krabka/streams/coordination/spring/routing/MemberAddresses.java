package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.members.MemberAddress;
import io.krabka.streams.coordination.members.MemberAddressBook;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;

/**
 * This member's advertised address and everyone's, on {@code <coordination topic>-members}.
 * Active only where something routes ({@link LeaderOnly} handlers, or
 * {@code krabka.coordination.advertised-url} set): then, once the web server listens and
 * before the member contends, it writes this member's address; on a graceful stop, after
 * the member stopped contending, it writes a tombstone.
 */
public final class MemberAddresses
        implements SmartLifecycle, ApplicationListener<WebServerInitializedEvent>, DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(MemberAddresses.class);
    /** How often a member that could not write its address tries again. */
    private static final java.time.Duration RETRY = java.time.Duration.ofSeconds(5);

    private final MemberId member;
    private final String configuredUrl;
    private final Environment environment;
    private final Supplier<MemberAddressBook> opener;
    private final BooleanSupplier needed;
    private final InstantSource clock;
    private volatile int port = -1;
    private volatile MemberAddressBook book;
    // Open once the book is (or start found routing not needed here): the web server answers
    // before this late lifecycle bean starts, and a request then must not find "no address".
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile String url;
    private volatile boolean running;

    /**
     * @param configuredUrl {@code krabka.coordination.advertised-url}, or null for the default
     * @param opener opens the address book (the topic and its clients), once, when needed
     * @param needed whether anything routes: asked when the application starts
     */
    public MemberAddresses(
            MemberId member,
            String configuredUrl,
            Environment environment,
            Supplier<MemberAddressBook> opener,
            BooleanSupplier needed,
            InstantSource clock) {
        this.member = member;
        this.configuredUrl = configuredUrl == null || configuredUrl.isBlank() ? null : configuredUrl.trim();
        this.environment = environment;
        this.opener = opener;
        this.needed = needed;
        this.clock = clock;
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        // The management server (a port of its own) has a namespace; the application's has none.
        if (event.getApplicationContext().getServerNamespace() == null) {
            serverPort(event.getWebServer().getPort());
        }
    }

    /** The port the application's web server listens on. */
    void serverPort(int listening) {
        this.port = listening;
    }

    /** Whether addresses are published and read here. */
    public boolean active() {
        return book != null;
    }

    /** The address this member advertises, once it did. */
    public Optional<String> url() {
        return Optional.ofNullable(url);
    }

    /** The address {@code other} advertises, as last read; empty when routing is off here or it advertises none. */
    public Optional<MemberAddress> lookup(MemberId other) {
        MemberAddressBook current = book;
        return current == null ? Optional.empty() : current.lookup(other);
    }

    /**
     * As {@link #lookup}, but a member that started a moment ago first waits, up to
     * {@code wait} in all, until its book is open and read the addresses topic to its end:
     * until then a holder that advertised long ago would look like one that advertises
     * nothing (the web server answers before this bean starts).
     */
    public Optional<MemberAddress> lookup(MemberId other, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        try {
            MemberAddressBook current = book;
            if (current == null && started.await(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                current = book;
            }
            if (current == null) {
                return Optional.empty();
            }
            Optional<MemberAddress> found = current.lookup(other);
            if (found.isPresent()) {
                return found;
            }
            if (current.awaitCaughtUp(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                return current.lookup(other);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        if (configuredUrl == null && !needed.getAsBoolean()) {
            log.debug(
                    "No @LeaderOnly handler and no krabka.coordination.advertised-url: member {} advertises no address",
                    member);
            started.countDown();
            return;
        }
        String advertised = resolveUrl();
        try {
            publish(advertised);
        } catch (CoordinationException e) {
            // As the rest of the starter: an unreachable cluster does not fail startup. Until the
            // address is written, other members answer this role's requests with 503.
            log.warn(
                    "Member {} could not advertise {} yet, and tries again every {} s: {}",
                    member,
                    advertised,
                    RETRY.toSeconds(),
                    e.getMessage());
            retry(advertised);
        }
    }

    private synchronized void publish(String advertised) {
        if (!running) {
            return;
        }
        if (book == null) {
            book = opener.get();
            started.countDown();
        }
        book.publish(new MemberAddress(member, advertised, clock.millis()));
        url = advertised;
        log.info("Member {} advertises {} on {}", member, advertised, book.topic());
    }

    private void retry(String advertised) {
        Thread retrier = new Thread(
                () -> {
                    while (running && url == null) {
                        try {
                            Thread.sleep(RETRY.toMillis()); // a retry backoff
                            publish(advertised);
                        } catch (InterruptedException e) {
                            return;
                        } catch (CoordinationException e) {
                            log.debug("Member {} could not advertise {} yet: {}", member, advertised, e.getMessage());
                        }
                    }
                },
                "krabka-member-address");
        retrier.setDaemon(true);
        retrier.start();
    }

    /** The address to advertise: the configured one with its placeholders resolved, or the default; checked. */
    String resolveUrl() {
        String advertised;
        if (configuredUrl != null) {
            try {
                advertised = environment.resolveRequiredPlaceholders(configuredUrl);
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(
                        "krabka.coordination.advertised-url \"" + configuredUrl + "\" cannot be " + "resolved: "
                                + e.getMessage(),
                        e);
            }
        } else {
            advertised = defaultUrl();
        }
        // A trailing slash would double the one of every routed path.
        while (advertised.endsWith("/") && !advertised.endsWith("//")) {
            advertised = advertised.substring(0, advertised.length() - 1);
        }
        Optional<String> problem = MemberAddress.urlProblem(advertised);
        if (problem.isEmpty()) {
            try {
                if (URI.create(advertised).getHost() == null) {
                    problem = Optional.of("has no host a URI parser can read");
                }
            } catch (IllegalArgumentException e) {
                problem = Optional.of("is not a URI: " + e.getMessage());
            }
        }
        if (problem.isPresent()) {
            throw new IllegalStateException("krabka.coordination.advertised-url \"" + advertised + "\" " + problem.get()
                    + (configuredUrl == null
                            ? " (derived: set krabka.coordination.advertised-url, e.g. http://${POD_IP}:8080)"
                            : ""));
        }
        return advertised;
    }

    /** The scheme, the address the server listens on (server.address, else this host's), its port and the context path. */
    private String defaultUrl() {
        if (port <= 0) {
            throw new IllegalStateException(
                    "krabka.coordination.advertised-url is not set and no web server port is known "
                            + "to derive it from: set it, e.g. http://${POD_IP}:8080");
        }
        boolean ssl = environment.getProperty("server.ssl.enabled", Boolean.class, false)
                || environment.getProperty("server.ssl.bundle") != null;
        String contextPath = environment.getProperty(
                "server.servlet.context-path", environment.getProperty("spring.webflux.base-path", ""));
        if (contextPath.endsWith("/")) {
            contextPath = contextPath.substring(0, contextPath.length() - 1);
        }
        return (ssl ? "https" : "http") + "://" + host(environment.getProperty("server.address")) + ":" + port
                + contextPath;
    }

    /** {@code server.address} when the server listens on one address only, else this host's address. */
    static String host(String serverAddress) {
        if (serverAddress == null || serverAddress.isBlank()) {
            return localHost();
        }
        InetAddress bound;
        try {
            bound = InetAddress.getByName(serverAddress.trim());
        } catch (UnknownHostException e) {
            return localHost();
        }
        if (bound.isAnyLocalAddress()) {
            return localHost();
        }
        return bound instanceof Inet6Address ? "[" + bound.getHostAddress() + "]" : bound.getHostAddress();
    }

    /** The address this host's name resolves to (in Kubernetes, the pod's IP), or loopback when it does not resolve. */
    static String localHost() {
        InetAddress address;
        try {
            address = InetAddress.getLocalHost();
        } catch (UnknownHostException e) {
            address = InetAddress.getLoopbackAddress();
        }
        String text = address.getHostAddress();
        int zone = text.indexOf('%');
        if (zone >= 0) {
            text = text.substring(0, zone);
        }
        return address instanceof Inet6Address ? "[" + text + "]" : text;
    }

    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        MemberAddressBook current = book;
        if (current != null && url != null) {
            try {
                current.withdraw(member);
                log.info("Member {} withdrew its address from {}", member, current.topic());
            } catch (CoordinationException e) {
                log.warn(
                        "Member {} could not withdraw its address from {}: {}",
                        member,
                        current.topic(),
                        e.getMessage());
            }
            url = null;
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Just before the leadership loop starts, just after it stops: the address is there before the member may hold a role. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1001;
    }

    @Override
    public void destroy() {
        MemberAddressBook current = book;
        if (current != null) {
            current.close();
        }
    }
}
