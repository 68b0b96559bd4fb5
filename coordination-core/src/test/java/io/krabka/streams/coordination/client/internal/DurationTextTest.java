package io.krabka.streams.coordination.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationTextTest {

    @Test
    void printsDurationsForPeople() {
        assertThat(DurationText.of(Duration.ofNanos(14_999_972_688L))).isEqualTo("15 s");
        assertThat(DurationText.of(Duration.ofMillis(250))).isEqualTo("250 ms");
        assertThat(DurationText.of(Duration.ofMillis(2_500))).isEqualTo("2.5 s");
        assertThat(DurationText.of(Duration.ofSeconds(1))).isEqualTo("1 s");
        assertThat(DurationText.of(Duration.ofSeconds(125))).isEqualTo("2 min 5 s");
        assertThat(DurationText.of(Duration.ofMinutes(3))).isEqualTo("3 min");
    }
}
