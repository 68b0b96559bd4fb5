package io.krabka.streams.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FencingTokenTest {

    @Test
    void noEpochRanksBelowEveryMintedToken() {
        FencingToken first = FencingToken.of(0, 0, (short) 0);
        assertThat(first.supersedes(FencingToken.NO_EPOCH)).isTrue();
        assertThat(FencingToken.NO_EPOCH.supersedes(first)).isFalse();
        assertThat(FencingToken.NO_EPOCH.isMinted()).isFalse();
        assertThat(FencingToken.GRANT_ORDER.compare(FencingToken.NO_EPOCH, first))
                .isNegative();
    }

    @Test
    void ofRejectsEveryNegativeComponentNamingIt() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FencingToken.of(-1, 1, (short) 1))
                .withMessageContaining("term");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FencingToken.of(1, -1, (short) 1))
                .withMessageContaining("producerId");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FencingToken.of(1, 1, (short) -1))
                .withMessageContaining("producerEpoch");
        assertThatIllegalArgumentException().isThrownBy(() -> FencingToken.of(-1, -1, (short) -1));
    }

    @Test
    void noMintedTokenEqualsNoEpoch() {
        assertThat(FencingToken.of(0, 0, (short) 0)).isNotEqualTo(FencingToken.NO_EPOCH);
    }

    @Test
    void laterGrantSupersedesEvenWhenKafkaHandsOutALowerProducerId() {
        // kafka-facts fact 4: after the coordinator moves, pid 1001 can be followed by pid 1.
        FencingToken before = FencingToken.of(17, 1001, (short) 3);
        FencingToken after = FencingToken.of(36, 1, (short) 0);
        assertThat(after.supersedes(before)).isTrue();
        assertThat(before.supersedes(after)).isFalse();
    }

    @Test
    void laterGrantSupersedesAcrossAnEpochRollover() {
        FencingToken wrapped = FencingToken.of(40, 4, Short.MAX_VALUE);
        FencingToken fresh = FencingToken.of(41, 5, (short) 0);
        assertThat(fresh.supersedes(wrapped)).isTrue();
    }

    @Test
    void epochMovesWithinOneLeadershipDoNotSupersede() {
        // Under transaction version 2 every commit bumps the epoch; the grant is the same.
        FencingToken granted = FencingToken.of(17, 1001, (short) 0);
        FencingToken renewed = granted.withEpoch(1001, (short) 5);
        assertThat(renewed.sameLeadership(granted)).isTrue();
        assertThat(renewed.supersedes(granted)).isFalse();
        assertThat(granted.supersedes(renewed)).isFalse();
        assertThat(FencingToken.NO_EPOCH.sameLeadership(FencingToken.NO_EPOCH)).isFalse();
    }

    @Test
    void grantOrderSortsByTermWhateverTheProducerIds() {
        List<FencingToken> tokens = new ArrayList<>(List.of(
                FencingToken.of(36, 1, (short) 0),
                FencingToken.NO_EPOCH,
                FencingToken.of(0, 1001, (short) 7),
                FencingToken.of(17, 1001, (short) 9)));
        tokens.sort(FencingToken.GRANT_ORDER);
        assertThat(tokens).extracting(FencingToken::term).containsExactly(-1L, 0L, 17L, 36L);
    }

    @Test
    void toStringNamesEveryComponent() {
        assertThat(FencingToken.of(17, 1001, (short) 3)).hasToString("term 17 (producer 1001, epoch 3)");
        assertThat(FencingToken.NO_EPOCH).hasToString("NO_EPOCH");
    }
}
