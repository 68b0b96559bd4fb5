package io.krabka.streams.coordination.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * A fault or an observation put between a test and what it calls: a proxy of an interface
 * (a transport, a role epoch) whose every call goes through a handler, which usually passes
 * it on with {@link #call} after doing or changing something.
 */
public final class Intercepted {

    private Intercepted() {}

    /** What a call of the proxy does; {@code args} is never null. */
    public interface Handler {
        Object handle(Method method, Object[] args) throws Throwable;
    }

    /** A {@code type} whose calls {@code handler} answers. */
    public static <T> T proxy(Class<T> type, Handler handler) {
        return type.cast(Proxy.newProxyInstance(
                Intercepted.class.getClassLoader(),
                new Class<?>[] {type},
                (proxy, method, args) -> handler.handle(method, args == null ? new Object[0] : args)));
    }

    /** Passes the call on to {@code target}, throwing what it throws (not wrapped). */
    public static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
