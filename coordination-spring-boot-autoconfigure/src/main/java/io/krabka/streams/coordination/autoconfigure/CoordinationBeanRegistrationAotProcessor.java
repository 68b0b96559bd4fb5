package io.krabka.streams.coordination.autoconfigure;

import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.aot.BeanRegistrationCode;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The reflection hints of {@code @OnLeadership} and {@code @LeaderListener} methods, for
 * Spring AOT and native images: the starter finds those methods by introspecting each
 * bean's class and calls them with {@link Method#invoke}, which a native image allows
 * only for methods it was told about. It looks at every bean as the registry does at run
 * time (the bean's class, its methods and their merged annotations) and registers the
 * class (its members may then be introspected) and each annotated method for invocation.
 * A {@code LeadershipAware} bean needs nothing: its {@code setLeadership} is an interface
 * call. Registered in {@code META-INF/spring/aot.factories}.
 */
final class CoordinationBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

    @Override
    public BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
        Class<?> type = registeredBean.getBeanType().toClass();
        Set<Method> methods = new LinkedHashSet<>();
        methods.addAll(annotated(type, OnLeadership.class));
        methods.addAll(annotated(type, LeaderListener.class));
        boolean onType = AnnotatedElementUtils.hasAnnotation(type, OnLeadership.class);
        if (methods.isEmpty() && !onType) {
            return null;
        }
        return (GenerationContext generationContext, BeanRegistrationCode code) ->
                register(generationContext.getRuntimeHints(), type, methods);
    }

    static void register(RuntimeHints hints, Class<?> type, Set<Method> methods) {
        // A registered type's members may be introspected (the INTROSPECT_* categories are
        // deprecated in Spring Framework 7 for that reason); invocation needs each method.
        hints.reflection().registerType(type);
        methods.forEach(method -> hints.reflection().registerMethod(method, ExecutableMode.INVOKE));
    }

    static Set<Method> annotated(Class<?> type, Class<? extends Annotation> annotation) {
        return MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<Annotation>)
                        method -> AnnotatedElementUtils.findMergedAnnotation(method, annotation))
                .keySet();
    }
}
