package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.reactive.context.ReactiveWebServerApplicationContext;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link LeaderOnly} on Spring WebFlux: the cases of {@link LeaderOnlyRoutingITBase}, on
 * three Reactor Netty members whose handlers write with guarded sends that do not block
 * the event loop (so a deposed holder's refusal arrives through the handler's
 * {@code Mono}), and what only a reactive forward shows: a body larger than any codec's
 * buffer goes through both ways, and a streamed answer reaches the caller event by event.
 */
class LeaderOnlyWebFluxRoutingIT extends LeaderOnlyRoutingITBase {

    static final CompletableFuture<Void> SECOND_EVENT = new CompletableFuture<>();

    LeaderOnlyWebFluxRoutingIT() {
        super(WebApplicationType.REACTIVE, Commands.class);
    }

    @RestController
    static class Commands extends RoutedCommands {

        /** Writes who handled the command, under which term, with a guarded write that does not block the event loop. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/commands/{id}")
        Mono<String> handle(
                @PathVariable String id,
                @RequestBody String body,
                GuardedSender<String, String> sender,
                Leadership leadership,
                @RequestHeader(value = "Authorization", required = false) String authorization,
                @RequestHeader(value = "Keep-Alive", required = false) String keepAlive,
                @RequestHeader(value = RoutingHeaders.FORWARDED_BY, required = false) String forwardedBy) {
            return Mono.fromFuture(sender.sendAsync(handled, id, leadership.member() + "@" + leadership.term()))
                    .thenReturn(leadership.member() + " " + leadership.term() + " body=" + body + " auth="
                            + authorization + " keep-alive=" + keepAlive + " via=" + forwardedBy);
        }

        /** Waits for the test, without blocking, before it writes: the test deposes the holder meanwhile. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/slow/{id}")
        Mono<String> slow(@PathVariable String id, GuardedSender<String, String> sender, Leadership leadership) {
            slowEntered.countDown();
            return Mono.fromFuture(slowProceed)
                    .then(Mono.defer(() -> Mono.fromFuture(
                            sender.sendAsync(handled, id, leadership.member() + "@" + leadership.term()))))
                    .thenReturn("written");
        }

        /** Answers the body it gets as it reads it: a large body goes through a forward both ways. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/echo")
        Flux<DataBuffer> echo(@RequestBody Flux<DataBuffer> body) {
            return body;
        }

        /** Sends one event, then the second only once the test saw the first: the answer streams. */
        @LeaderOnly(role = ROLE)
        @PostMapping(path = "/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
        Flux<String> stream() {
            return Flux.concat(Mono.just("first"), Mono.fromFuture(SECOND_EVENT).thenReturn("second"));
        }
    }

    /** Reactor Netty, as spring-boot-starter-webflux runs it (Tomcat is on this classpath for the MVC tests). */
    @Override
    Map<String, String> stackProperties() {
        return Map.of(
                "spring.autoconfigure.exclude",
                "org.springframework.boot.tomcat.autoconfigure.reactive.TomcatReactiveWebServerAutoConfiguration");
    }

    @Test
    @Order(2)
    void aLargeBodyAndAStreamedAnswerPassThroughAForward() throws Exception {
        assertThat(((ReactiveWebServerApplicationContext) member("n1"))
                        .getWebServer()
                        .getClass()
                        .getSimpleName())
                .isEqualTo("NettyWebServer");
        String holder = awaitHolder();
        String other = forwardingNonHolder();
        String large = "0123456789abcdef".repeat(64 * 1024); // 1 MiB, past any codec's in-memory limit
        HttpResponse<String> echoed = post(other, "/echo", large, Map.of());
        assertThat(echoed.statusCode()).isEqualTo(200);
        assertThat(echoed.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
        assertThat(echoed.body()).hasSize(large.length()).isEqualTo(large);

        // The first event reaches the caller through the forward while the holder's answer is still open.
        HttpResponse<Stream<String>> streamed = http().sendAsync(
                        HttpRequest.newBuilder(uri(other, "/stream"))
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofLines())
                .get(10, TimeUnit.SECONDS);
        assertThat(streamed.statusCode()).isEqualTo(200);
        assertThat(streamed.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/event-stream");
        try (Stream<String> lines = streamed.body()) {
            Iterator<String> events =
                    lines.filter(line -> line.startsWith("data:")).iterator();
            assertThat(CompletableFuture.supplyAsync(events::next).get(10, TimeUnit.SECONDS))
                    .isEqualTo("data:first");
            SECOND_EVENT.complete(null);
            assertThat(CompletableFuture.supplyAsync(events::next).get(10, TimeUnit.SECONDS))
                    .isEqualTo("data:second");
        }
    }
}
