package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.OnLeadershipRegistry;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.web.method.HandlerMethod;

/**
 * The {@link LeaderOnly} handlers of the application and their roles, checked at startup
 * by the web layer's scan: a role that is not in {@code krabka.coordination.roles} fails
 * startup, naming the handler.
 */
public final class LeaderOnlyHandlers {

    private final Set<String> configuredRoles;
    private final PropertyResolver placeholders;
    private final Map<List<Object>, Optional<Role>> roles = new ConcurrentHashMap<>();
    private volatile boolean any;

    public LeaderOnlyHandlers(Set<String> configuredRoles, PropertyResolver placeholders) {
        this.configuredRoles = Set.copyOf(configuredRoles);
        this.placeholders = placeholders;
    }

    /**
     * The role of a handler method: its own {@link LeaderOnly}, else its class's; empty
     * when it has neither.
     *
     * @throws IllegalStateException when the role is not configured
     */
    public Optional<Role> roleOf(Method method, Class<?> beanType) {
        return roles.computeIfAbsent(List.of(method, beanType), key -> resolve(method, beanType));
    }

    private Optional<Role> resolve(Method method, Class<?> beanType) {
        LeaderOnly annotation = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
        if (annotation == null) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(beanType, LeaderOnly.class);
        }
        if (annotation == null) {
            return Optional.empty();
        }
        String where = beanType.getName() + "." + method.getName() + "()";
        String role = placeholders.resolveRequiredPlaceholders(annotation.role());
        Role valid;
        try {
            valid = Role.of(role);
        } catch (IllegalArgumentException invalid) {
            // Before the configured check: adding an invalid name to krabka.coordination.roles fails too.
            throw new IllegalStateException(
                    "@LeaderOnly(role = \"" + role + "\") on " + where + " does not name a valid role ("
                            + invalid.getMessage() + "): set role to one of krabka.coordination.roles "
                            + configuredRoles,
                    invalid);
        }
        if (!configuredRoles.contains(role)) {
            throw new IllegalStateException(
                    "@LeaderOnly(role = \"" + role + "\") on " + where + " names a role that is not "
                            + "configured: add it to krabka.coordination.roles (configured: " + configuredRoles + ")");
        }
        any = true;
        return Optional.of(valid);
    }

    /**
     * Checks one handler method at startup: its role, and that a {@link Leadership} or
     * {@link GuardedSender} parameter only appears on a {@link LeaderOnly} handler.
     *
     * @throws IllegalStateException naming the handler and what is wrong
     */
    public void check(Method method, Class<?> beanType) {
        boolean leaderOnly = roleOf(method, beanType).isPresent();
        if (!leaderOnly) {
            for (Class<?> parameter : method.getParameterTypes()) {
                if (parameter == Leadership.class || parameter == GuardedSender.class) {
                    throw new IllegalStateException(
                            "Handler " + beanType.getName() + "." + method.getName() + "() takes a "
                                    + parameter.getSimpleName()
                                    + ", which only a @LeaderOnly handler gets: annotate it (or its "
                                    + "class) with @LeaderOnly(role = ...)");
                }
            }
        }
    }

    /**
     * Checks every handler method of the web layer at startup ({@link #check}), and marks
     * each {@link LeaderOnly} role as served by requests, so it is not idle
     * ({@code krabka.coordination.require-work}).
     *
     * @throws IllegalStateException naming the first handler that is wrong
     */
    void checkAtStartup(Collection<HandlerMethod> methods, OnLeadershipRegistry registry) {
        for (HandlerMethod method : methods) {
            check(method.getMethod(), method.getBeanType());
            roleOf(method.getMethod(), method.getBeanType()).ifPresent(registry::servedByRequests);
        }
    }

    /** Whether the application has a {@link LeaderOnly} handler (known once the web layer's scan ran). */
    public boolean any() {
        return any;
    }
}
