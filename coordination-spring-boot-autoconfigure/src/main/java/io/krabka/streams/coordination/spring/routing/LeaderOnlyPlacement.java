package io.krabka.streams.coordination.spring.routing;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Once every singleton exists, fails startup with a {@link LeaderOnlyMisplacedException}
 * when a bean has {@link LeaderOnly} on a method that is no request handler (a
 * {@code @Scheduled} job, a service method), or on a class none of whose methods is one.
 * Such an annotation would do nothing. A request handler is a method a Spring MVC or
 * WebFlux handler mapping registered, or a {@code @RequestMapping} method (so a controller
 * in a context without a web layer, a test's, passes). Runs in every application that
 * contends, web or not.
 */
public final class LeaderOnlyPlacement implements SmartInitializingSingleton, BeanFactoryAware {

    private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";
    // A controller may take its mappings from an HTTP interface's @HttpExchange methods.
    private static final String HTTP_EXCHANGE = "org.springframework.web.service.annotation.HttpExchange";
    private static final String HANDLER_METHOD = "org.springframework.web.method.HandlerMethod";
    private static final String MVC_MAPPING = "org.springframework.web.servlet.handler.AbstractHandlerMethodMapping";
    private static final String FLUX_MAPPING =
            "org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping";

    private final LeaderOnlyHandlers roles;
    private ListableBeanFactory beans;

    /** @param roles checks the role of a misplaced annotation too, for the error to name both mistakes */
    public LeaderOnlyPlacement(LeaderOnlyHandlers roles) {
        this.roles = roles;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beans = (ListableBeanFactory) beanFactory;
    }

    /** A method by its bean's user class, name and parameters: the same whichever class declares it. */
    private record Key(Class<?> type, String name, List<Class<?>> parameters) {

        static Key of(Class<?> type, Method method) {
            return new Key(type, method.getName(), Arrays.asList(method.getParameterTypes()));
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        Set<Key> handlers = new HashSet<>();
        Set<Class<?>> handlerTypes = new HashSet<>();
        ClassLoader loader = getClass().getClassLoader();
        if (ClassUtils.isPresent(HANDLER_METHOD, loader)) {
            if (ClassUtils.isPresent(MVC_MAPPING, loader)) {
                MvcHandlers.collect(beans, handlers, handlerTypes);
            }
            if (ClassUtils.isPresent(FLUX_MAPPING, loader)) {
                FluxHandlers.collect(beans, handlers, handlerTypes);
            }
        }
        // A @RequestMapping method is a request handler even in a context that runs no web layer
        // (a test with webEnvironment NONE, a non-web test slice): there routing cannot apply anyway.
        List<Class<? extends Annotation>> mappings = Stream.of(REQUEST_MAPPING, HTTP_EXCHANGE)
                .filter(mapping -> ClassUtils.isPresent(mapping, loader))
                .<Class<? extends Annotation>>map(
                        mapping -> ClassUtils.resolveClassName(mapping, loader).asSubclass(Annotation.class))
                .toList();
        for (String name : beans.getBeanDefinitionNames()) {
            Class<?> type;
            try {
                type = beans.getType(name, false);
            } catch (RuntimeException unknown) {
                continue;
            }
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            if (Proxy.isProxyClass(user) || !AnnotationUtils.isCandidateClass(user, LeaderOnly.class)) {
                // A JDK proxy is a client of an interface (an HTTP service client), not the handler it calls.
                continue;
            }
            Map<Method, LeaderOnly> annotated =
                    MethodIntrospector.selectMethods(user, (MethodIntrospector.MetadataLookup<LeaderOnly>)
                            method -> AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class));
            boolean anyHandler = handlerTypes.contains(user);
            for (Method method : MethodIntrospector.selectMethods(user, (MethodIntrospector.MetadataLookup<Boolean>)
                            method -> mappings.stream()
                                            .anyMatch(mapping -> AnnotatedElementUtils.hasAnnotation(method, mapping))
                                    ? Boolean.TRUE
                                    : null)
                    .keySet()) {
                handlers.add(Key.of(user, method));
                anyHandler = true;
            }
            for (Method method : annotated.keySet()) {
                if (!handlers.contains(Key.of(user, method))) {
                    throw new LeaderOnlyMisplacedException(name, user, method, roleProblem(method, user));
                }
            }
            if (AnnotatedElementUtils.hasAnnotation(user, LeaderOnly.class) && !anyHandler) {
                throw new LeaderOnlyMisplacedException(name, user, null, roleProblem(null, user));
            }
        }
    }

    private String roleProblem(Method method, Class<?> type) {
        try {
            if (method != null) {
                roles.roleOf(method, type);
            } else {
                for (Method any : type.getDeclaredMethods()) {
                    if (!AnnotatedElementUtils.hasAnnotation(any, LeaderOnly.class)) {
                        roles.roleOf(any, type); // the class's role
                        break;
                    }
                }
            }
            return null;
        } catch (IllegalStateException wrong) {
            return wrong.getMessage();
        }
    }

    /** Spring MVC's handler methods: loaded only where Spring MVC is on the class path. */
    private static final class MvcHandlers {

        static void collect(ListableBeanFactory beans, Set<Key> handlers, Set<Class<?>> handlerTypes) {
            for (org.springframework.web.servlet.handler.AbstractHandlerMethodMapping<?> mapping : beans.getBeansOfType(
                            org.springframework.web.servlet.handler.AbstractHandlerMethodMapping.class, false, false)
                    .values()) {
                add(mapping.getHandlerMethods().values(), handlers, handlerTypes);
            }
        }
    }

    /** WebFlux's handler methods: loaded only where WebFlux is on the class path. */
    private static final class FluxHandlers {

        static void collect(ListableBeanFactory beans, Set<Key> handlers, Set<Class<?>> handlerTypes) {
            for (org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping<?> mapping :
                    beans.getBeansOfType(
                                    org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping.class,
                                    false,
                                    false)
                            .values()) {
                add(mapping.getHandlerMethods().values(), handlers, handlerTypes);
            }
        }
    }

    private static void add(
            Collection<org.springframework.web.method.HandlerMethod> methods,
            Set<Key> handlers,
            Set<Class<?>> handlerTypes) {
        for (org.springframework.web.method.HandlerMethod handler : methods) {
            Class<?> type = ClassUtils.getUserClass(handler.getBeanType());
            handlers.add(Key.of(type, handler.getMethod()));
            handlerTypes.add(type);
        }
    }
}
