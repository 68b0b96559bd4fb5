package io.krabka.streams.coordination.spring.routing;

import java.lang.reflect.Method;

/**
 * Startup fails with this when {@link LeaderOnly} is on a bean method (or class) that is
 * no request handler of a Spring MVC or WebFlux handler mapping, a {@code @Scheduled} job
 * say: there it would do nothing, and every member would run the "leader-only" code.
 * Leader-only work is {@code @OnLeadership}'s.
 */
public final class LeaderOnlyMisplacedException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String beanName;
    private final Class<?> beanType;
    private final transient Method method;

    LeaderOnlyMisplacedException(String beanName, Class<?> beanType, Method method, String roleProblem) {
        super(message(beanName, beanType, method, roleProblem));
        this.beanName = beanName;
        this.beanType = beanType;
        this.method = method;
    }

    private static String message(String beanName, Class<?> beanType, Method method, String roleProblem) {
        String where = method == null
                ? "class " + beanType.getName() + " (bean '" + beanName + "'), which has no request handler method"
                : "method " + beanType.getName() + "." + method.getName() + "() of bean '" + beanName
                        + "', which is no request handler";
        return "@LeaderOnly on " + where + ": @LeaderOnly routes web requests to the holder; on a method that is "
                + "no request handler it does nothing: use @OnLeadership for leader-only work"
                + (roleProblem == null ? "" : ". Its role is wrong too: " + roleProblem);
    }

    /** The bean's name. */
    public String getBeanName() {
        return beanName;
    }

    /** The bean's class (the user class, not a proxy's). */
    public Class<?> getBeanType() {
        return beanType;
    }

    /** The annotated method; null when the annotation is on the class. */
    public Method getMethod() {
        return method;
    }
}
