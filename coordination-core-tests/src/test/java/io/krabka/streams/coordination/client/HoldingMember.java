package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One member's started contenders on a manual runtime, holding every role, with each role's first end recorded. */
record HoldingMember(List<Contender> contenders, Map<Role, LeadershipEndCause> ends) {

    /** Starts member "a"'s contenders for {@code roles} and advances until it holds them all (10 s at most). */
    static HoldingMember holdingAll(ManualRuntime runtime, CoordinationClient client, List<Role> roles) {
        Map<Role, LeadershipEndCause> ends = new ConcurrentHashMap<>();
        List<Contender> contenders = roles.stream()
                .map(role -> new Contender(client, role, MemberId.of("a"), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {}

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.putIfAbsent(leadership.role(), cause);
                    }
                }))
                .toList();
        contenders.forEach(Contender::start);
        assertThat(runtime.advanceUntil(
                        () -> contenders.stream().allMatch(c -> c.leadership().isPresent()), Duration.ofSeconds(10)))
                .as("all %d roles held", roles.size())
                .isTrue();
        return new HoldingMember(contenders, ends);
    }
}
