package io.krabka.streams.coordination.fencing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.Role;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class TokenHeadersTest {

    private static final Role ROLE = Role.of("controller");
    private static final FencingToken TOKEN = FencingToken.of(42, 1000, (short) 7);

    @Test
    void aStampedCopyCarriesTheRoleAndTokenAsDecimalTextAndKeepsTheApplicationsHeaders() {
        ProducerRecord<String, String> record = new ProducerRecord<>("commands", 2, 123L, "key", "value");
        record.headers().add("trace", "abc".getBytes(StandardCharsets.UTF_8));

        ProducerRecord<String, String> stamped = TokenHeaders.stamp(record, ROLE, TOKEN);

        assertThat(text(stamped.headers(), TokenHeaders.ROLE)).isEqualTo("controller");
        assertThat(text(stamped.headers(), TokenHeaders.TERM)).isEqualTo("42");
        assertThat(text(stamped.headers(), TokenHeaders.PRODUCER_ID)).isEqualTo("1000");
        assertThat(text(stamped.headers(), TokenHeaders.PRODUCER_EPOCH)).isEqualTo("7");
        assertThat(text(stamped.headers(), "trace")).isEqualTo("abc");
        assertThat(stamped.topic()).isEqualTo("commands");
        assertThat(stamped.partition()).isEqualTo(2);
        assertThat(stamped.timestamp()).isEqualTo(123L);
        assertThat(stamped.key()).isEqualTo("key");
        assertThat(stamped.value()).isEqualTo("value");
        assertThat(record.headers().toArray())
                .as("the application's record is left as it was")
                .hasSize(1);
        assertThat(TokenHeaders.read(stamped.headers())).contains(new TokenHeaders.Stamp(ROLE, TOKEN));
    }

    @Test
    void headersOfTheStampsNamesThatTheApplicationSetAreReplacedNotRepeated() {
        ProducerRecord<String, String> record = new ProducerRecord<>("commands", "value");
        record.headers().add(TokenHeaders.TERM, "999999".getBytes(StandardCharsets.UTF_8));
        record.headers().add(TokenHeaders.ROLE, "someone-else".getBytes(StandardCharsets.UTF_8));

        Headers headers = TokenHeaders.stamp(record, ROLE, TOKEN).headers();

        assertThat(headers.headers(TokenHeaders.TERM)).hasSize(1);
        assertThat(text(headers, TokenHeaders.TERM)).isEqualTo("42");
        assertThat(text(headers, TokenHeaders.ROLE)).isEqualTo("controller");
    }

    @Test
    void stampingATransactionsRecordsTogetherStampsEachAsStampDoesAndKeepsTheirHeadersApart() {
        ProducerRecord<String, String> plain = new ProducerRecord<>("commands", 0, 5L, "a", "1");
        ProducerRecord<String, String> traced = new ProducerRecord<>("commands", "b", "2");
        traced.headers().add("trace", "abc".getBytes(StandardCharsets.UTF_8));
        traced.headers().add(TokenHeaders.TERM, "999999".getBytes(StandardCharsets.UTF_8));

        List<ProducerRecord<String, String>> stamped = TokenHeaders.stampAll(List.of(plain, traced), ROLE, TOKEN);

        assertThat(stamped).hasSize(2);
        for (int i = 0; i < 2; i++) {
            ProducerRecord<String, String> original = i == 0 ? plain : traced;
            ProducerRecord<String, String> one = TokenHeaders.stamp(original, ROLE, TOKEN);
            assertThat(stamped.get(i)).as("record %d as stamp() stamps it", i).isEqualTo(one);
        }
        assertThat(stamped.get(1).headers().headers(TokenHeaders.TERM)).hasSize(1);
        assertThat(text(stamped.get(1).headers(), "trace")).isEqualTo("abc");
        stamped.get(0).headers().add("later", new byte[] {1});
        assertThat(stamped.get(1).headers().lastHeader("later"))
                .as("each record has headers of its own")
                .isNull();
        assertThat(plain.headers().toArray()).isEmpty();
    }

    @Test
    void aRecordWithoutTheHeadersHasNoStamp() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("trace", new byte[] {1});
        assertThat(TokenHeaders.read(headers)).isEmpty();
    }

    @Test
    void someButNotAllOfTheHeadersAreMalformed() {
        Headers headers = stampedHeaders();
        headers.remove(TokenHeaders.PRODUCER_ID);
        assertThatThrownBy(() -> TokenHeaders.read(headers))
                .isInstanceOf(MalformedStampException.class)
                .hasMessageContaining("but not all");
    }

    @Test
    void aTermThatIsNotAPlainDecimalNumberIsMalformedAndNamed() {
        for (String bad : new String[] {"", "-1", "+4", "4.0", "0x2a", " 42", "99999999999999999999"}) {
            Headers headers = stampedHeaders();
            headers.remove(TokenHeaders.TERM);
            headers.add(TokenHeaders.TERM, bad.getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> TokenHeaders.read(headers))
                    .as("term \"%s\"", bad)
                    .isInstanceOf(MalformedStampException.class)
                    .hasMessageContaining(TokenHeaders.TERM);
        }
    }

    @Test
    void anEpochBeyondAShortAndARoleThatIsNoRoleNameAreMalformed() {
        Headers epoch = stampedHeaders();
        epoch.remove(TokenHeaders.PRODUCER_EPOCH);
        epoch.add(TokenHeaders.PRODUCER_EPOCH, "32768".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> TokenHeaders.read(epoch))
                .isInstanceOf(MalformedStampException.class)
                .hasMessageContaining(TokenHeaders.PRODUCER_EPOCH);

        Headers role = stampedHeaders();
        role.remove(TokenHeaders.ROLE);
        role.add(TokenHeaders.ROLE, " ".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> TokenHeaders.read(role))
                .isInstanceOf(MalformedStampException.class)
                .hasMessageContaining(TokenHeaders.ROLE);
    }

    static Headers stampedHeaders() {
        return new RecordHeaders(TokenHeaders.stamp(new ProducerRecord<>("t", "v"), ROLE, TOKEN)
                .headers()
                .toArray());
    }

    private static String text(Headers headers, String name) {
        Header[] all = headers.toArray();
        return Arrays.stream(all)
                .filter(h -> h.key().equals(name))
                .map(h -> new String(h.value(), StandardCharsets.UTF_8))
                .reduce((first, second) -> second)
                .orElse(null);
    }
}
