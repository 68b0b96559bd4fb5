package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which forward and redirect targets a member allows: the default, the forms of an entry, bad entries. */
class TargetPolicyTest {

    private final TargetPolicy defaults = new TargetPolicy("http", List.of("loopback", "private"));

    @Test
    void byDefaultLoopbackAndPrivateAddressesOfThisMembersSchemeAreAllowed() {
        assertThat(defaults.refusal(URI.create("http://127.0.0.1:8080"))).isEmpty();
        assertThat(defaults.refusal(URI.create("http://[::1]:8080/x"))).isEmpty();
        assertThat(defaults.refusal(URI.create("http://10.2.3.4:8080"))).isEmpty();
        assertThat(defaults.refusal(URI.create("http://172.31.0.9"))).isEmpty();
        assertThat(defaults.refusal(URI.create("http://192.168.7.7"))).isEmpty();
        assertThat(defaults.refusal(URI.create("http://[fd12::7]:8080"))).isEmpty();
    }

    @Test
    void publicAddressesAnotherSchemeAndAddressesJustOutsideThePrivateBlocksAreRefused() {
        assertThat(defaults.refusal(URI.create("http://198.51.100.7:8080")))
                .get()
                .asString()
                .contains("198.51.100.7")
                .contains("allowed-targets");
        assertThat(defaults.refusal(URI.create("https://10.0.0.7:8443")))
                .get()
                .asString()
                .contains("scheme");
        assertThat(defaults.refusal(URI.create("http://172.32.0.1"))).isPresent();
        assertThat(defaults.refusal(URI.create("http://[2001:db8::1]"))).isPresent();
    }

    @Test
    void cidrBlocksAddressesHostNamesAndDomainSuffixesAreEntriesToo() {
        TargetPolicy policy = new TargetPolicy(
                "https", List.of("10.1.0.0/16", "203.0.113.5", "*.svc.cluster.local", "orders.internal"));
        assertThat(policy.refusal(URI.create("https://10.1.200.3"))).isEmpty();
        assertThat(policy.refusal(URI.create("https://10.2.0.1"))).isPresent();
        assertThat(policy.refusal(URI.create("https://203.0.113.5:9443"))).isEmpty();
        assertThat(policy.refusal(URI.create("https://orders-0.orders.default.svc.cluster.local:8443")))
                .isEmpty();
        assertThat(policy.refusal(URI.create("https://orders.internal"))).isEmpty();
        assertThat(policy.refusal(URI.create("https://evil.example"))).isPresent();
        assertThat(policy.refusal(URI.create("http://orders.internal"))).isPresent();
    }

    @Test
    void anEntryOfNoKnownFormFailsNamingIt() {
        assertThatThrownBy(() -> new TargetPolicy("http", List.of("loopback", "10.0.0.0/33")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"10.0.0.0/33\"")
                .hasMessageContaining("allowed-targets");
        assertThatThrownBy(() -> new TargetPolicy("http", List.of("http://10.0.0.1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"http://10.0.0.1\"");
    }

    @Test
    void aProblemIsRfc9457JsonWithItsPropertiesAndEscapedText() {
        String json = Problems.json(Problems.of(
                org.springframework.http.HttpStatus.SERVICE_UNAVAILABLE,
                Problems.NO_HOLDER,
                "No holder",
                "no \"member\" holds it",
                "orders"));
        assertThat(json)
                .isEqualTo("{\"type\":\"urn:krabka:routing:no-holder\",\"title\":\"No holder\",\"status\":503,"
                        + "\"detail\":\"no \\\"member\\\" holds it\",\"role\":\"orders\"}");
        assertThat(Problems.retryAfter(java.time.Duration.ofMillis(1200))).isEqualTo("2");
        assertThat(Problems.retryAfter(java.time.Duration.ZERO)).isEqualTo("1");
    }
}
