package io.krabka.streams.coordination.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.context.Lifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Lets only the leadership loop start an {@link OnLeadership} {@link Lifecycle} bean.
 * The application context starts every {@code Lifecycle} bean, whatever its
 * {@code isAutoStartup()}, when {@code ConfigurableApplicationContext.start()} is called
 * (Spring Cloud's {@code /actuator/resume}) or a CRaC checkpoint is restored: on a
 * standby that would run the role's work without its leadership. So such a bean is
 * proxied (a class proxy, as {@code @Async} and {@code @Validated} beans are, and
 * prepared ahead of time for native images), and its {@code start()} goes through only
 * from the loop; any other caller's is ignored, with an INFO. Its other methods,
 * {@code stop()} and {@code isRunning()} included, are the bean's own.
 */
public final class OnLeadershipLifecycleGuard extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final Logger log = LoggerFactory.getLogger(OnLeadershipLifecycleGuard.class);
    private static final ThreadLocal<Boolean> LOOP_STARTS = new ThreadLocal<>();

    public OnLeadershipLifecycleGuard() {
        setProxyTargetClass(true);
        setBeforeExistingAdvisors(true);
        StaticMethodMatcherPointcut start = new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return method.getName().equals("start") && method.getParameterCount() == 0;
            }
        };
        start.setClassFilter(OnLeadershipLifecycleGuard::guarded);
        this.advisor = new DefaultPointcutAdvisor(start, (MethodInterceptor) OnLeadershipLifecycleGuard::start);
    }

    private static boolean guarded(Class<?> type) {
        return Lifecycle.class.isAssignableFrom(type) && AnnotatedElementUtils.hasAnnotation(type, OnLeadership.class);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!(bean instanceof Advised) && guarded(type)) {
            Method start = ReflectionUtils.findMethod(type, "start");
            if (Modifier.isFinal(type.getModifiers()) || (start != null && Modifier.isFinal(start.getModifiers()))) {
                throw new BeanInitializationException("@OnLeadership bean '" + beanName + "' (" + type.getName() + ") "
                        + (Modifier.isFinal(type.getModifiers()) ? "is a final class" : "has a final start()")
                        + ": only the leadership loop may start it, so its start() is guarded by a class proxy, which "
                        + "cannot override it; make it non-final");
            }
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** Starts {@code bean} for the leadership loop, through the guard. */
    static void startForTheLoop(Lifecycle bean) {
        LOOP_STARTS.set(Boolean.TRUE);
        try {
            bean.start();
        } finally {
            LOOP_STARTS.remove();
        }
    }

    private static @Nullable Object start(MethodInvocation invocation) throws Throwable {
        if (Boolean.TRUE.equals(LOOP_STARTS.get())) {
            LOOP_STARTS.remove();
            return invocation.proceed();
        }
        Object target = invocation.getThis();
        Class<?> type = target == null ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(target);
        OnLeadership on = AnnotatedElementUtils.findMergedAnnotation(type, OnLeadership.class);
        log.info(
                "Not starting @OnLeadership bean {}: only the leadership loop starts it, when this member is granted role "
                        + "{} (the context's start(), Spring Cloud's /actuator/resume and a CRaC restore start every Lifecycle bean)",
                type.getName(),
                on == null ? "?" : on.role());
        return null;
    }
}
