package io.krabka.streams.coordination.testing;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A transport that hands every call to another, for tests that change one or two of them
 * (count reads, hold transactions, hide records). It forwards the news too, so contenders
 * on it are woken as on the transport beneath.
 */
public class ForwardingTransport implements CoordinationTransport {

    protected final CoordinationTransport delegate;

    public ForwardingTransport(CoordinationTransport delegate) {
        this.delegate = delegate;
    }

    @Override
    public String topic() {
        return delegate.topic();
    }

    @Override
    public int partitionCount() {
        return delegate.partitionCount();
    }

    @Override
    public long register(Role role, MemberId member, long registeredAt) {
        return delegate.register(role, member, registeredAt);
    }

    @Override
    public void deregister(Role role, MemberId member) {
        delegate.deregister(role, member);
    }

    @Override
    public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        return delegate.read(role, fromOffset, maxWait);
    }

    @Override
    public RoleEpoch initEpoch(Role role) {
        return delegate.initEpoch(role);
    }

    @Override
    public AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
        return delegate.watch(role, onNews);
    }

    @Override
    public boolean watches() {
        return delegate.watches();
    }

    @Override
    public Duration minCompactionLag() {
        return delegate.minCompactionLag();
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role) {
        return delegate.describeEpoch(role);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
