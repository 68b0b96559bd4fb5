package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;

/** Hands every hook to each {@link CoordinationObserver} bean, looked up when called. */
public final class CompositeCoordinationObserver implements CoordinationObserver {

    private final ObjectProvider<CoordinationObserver> observers;

    public CompositeCoordinationObserver(ObjectProvider<CoordinationObserver> observers) {
        this.observers = observers;
    }

    @Override
    public void granted(Role role, Duration took) {
        observers.orderedStream().forEach(observer -> observer.granted(role, took));
    }

    @Override
    public void ended(Role role, LeadershipEndCause cause) {
        observers.orderedStream().forEach(observer -> observer.ended(role, cause));
    }

    @Override
    public void renewed(Role role, Duration took) {
        observers.orderedStream().forEach(observer -> observer.renewed(role, took));
    }

    @Override
    public void renewFailed(Role role) {
        observers.orderedStream().forEach(observer -> observer.renewFailed(role));
    }
}
