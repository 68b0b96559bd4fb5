package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A transport that tells {@link ClusterContact} when an operation that needs the cluster
 * returned. It overrides every method of {@link CoordinationTransport}, defaults included,
 * so the delegate's own implementations are the ones that run (a test checks that none is
 * missed).
 */
final class ContactRecordingTransport implements CoordinationTransport {

    private final CoordinationTransport delegate;
    private final ClusterContact contact;

    ContactRecordingTransport(CoordinationTransport delegate, ClusterContact contact) {
        this.delegate = delegate;
        this.contact = contact;
    }

    private <T> T answered(T result) {
        contact.answered();
        return result;
    }

    @Override
    public String topic() {
        return delegate.topic();
    }

    @Override
    public String location() {
        return delegate.location();
    }

    @Override
    public int partitionCount() {
        return answered(delegate.partitionCount());
    }

    @Override
    public long register(Role role, MemberId member, long registeredAt) {
        return answered(delegate.register(role, member, registeredAt));
    }

    @Override
    public void deregister(Role role, MemberId member) {
        delegate.deregister(role, member);
        contact.answered();
    }

    @Override
    public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
        return answered(delegate.read(role, fromOffset, maxWait));
    }

    @Override
    public Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
        return answered(delegate.readAll(fromOffsets));
    }

    @Override
    public RoleEpoch initEpoch(Role role) {
        return answered(delegate.initEpoch(role));
    }

    // Getting ready, watching and vouching need no answer from the cluster: no contact.
    @Override
    public void prepareEpoch(Role role) {
        delegate.prepareEpoch(role);
    }

    @Override
    public void discardPrepared(Role role) {
        delegate.discardPrepared(role);
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
    public boolean tellsEverythingSince(Role role, long fromOffset) {
        return delegate.tellsEverythingSince(role, fromOffset);
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role) {
        return answered(delegate.describeEpoch(role));
    }

    @Override
    public Optional<io.krabka.streams.coordination.TopicConfigurationException> topicProblem() {
        return delegate.topicProblem();
    }

    @Override
    public Optional<String> otherTopicWrittenBy(Role role, long producerId) {
        return answered(delegate.otherTopicWrittenBy(role, producerId));
    }

    @Override
    public Optional<ProducerState> describeEpoch(Role role, Duration timeout) {
        return answered(delegate.describeEpoch(role, timeout));
    }

    @Override
    public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
        return answered(delegate.describeEpochs(roles));
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
