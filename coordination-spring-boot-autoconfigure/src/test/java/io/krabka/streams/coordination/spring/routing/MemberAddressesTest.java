package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.members.MemberAddressBook;
import java.time.InstantSource;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** The address a member advertises: configured (placeholders resolved late), derived, or refused at startup. */
class MemberAddressesTest {

    private static final Supplier<MemberAddressBook> NO_BOOK = () -> {
        throw new AssertionError("the address book must not be opened");
    };

    private static MemberAddresses addresses(String configured, MockEnvironment environment) {
        return new MemberAddresses(
                MemberId.of("n1"), configured, environment, NO_BOOK, () -> false, InstantSource.system());
    }

    @Test
    void aConfiguredUrlHasItsPlaceholdersResolvedOnceThePortIsKnownAndLosesItsTrailingSlash() {
        MockEnvironment environment =
                new MockEnvironment().withProperty("local.server.port", "8081").withProperty("POD_IP", "10.0.0.7");
        assertThat(addresses("http://${POD_IP}:${local.server.port}/", environment)
                        .resolveUrl())
                .isEqualTo("http://10.0.0.7:8081");
    }

    @Test
    void theDefaultIsTheSchemeThisHostsAddressThePortAndTheContextPath() {
        MockEnvironment environment = new MockEnvironment()
                .withProperty("server.ssl.enabled", "true")
                .withProperty("server.servlet.context-path", "/api/");
        MemberAddresses addresses = addresses(null, environment);
        addresses.serverPort(8443);
        assertThat(addresses.resolveUrl()).isEqualTo("https://" + MemberAddresses.localHost() + ":8443/api");
    }

    @Test
    void aServerBoundToOneAddressAdvertisesThatAddress() {
        MemberAddresses addresses = addresses(null, new MockEnvironment().withProperty("server.address", "127.0.0.1"));
        addresses.serverPort(8080);
        assertThat(addresses.resolveUrl()).isEqualTo("http://127.0.0.1:8080");
        assertThat(MemberAddresses.host("0.0.0.0")).isEqualTo(MemberAddresses.localHost());
        assertThat(MemberAddresses.host("::1")).isEqualTo("[0:0:0:0:0:0:0:1]");
    }

    @Test
    void aUrlThatBreaksTheRulesOrCannotBeDerivedFailsStartupNamingTheProperty() {
        assertThatThrownBy(
                        () -> addresses("ftp://10.0.0.7", new MockEnvironment()).resolveUrl())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("krabka.coordination.advertised-url")
                .hasMessageContaining("http:// or https://");
        assertThatThrownBy(() -> addresses("http://${NOT_SET}:8080", new MockEnvironment())
                        .resolveUrl())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("NOT_SET");
        assertThatThrownBy(() -> addresses(null, new MockEnvironment()).resolveUrl())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no web server port");
    }

    @Test
    void anUnreachableClusterDoesNotFailStartupTheAddressIsTriedAgainInTheBackground() {
        java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
        MemberAddresses addresses = new MemberAddresses(
                MemberId.of("n1"),
                "http://127.0.0.1:8080",
                new MockEnvironment(),
                () -> {
                    attempts.incrementAndGet();
                    throw new io.krabka.streams.coordination.CoordinationException("the cluster did not answer");
                },
                () -> true,
                InstantSource.system());
        addresses.start();
        assertThat(attempts).hasValue(1);
        assertThat(addresses.isRunning()).isTrue();
        assertThat(addresses.active()).isFalse();
        assertThat(addresses.url()).isEmpty();
        addresses.stop();
        assertThat(addresses.isRunning()).isFalse();
    }

    @Test
    void withoutALeaderOnlyHandlerOrAConfiguredUrlNothingIsOpenedOrPublished() {
        MemberAddresses addresses = addresses(null, new MockEnvironment());
        addresses.serverPort(8080);
        addresses.start();
        assertThat(addresses.active()).isFalse();
        assertThat(addresses.url()).isEmpty();
        assertThat(addresses.lookup(MemberId.of("n2"))).isEmpty();
        addresses.stop();
    }
}
