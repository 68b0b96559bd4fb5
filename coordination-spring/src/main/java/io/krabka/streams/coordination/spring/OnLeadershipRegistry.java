package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.env.PropertyResolver;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@link OnLeadership} methods and beans and {@link LeaderListener} methods as the context creates them (and
 * creates lazy singletons that have them once the others are), checks them, and keeps them per role for the leadership
 * loop. Their beans must be singletons, and their methods must not be
 * {@code @Async} nor return a future or a reactive type (their work would outlive their return): these fail startup.
 */
public final class OnLeadershipRegistry implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    private static final Logger log = LoggerFactory.getLogger(OnLeadershipRegistry.class);

    private final Set<String> configuredRoles;
    private final Map<Role, List<RoleWork>> work = new ConcurrentHashMap<>();
    private final List<LeaderListenerMethod> listenerMethods = new CopyOnWriteArrayList<>();
    private final Set<Role> servedByRequests = ConcurrentHashMap.newKeySet();
    private final PropertyResolver placeholders;
    private final ObjectProvider<LeaderPipelines> pipelines;
    private final ObjectProvider<GuardedSenders> senders;
    private @Nullable ConfigurableListableBeanFactory beanFactory;

    /**
     * @param configuredRoles {@code krabka.coordination.roles}
     * @param placeholders resolves {@code ${...}} in the roles of {@link OnLeadership} and in {@link LeaderListener} attributes
     * @param pipelines builds the listeners' pipelines; asked only when the loop starts
     * @param senders makes the {@link GuardedSender}s that {@link OnLeadership} methods take
     */
    public OnLeadershipRegistry(
            Collection<String> configuredRoles,
            PropertyResolver placeholders,
            ObjectProvider<LeaderPipelines> pipelines,
            ObjectProvider<GuardedSenders> senders) {
        this.configuredRoles = Set.copyOf(configuredRoles);
        this.placeholders = placeholders;
        this.pipelines = pipelines;
        this.senders = senders;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ConfigurableListableBeanFactory listable ? listable : null;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> type = AopUtils.getTargetClass(bean);
        OnLeadership onType = AnnotatedElementUtils.findMergedAnnotation(type, OnLeadership.class);
        Map<Method, OnLeadership> methods = annotated(type, OnLeadership.class);
        Map<Method, LeaderListener> listeners = annotated(type, LeaderListener.class);
        if (onType == null && methods.isEmpty() && listeners.isEmpty()) {
            return bean;
        }
        refuseNonSingleton(beanName, type);
        if (onType != null) {
            if (!(bean instanceof Lifecycle lifecycle)) {
                throw new BeanInitializationException("@OnLeadership on bean '" + beanName + "' (" + type.getName()
                        + ") needs the bean to implement Lifecycle, so it can be started on grant and stopped on loss");
            }
            if (bean instanceof SmartLifecycle smart && smart.isAutoStartup()) {
                throw new BeanInitializationException(
                        "@OnLeadership bean '" + beanName + "' (" + type.getName()
                                + ") would start with the application context, before any leadership: return false from isAutoStartup()");
            }
            Method start = ReflectionUtils.findMethod(type, "start");
            if (isAsync(type) || (start != null && isAsync(start))) {
                throw new BeanInitializationException("@OnLeadership bean '" + beanName + "' (" + type.getName()
                        + ") is @Async: its start() would return before it started, and the loop would take it for "
                        + "started; remove @Async (start() runs on a worker thread of its own, and may hand work "
                        + "to threads it stops in stop())");
            }
            Role role = checkedRole(
                    "@OnLeadership", placeholders.resolveRequiredPlaceholders(onType.role()), beanName, type.getName());
            add(
                    role,
                    new LifecycleRoleWork(
                            lifecycle,
                            "krabka-work-" + role + "-" + type.getSimpleName() + ".start",
                            "@OnLeadership bean '" + beanName + "' (" + type.getName() + ")"));
        }
        for (Map.Entry<Method, OnLeadership> entry : methods.entrySet()) {
            Method method = entry.getKey();
            String where = type.getName() + "." + method.getName() + "()";
            Class<?>[] parameters = method.getParameterTypes();
            for (Class<?> parameter : parameters) {
                if (parameter != Leadership.class && parameter != GuardedSender.class) {
                    throw new BeanInitializationException("@OnLeadership method " + where
                            + " may take only a Leadership and a GuardedSender, not a " + parameter.getName());
                }
            }
            if (isAsync(method) || isAsync(type)) {
                throw new BeanInitializationException("@OnLeadership method " + where + " (bean '" + beanName
                        + "') is @Async: it must run on the leadership's own thread, where the leadership's end can "
                        + "interrupt it and where its return ends the leadership. Through the @Async proxy it would "
                        + "return at once (giving the role up every time) and run on an executor nothing interrupts; "
                        + "remove @Async, the method already runs on a thread of its own");
            }
            String asynchronous = asynchronousResult(method.getReturnType());
            if (asynchronous != null) {
                throw new BeanInitializationException("@OnLeadership method " + where + " (bean '" + beanName
                        + "') returns " + method.getReturnType().getName() + ", " + asynchronous + ": its work would "
                        + "go on after the method returned, but the method's return ends the leadership (the role "
                        + "would be given up and granted again every second, each grant leaving one more run that "
                        + "nothing interrupts). The method must block for as long as it leads, and return (or throw) "
                        + "when interrupted: wait for the result inside it (join(), get(), block()) and return void");
            }
            Role role = checkedRole(
                    "@OnLeadership",
                    placeholders.resolveRequiredPlaceholders(entry.getValue().role()),
                    beanName,
                    where);
            Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
            ReflectionUtils.makeAccessible(invocable);
            add(
                    role,
                    new RunnerRoleWork(
                            "krabka-work-" + role + "-" + type.getSimpleName() + "." + method.getName(),
                            "@OnLeadership method " + where + " of bean '" + beanName + "'",
                            leadership -> invoke(bean, invocable, arguments(parameters, leadership, where))));
        }
        for (Map.Entry<Method, LeaderListener> entry : listeners.entrySet()) {
            Method method = entry.getKey();
            String where = type.getName() + "." + method.getName() + "()";
            Role role = checkedRole(
                    "@LeaderListener",
                    placeholders.resolveRequiredPlaceholders(entry.getValue().role()),
                    beanName,
                    where);
            LeaderListenerMethod listener = new LeaderListenerMethod(
                    role,
                    bean,
                    AopUtils.selectInvocableMethod(method, bean.getClass()),
                    entry.getValue(),
                    where,
                    placeholders,
                    pipelines::getObject);
            listenerMethods.add(listener);
            add(role, listener.work());
        }
        return bean;
    }

    private static <A extends Annotation> Map<Method, A> annotated(Class<?> type, Class<A> annotation) {
        return MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<A>)
                m -> AnnotatedElementUtils.findMergedAnnotation(m, annotation));
    }

    /** Reactive types known by name, so that none of their libraries is needed to recognise them. */
    private static final Set<String> REACTIVE_TYPES = Set.of(
            "org.reactivestreams.Publisher",
            "reactor.core.publisher.Mono",
            "reactor.core.publisher.Flux",
            "io.reactivex.rxjava3.core.Observable",
            "io.reactivex.rxjava3.core.Single",
            "io.reactivex.rxjava3.core.Maybe",
            "io.reactivex.rxjava3.core.Completable",
            "kotlinx.coroutines.flow.Flow");

    /**
     * What makes {@code type}, the return type of an {@link OnLeadership} method, a result
     * that completes after the method returns (a future, a reactive type), or null when it is
     * none. Such work would outlive the return that ends its leadership.
     */
    static @Nullable String asynchronousResult(Class<?> type) {
        if (Future.class.isAssignableFrom(type)) {
            return "a Future";
        }
        if (CompletionStage.class.isAssignableFrom(type)) {
            return "a CompletionStage";
        }
        if (java.util.concurrent.Flow.Publisher.class.isAssignableFrom(type)) {
            return "a Flow.Publisher";
        }
        String reactive = reactiveType(type);
        if (reactive != null) {
            return "a reactive type (" + reactive + ")";
        }
        if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null) {
            return "a reactive type";
        }
        return null;
    }

    /** The reactive type among {@code type} and its supertypes, by name; null for none. */
    private static @Nullable String reactiveType(@Nullable Class<?> type) {
        if (type == null || type == Object.class) {
            return null;
        }
        if (REACTIVE_TYPES.contains(type.getName())) {
            return type.getName();
        }
        String found = reactiveType(type.getSuperclass());
        for (Class<?> implemented : type.getInterfaces()) {
            if (found == null) {
                found = reactiveType(implemented);
            }
        }
        return found;
    }

    /** Whether a type or method is asynchronous for Spring: {@code @Async}, or EJB's {@code @Asynchronous}, which Spring honours too. */
    private static boolean isAsync(AnnotatedElement element) {
        MergedAnnotations annotations =
                MergedAnnotations.from(element, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY);
        return annotations.isPresent(Async.class) || annotations.isPresent("jakarta.ejb.Asynchronous");
    }

    /**
     * Work runs once per leadership for one bean: a bean of another scope would add its
     * work again with every instance the context creates (five prototypes, five copies of
     * the work per grant, each kept alive by this registry), or, in a scope that renews
     * its instance, keep running the old one.
     */
    private void refuseNonSingleton(String beanName, Class<?> type) {
        if (beanFactory == null || !beanFactory.containsBeanDefinition(beanName)) {
            return;
        }
        BeanDefinition definition = beanFactory.getMergedBeanDefinition(beanName);
        if (!definition.isSingleton()) {
            throw nonSingleton(beanName, type, definition);
        }
    }

    private static BeanInitializationException nonSingleton(String beanName, Class<?> type, BeanDefinition definition) {
        String scope =
                definition.getScope() == null || definition.getScope().isEmpty() ? "prototype" : definition.getScope();
        return new BeanInitializationException("The @OnLeadership or @LeaderListener work of bean '" + beanName + "' ("
                + type.getName() + ") cannot run: the bean is of scope '" + scope + "', but the work runs once per "
                + "leadership, for one bean, so its bean must be a singleton (each instance would add its work again, for "
                + "good); remove its @Scope, or move the work to a singleton bean");
    }

    /**
     * Refuses, at startup, a non-singleton bean with work that nothing created yet: it
     * would otherwise be refused (or, before, registered again) only when something first
     * asks for an instance. And creates now a lazy singleton with work
     * ({@code spring.main.lazy-initialization=true}, {@code @Lazy}): nothing else would
     * ever create it, so its work would never run while the member held, renewed and
     * reported the role healthy. As Spring's own {@code EventListenerMethodProcessor}, it
     * finds them from their bean definitions' types.
     */
    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory == null) {
            return;
        }
        for (String name : beanFactory.getBeanDefinitionNames()) {
            BeanDefinition definition = beanFactory.getMergedBeanDefinition(name);
            if (definition.isAbstract() || (definition.isSingleton() && beanFactory.containsSingleton(name))) {
                continue;
            }
            Class<?> type;
            try {
                if (definition.isSingleton() && beanFactory.isFactoryBean(name)) {
                    continue;
                }
                type = beanFactory.getType(name, false);
            } catch (BeansException unknown) {
                continue;
            }
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            if (!AnnotatedElementUtils.hasAnnotation(user, OnLeadership.class)
                    && annotated(user, OnLeadership.class).isEmpty()
                    && annotated(user, LeaderListener.class).isEmpty()) {
                continue;
            }
            if (!definition.isSingleton()) {
                throw nonSingleton(name, user, definition);
            }
            log.debug("Creating lazy bean '{}' ({}) now: it has @OnLeadership or @LeaderListener work", name, user);
            beanFactory.getBean(name);
        }
    }

    /** The arguments of an {@link OnLeadership} method for one leadership. */
    private Object[] arguments(Class<?>[] parameters, Leadership leadership, String where) {
        Object[] arguments = new Object[parameters.length];
        for (int i = 0; i < parameters.length; i++) {
            arguments[i] = parameters[i] == Leadership.class
                    ? leadership
                    : senders(where).of(leadership);
        }
        return arguments;
    }

    private GuardedSenders senders(String where) {
        GuardedSenders found = senders.getIfAvailable();
        if (found == null) {
            throw new IllegalStateException("@OnLeadership method " + where + " takes a GuardedSender, but there is no "
                    + "GuardedSenders bean: it needs Spring Kafka's producer factory (spring-kafka on the class path)");
        }
        return found;
    }

    private static void invoke(Object bean, Method method, Object[] arguments) throws Exception {
        try {
            method.invoke(bean, arguments);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e.getCause() instanceof Exception failure ? failure : e;
        }
    }

    private Role checkedRole(String annotation, String role, String beanName, String where) {
        Role valid;
        try {
            valid = Role.of(role);
        } catch (IllegalArgumentException invalid) {
            // Before the configured check: adding an invalid name to krabka.coordination.roles fails too.
            throw new BeanInitializationException(
                    annotation + "(role = \"" + role + "\") on " + where + " (bean '" + beanName
                            + "') does not name a valid role (" + invalid.getMessage()
                            + "): set role to one of krabka.coordination.roles " + configuredRoles,
                    invalid);
        }
        if (!configuredRoles.contains(role)) {
            throw new BeanInitializationException(
                    annotation + "(role = \"" + role + "\") on " + where + " (bean '" + beanName
                            + "') names a role that is not configured: add it to krabka.coordination.roles (configured: "
                            + configuredRoles + ")");
        }
        return valid;
    }

    /**
     * Builds the pipeline of every {@link LeaderListener}, so a listener that cannot run
     * (no Spring Kafka factories, two listeners on one group and topic) fails the start
     * of the application, not its first leadership.
     */
    void preparePipelines() {
        for (LeaderListenerMethod listener : listenerMethods) {
            try {
                listener.pipeline();
            } catch (BeansException | IllegalStateException e) {
                throw new IllegalStateException("@LeaderListener " + listener + " cannot run: " + e.getMessage(), e);
            }
        }
    }

    private void add(Role role, RoleWork roleWork) {
        work.computeIfAbsent(role, r -> new CopyOnWriteArrayList<>()).add(roleWork);
    }

    /**
     * Marks {@code role} as worked for by request handlers that only its holder runs
     * ({@code @LeaderOnly}): the loop's startup check for roles nothing works for counts them.
     */
    public void servedByRequests(Role role) {
        servedByRequests.add(role);
    }

    /** Whether nothing works for {@code role}: no work, and no request handler only its holder runs. */
    boolean idle(Role role) {
        return workFor(role).isEmpty() && !servedByRequests.contains(role);
    }

    /** The work registered for {@code role}. */
    List<RoleWork> workFor(Role role) {
        return work.getOrDefault(role, List.of());
    }

    /** Starts every piece of work for a fresh leadership; the first that fails to start ends it. */
    void start(Leadership leadership, Contender contender, CoordinationRuntime runtime, Duration stopTimeout)
            throws Exception {
        for (RoleWork roleWork : workFor(leadership.role())) {
            roleWork.start(leadership, contender, runtime, stopTimeout);
        }
    }

    /**
     * Stops every piece of work of {@code role} together: interrupts them all, then waits
     * for each within what is left of {@code bound}, so the role's end takes at most
     * {@code bound} however many works it has (one after another, the second was
     * interrupted only once the first returned).
     */
    void stop(Role role, Duration bound, CoordinationRuntime runtime) {
        List<RoleWork> all = new ArrayList<>(workFor(role));
        all.forEach(RoleWork::interrupt);
        long deadline = runtime.nanoTime() + bound.toNanos();
        for (RoleWork roleWork : all) {
            roleWork.awaitStopped(RoleWork.left(deadline, runtime), runtime);
        }
    }

    /**
     * Before a planned move of {@code roles} (a release, a handover, a stop): interrupts all
     * their work together and waits for it within {@code bound}, so no successor is granted
     * while it runs. Work that returns waits for {@link #moved} or {@link #resume} instead
     * of giving the role up itself. Work still running at {@code bound} is named in a WARN,
     * and the move goes on without it.
     */
    void stopBeforeMove(Collection<Role> roles, Duration bound, CoordinationRuntime runtime) {
        List<RoleWork> all = new ArrayList<>();
        List<Role> of = new ArrayList<>();
        for (Role role : roles) {
            for (RoleWork roleWork : workFor(role)) {
                all.add(roleWork);
                of.add(role);
            }
        }
        all.forEach(RoleWork::interruptBeforeMove);
        long deadline = runtime.nanoTime() + bound.toNanos();
        for (int i = 0; i < all.size(); i++) {
            RoleWork roleWork = all.get(i);
            if (!roleWork.awaitBeforeMove(RoleWork.left(deadline, runtime), runtime)) {
                log.warn(
                        "The work of role {}, {}, did not stop within {} (work-stop-timeout) of its interrupt before the "
                                + "role was let go: the role is let go all the same, so its successor may start while this "
                                + "work still runs (its guarded writes are fenced). Make it return when interrupted",
                        of.get(i),
                        roleWork,
                        bound.toMillis() + " ms");
            }
        }
    }

    /** The planned move of {@code role} was made, or its leadership ended: work held for it returns. */
    void moved(Role role) {
        workFor(role).forEach(RoleWork::moved);
    }

    /** The planned move of {@code role} was not made and the leadership lasts: its work runs again. */
    void resume(Role role) {
        workFor(role).forEach(RoleWork::resume);
    }
}
