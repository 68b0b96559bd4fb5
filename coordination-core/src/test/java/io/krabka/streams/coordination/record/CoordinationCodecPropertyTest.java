package io.krabka.streams.coordination.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationRecord.Lease;
import io.krabka.streams.coordination.record.CoordinationRecord.Registration;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Properties of the codec over generated records and bytes. Each seed is one
 * reproducible run of many cases; a failure message names the seed and the case.
 */
class CoordinationCodecPropertyTest {

    private static final int CASES_PER_SEED = 2_000;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1L, 42L, 20261129L})
    void everyValidKeyAndValueRoundTrips(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES_PER_SEED; i++) {
            CoordinationKey key = key(random);
            CoordinationRecord value = value(random);
            assertThat(CoordinationCodec.decodeKey(CoordinationCodec.encodeKey(key)))
                    .as("seed %d case %d", seed, i)
                    .isEqualTo(key);
            assertThat(CoordinationCodec.decodeValue(value.kind(), CoordinationCodec.encodeValue(value)))
                    .as("seed %d case %d", seed, i)
                    .contains(value);
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1L, 42L, 20261129L})
    void arbitraryBytesDecodeOrThrowOnlyTheTypedException(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES_PER_SEED; i++) {
            byte[] bytes = new byte[random.nextInt(65)];
            random.nextBytes(bytes);
            // Small length fields are likelier to hit the deeper branches.
            if (bytes.length > 5 && random.nextBoolean()) {
                bytes[0] = 0;
                bytes[1] = 0;
                bytes[4] = 0;
            }
            for (RecordKind kind : RecordKind.values()) {
                decodeOrTyped(() -> CoordinationCodec.decodeValue(kind, bytes));
            }
            decodeOrTyped(() -> CoordinationCodec.decodeKey(bytes));
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1L, 42L, 20261129L})
    void damagedValidRecordsThrowOnlyTheTypedExceptionAndTruncationAlwaysThrows(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES_PER_SEED; i++) {
            CoordinationRecord value = value(random);
            byte[] bytes = CoordinationCodec.encodeValue(value);
            byte[] truncated = Arrays.copyOf(bytes, random.nextInt(bytes.length));
            byte[] flipped = bytes.clone();
            flipped[random.nextInt(flipped.length)] = (byte) random.nextInt(256);
            decodeOrTyped(() -> CoordinationCodec.decodeValue(value.kind(), flipped));
            assertThatThrownBy(() -> CoordinationCodec.decodeValue(value.kind(), truncated))
                    .as("seed %d case %d: %d of %d bytes", seed, i, truncated.length, bytes.length)
                    .isInstanceOf(MalformedRecordException.class);
        }
    }

    private static void decodeOrTyped(Runnable decode) {
        try {
            decode.run();
        } catch (MalformedRecordException expected) {
            assertThat(expected.problem()).isNotNull();
        }
    }

    private static CoordinationKey key(SplittableRandom random) {
        Role role = Role.of(name(random, Role.MAX_ROLE_LEN));
        return random.nextBoolean()
                ? CoordinationKey.lease(role)
                : CoordinationKey.registration(role, MemberId.of(name(random, MemberId.MAX_MEMBER_ID_LEN)));
    }

    private static CoordinationRecord value(SplittableRandom random) {
        MemberId member = MemberId.of(name(random, MemberId.MAX_MEMBER_ID_LEN));
        if (random.nextBoolean()) {
            return new Registration(member, random.nextLong());
        }
        return new Lease(
                member,
                random.nextLong(Long.MAX_VALUE),
                (short) random.nextInt(Short.MAX_VALUE + 1),
                random.nextLong(),
                random.nextLong());
    }

    /** A valid name mixing ASCII, Latin-1, CJK and characters outside the BMP, up to the byte limit. */
    private static String name(SplittableRandom random, int maxBytes) {
        StringBuilder name = new StringBuilder();
        int target = 1 + random.nextInt(random.nextInt(10) == 0 ? maxBytes : 24);
        while (true) {
            int codePoint = switch (random.nextInt(4)) {
                case 0 -> random.nextInt('!', '~' + 1);
                case 1 -> random.nextInt(0xC0, 0x100);
                case 2 -> random.nextInt(0x4E00, 0x5000);
                default -> random.nextInt(0x1F300, 0x1FB00);
            };
            String next = name + Character.toString(codePoint);
            if (next.getBytes(StandardCharsets.UTF_8).length > Math.min(target, maxBytes)) {
                return name.length() == 0 ? "x" : name.toString();
            }
            name.append(Character.toChars(codePoint));
        }
    }
}
