package io.krabka.streams.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class NamesTest {

    @Test
    void roleAcceptsUnicodeIncludingCharactersOutsideTheBmp() {
        assertThat(Role.of("contrôleur").name()).isEqualTo("contrôleur");
        assertThat(Role.of("🦀-dispatch").utf8()).hasSize(4 + "-dispatch".length());
    }

    @Test
    void roleRejectsEmptyBlankAndNull() {
        assertThatIllegalArgumentException().isThrownBy(() -> Role.of("")).withMessageContaining("role");
        assertThatIllegalArgumentException().isThrownBy(() -> Role.of("   ")).withMessageContaining("blank");
        assertThatIllegalArgumentException().isThrownBy(() -> Role.of(null)).withMessageContaining("null");
    }

    @Test
    void roleLimitCountsUtf8BytesNotChars() {
        assertThat(Role.of("r".repeat(Role.MAX_ROLE_LEN)).utf8()).hasSize(249);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("r".repeat(Role.MAX_ROLE_LEN + 1)))
                .withMessageContaining("at most 249 UTF-8 bytes, but is 250");
        // 62 crabs are 124 chars but 248 bytes; one more ASCII char fits, a 63rd crab does not.
        assertThat(Role.of("🦀".repeat(62) + "x").utf8()).hasSize(249);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("🦀".repeat(63)))
                .withMessageContaining("but is 252");
    }

    @Test
    void memberIdLimitIs255Utf8Bytes() {
        assertThat(MemberId.of("m".repeat(MemberId.MAX_MEMBER_ID_LEN)).value()).hasSize(255);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> MemberId.of("é".repeat(128)))
                .withMessageContaining("member id")
                .withMessageContaining("but is 256");
    }

    @Test
    void namesRejectControlCharactersAndLoneSurrogates() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("con\ntroller"))
                .withMessageContaining("U+000A at index 3");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> MemberId.of("node\u0000"))
                .withMessageContaining("U+0000");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> MemberId.of("node-\uD83E"))
                .withMessageContaining("unpaired surrogate U+D83E");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("\uDD80x"))
                .withMessageContaining("unpaired surrogate U+DD80 at index 0");
    }

    @Test
    void namesThatLookLikeAnotherNameAreRefused() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("control\u200Bler"))
                .withMessageContaining("invisible format character U+200B at index 7");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("controller\u202Ex"))
                .withMessageContaining("U+202E");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> MemberId.of("\uFEFFnode-1"))
                .withMessageContaining("U+FEFF at index 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> MemberId.of("node\u00AD-1"))
                .withMessageContaining("U+00AD");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Role.of("cafe\u0301"))
                .withMessageContaining("normalization form C")
                .withMessageContaining("from index 3 it has U+0065 U+0301 where NFC has U+00E9");
        assertThat(Role.of("caf\u00E9").name()).isEqualTo("café");
    }

    @Test
    void toStringIsTheBareName() {
        assertThat(Role.of("controller")).hasToString("controller");
        assertThat(MemberId.of("node-1")).hasToString("node-1");
    }
}
