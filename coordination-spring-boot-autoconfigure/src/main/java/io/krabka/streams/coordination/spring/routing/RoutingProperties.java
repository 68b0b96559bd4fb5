package io.krabka.streams.coordination.spring.routing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Routing of {@link LeaderOnly} requests to the holder of their role. */
@ConfigurationProperties("krabka.coordination.routing")
public class RoutingProperties {

    /**
     * Whether a member that does not hold the role sends a @LeaderOnly request to the
     * holder, and members publish their addresses on the coordination topic's -members
     * topic. With false, such a member answers 503 instead (the holder still handles the
     * request) and @LeaderOnly roles are still checked at startup.
     */
    private boolean enabled = true;

    /**
     * What a member that does not hold the role does with a @LeaderOnly request: "forward"
     * (proxy it to the holder) or "redirect" (answer 307 with the holder's URL).
     */
    private RoutingMode mode = RoutingMode.FORWARD;

    /**
     * Where requests may be forwarded or redirected, besides being a holder's advertised
     * address: "loopback", "private" (10/8, 172.16/12, 192.168/16, fc00::/7), an address,
     * a CIDR block (10.1.0.0/16), a host name, or "*." and a domain suffix. The target's
     * scheme must be this member's.
     */
    private List<String> allowedTargets = new ArrayList<>(List.of("loopback", "private"));

    /**
     * How old this member's view of a role's holder may get before a @LeaderOnly request
     * reads the coordination topic again.
     */
    private Duration viewMaxAge = Duration.ofMillis(250);

    /**
     * How long a @LeaderOnly request waits for a grant when the role has no live lease (a
     * release or handover under way) before it is answered 503.
     */
    private Duration grantWait = Duration.ofSeconds(1);

    /**
     * How long a forward waits to connect to the holder.
     */
    private Duration connectTimeout = Duration.ofSeconds(2);

    /**
     * How long a forward waits for the holder's answer to begin.
     */
    private Duration responseTimeout = Duration.ofSeconds(30);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public RoutingMode getMode() {
        return mode;
    }

    public void setMode(RoutingMode mode) {
        this.mode = mode;
    }

    public List<String> getAllowedTargets() {
        return allowedTargets;
    }

    public void setAllowedTargets(List<String> allowedTargets) {
        this.allowedTargets = allowedTargets;
    }

    public Duration getViewMaxAge() {
        return viewMaxAge;
    }

    public void setViewMaxAge(Duration viewMaxAge) {
        this.viewMaxAge = viewMaxAge;
    }

    public Duration getGrantWait() {
        return grantWait;
    }

    public void setGrantWait(Duration grantWait) {
        this.grantWait = grantWait;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public Duration getResponseTimeout() {
        return responseTimeout;
    }

    public void setResponseTimeout(Duration responseTimeout) {
        this.responseTimeout = responseTimeout;
    }
}
