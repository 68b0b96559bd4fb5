#!/usr/bin/env python3
"""Generate the golden vectors of the frozen __coordination_state record format.

This script is the only source of golden-vectors/coordination-state.json.
It is standalone on purpose: it uses the Python 3 standard library only, it
has its own encoder, its own reference decoder and its own murmur2, and it
never imports or calls code of any implementation under test (Java, Rust or
Go). The vectors are written from the specification, not from an
implementation.

Usage:
    python3 golden-vectors/generate.py           # (re)write the JSON file
    python3 golden-vectors/generate.py --check   # exit 1 if the file on disk differs

Running it twice writes byte-identical output. Ids are append-only: add new
cases at the end of their list with the next free id, and never change the
bytes of an existing case (that is a format change, see README.md).

The layouts (every integer big-endian and signed; a string is an i16 byte
length followed by that many bytes of standard UTF-8, not Java's modified
UTF-8):

    key:                version i16 = 0, kind i16 (0 registration, 1 lease),
                        role string, member string (empty for kind 1)
    registration value: version i16 = 0, member string, registered_at i64
    lease value:        version i16 = 0, member string, producer_id i64,
                        producer_epoch i16, granted_at i64, deadline i64

A null value is a tombstone. An empty (zero-length) value is NOT a tombstone.
"""

import json
import os
import struct
import sys
import unicodedata

ROLE_MAX_BYTES = 249
MEMBER_MAX_BYTES = 255

KIND_REGISTRATION = 0
KIND_LEASE = 1

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coordination-state.json")

ERROR_WORDS = (
    "truncated",
    "unsupported_version",
    "unknown_kind",
    "negative_length",
    "malformed_utf8",
    "trailing_bytes",
    "invalid_name",
    "negative_token",
)


# --------------------------------------------------------------------------
# murmur2, written from the algorithm as org.apache.kafka.common.utils.Utils
# implements it (MurmurHash2, 32 bit, seed 0x9747b28c). All arithmetic is
# reduced to 32 bits; Java's `>>>` on an int is `>>` on the unsigned 32-bit
# value here.
# --------------------------------------------------------------------------

MASK32 = 0xFFFFFFFF


def murmur2(data):
    """Return Kafka's Utils.murmur2(data) as a signed 32-bit int."""
    length = len(data)
    seed = 0x9747B28C
    m = 0x5BD1E995
    r = 24

    h = (seed ^ length) & MASK32
    length4 = length // 4

    for i in range(length4):
        i4 = i * 4
        k = ((data[i4 + 0] & 0xFF)
             | ((data[i4 + 1] & 0xFF) << 8)
             | ((data[i4 + 2] & 0xFF) << 16)
             | ((data[i4 + 3] & 0xFF) << 24))
        k = (k * m) & MASK32
        k ^= k >> r
        k = (k * m) & MASK32
        h = (h * m) & MASK32
        h ^= k

    # The tail, in Kafka's switch order with fall-through: case 3, case 2,
    # case 1. Kafka masks each (signed Java) byte with 0xff; Python bytes are
    # already unsigned, and the mask is kept to mirror the algorithm.
    tail = length % 4
    base = length & ~3
    if tail == 3:
        h ^= (data[base + 2] & 0xFF) << 16
    if tail >= 2:
        h ^= (data[base + 1] & 0xFF) << 8
    if tail >= 1:
        h ^= data[base] & 0xFF
        h = (h * m) & MASK32

    h ^= h >> 13
    h = (h * m) & MASK32
    h ^= h >> 15

    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number):
    """Kafka's Utils.toPositive: clear the sign bit."""
    return number & 0x7FFFFFFF


def partition_for(role, partitions):
    return to_positive(murmur2(role.encode("utf-8"))) % partitions


# Known outputs of Kafka's Utils.murmur2. The first six are the cases of
# Kafka's own UtilsTest.testMurmur2; "1".."12345" are cited by Akka's
# Murmur2Spec as "expected correct hash values from the kafka murmur2 impl";
# the empty input is the value stated for this project. Together they cover
# every tail length (0, 1, 2, 3) and inputs with and without full chunks.
# They are ASCII only; the high-byte tail (the 0xff mask) was cross-checked
# once against the real kafka-clients jar, see README.md.
MURMUR2_KNOWN = (
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
    (b"1", -1993445489),
    (b"12", 126087238),
    (b"123", -267702483),
    (b"1234", -1614185708),
    (b"12345", -1188365604),
    (b"", 275646681),
)


def check_murmur2():
    for data, expected in MURMUR2_KNOWN:
        got = murmur2(data)
        if got != expected:
            raise AssertionError("murmur2(%r) = %d, expected %d" % (data, got, expected))


# --------------------------------------------------------------------------
# Encoder
# --------------------------------------------------------------------------

def i16(value):
    return struct.pack(">h", value)


def i64(value):
    return struct.pack(">q", value)


def raw_string(data):
    """A string field holding arbitrary bytes (used to build invalid cases)."""
    return i16(len(data)) + data


def string(text):
    # str.encode("utf-8") is standard UTF-8: a non-BMP character is one
    # 4-byte sequence, and U+0000 is the single byte 00.
    return raw_string(text.encode("utf-8"))


def registration_key(role, member):
    return i16(0) + i16(KIND_REGISTRATION) + string(role) + string(member)


def lease_key(role):
    return i16(0) + i16(KIND_LEASE) + string(role) + string("")


def registration_value(member, registered_at):
    return i16(0) + string(member) + i64(registered_at)


def lease_value(member, producer_id, producer_epoch, granted_at, deadline):
    return (i16(0) + string(member) + i64(producer_id) + i16(producer_epoch)
            + i64(granted_at) + i64(deadline))


# --------------------------------------------------------------------------
# Reference decoder. It reports the FIRST problem met left to right:
# structure checks (truncated, unsupported_version, unknown_kind,
# negative_length, malformed_utf8) as each field is read, the name check of a
# string right after that string is read, the negative_token check right
# after the token field is read, and trailing_bytes last.
# --------------------------------------------------------------------------

class DecodeError(Exception):
    def __init__(self, word, detail):
        assert word in ERROR_WORDS, word
        super().__init__("%s: %s" % (word, detail))
        self.word = word


def is_iso_control(ch):
    cp = ord(ch)
    return cp <= 0x1F or 0x7F <= cp <= 0x9F


def name_problem(text, max_bytes):
    """None for a valid role/member name, else a description."""
    size = len(text.encode("utf-8"))
    if size == 0:
        return "empty"
    if size > max_bytes:
        return "%d UTF-8 bytes, more than %d" % (size, max_bytes)
    for ch in text:
        if is_iso_control(ch):
            return "ISO control character U+%04X" % ord(ch)
        # Format characters (zero-width, bidi controls, BOM, soft hyphen) would make
        # two different names look identical in logs and dashboards.
        if unicodedata.category(ch) == "Cf":
            return "format character U+%04X" % ord(ch)
    if not unicodedata.is_normalized("NFC", text):
        # One visible name, one byte string: decomposed forms are refused.
        return "not in Unicode normalization form C"
    if text.strip(" ") == "":
        # Only U+0020 blanks are used in the vectors, so every language's
        # notion of "blank" agrees on them.
        return "blank"
    return None


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, count, what):
        remaining = len(self.data) - self.pos
        if remaining < count:
            raise DecodeError("truncated", "%s needs %d bytes at offset %d, %d remain"
                              % (what, count, self.pos, remaining))
        out = self.data[self.pos:self.pos + count]
        self.pos += count
        return out

    def i16(self, what):
        return struct.unpack(">h", self.take(2, what))[0]

    def i64(self, what):
        return struct.unpack(">q", self.take(8, what))[0]

    def string(self, what):
        length = self.i16(what + " length")
        if length < 0:
            raise DecodeError("negative_length", "%s length %d" % (what, length))
        data = self.take(length, what + " bytes")
        try:
            return data.decode("utf-8", errors="strict")
        except UnicodeDecodeError as exc:
            raise DecodeError("malformed_utf8", "%s: %s" % (what, exc))

    def version(self, what):
        version = self.i16(what + " version")
        if version != 0:
            raise DecodeError("unsupported_version", "%s version %d" % (what, version))

    def role(self):
        role = self.string("role")
        problem = name_problem(role, ROLE_MAX_BYTES)
        if problem:
            raise DecodeError("invalid_name", "role: " + problem)
        return role

    def member(self):
        member = self.string("member")
        problem = name_problem(member, MEMBER_MAX_BYTES)
        if problem:
            raise DecodeError("invalid_name", "member: " + problem)
        return member

    def finish(self):
        if self.pos != len(self.data):
            raise DecodeError("trailing_bytes", "%d bytes after the last field"
                              % (len(self.data) - self.pos))


def decode_key(data):
    r = Reader(data)
    r.version("key")
    kind = r.i16("kind")
    if kind not in (KIND_REGISTRATION, KIND_LEASE):
        raise DecodeError("unknown_kind", "kind %d" % kind)
    role = r.role()
    if kind == KIND_REGISTRATION:
        member = r.member()
    else:
        member = r.string("member")
        if member != "":
            raise DecodeError("invalid_name", "lease key member must be empty")
    r.finish()
    return {"kind": kind, "role": role, "member": member}


def decode_registration_value(data):
    r = Reader(data)
    r.version("registration value")
    member = r.member()
    registered_at = r.i64("registered_at")
    r.finish()
    return {"member": member, "registered_at": registered_at}


def decode_lease_value(data):
    r = Reader(data)
    r.version("lease value")
    member = r.member()
    producer_id = r.i64("producer_id")
    if producer_id < 0:
        raise DecodeError("negative_token", "producer_id %d" % producer_id)
    producer_epoch = r.i16("producer_epoch")
    if producer_epoch < 0:
        raise DecodeError("negative_token", "producer_epoch %d" % producer_epoch)
    granted_at = r.i64("granted_at")
    deadline = r.i64("deadline")
    r.finish()
    return {"member": member, "producer_id": producer_id, "producer_epoch": producer_epoch,
            "granted_at": granted_at, "deadline": deadline}


DECODERS = {
    "key": decode_key,
    "registration-value": decode_registration_value,
    "lease-value": decode_lease_value,
}


# --------------------------------------------------------------------------
# Valid records. Ids are append-only.
# --------------------------------------------------------------------------

T0 = 1700000000000  # 2023-11-14T22:13:20Z in epoch milliseconds
I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)
CRAB = "\U0001F980"  # 🦀, UTF-8 F0 9F A6 80


def reg(id_, comment, role, member, registered_at):
    return {"id": id_, "comment": comment, "kind": "registration", "role": role,
            "member": member, "registered_at": registered_at,
            "key": registration_key(role, member),
            "value": registration_value(member, registered_at)}


def lease(id_, comment, role, member, producer_id, producer_epoch, granted_at, deadline):
    return {"id": id_, "comment": comment, "kind": "lease", "role": role,
            "member": member, "producer_id": producer_id, "producer_epoch": producer_epoch,
            "granted_at": granted_at, "deadline": deadline,
            "key": lease_key(role),
            "value": lease_value(member, producer_id, producer_epoch, granted_at, deadline)}


def reg_tombstone(id_, comment, role, member):
    return {"id": id_, "comment": comment, "kind": "registration", "role": role,
            "member": member, "key": registration_key(role, member), "value": None}


def lease_tombstone(id_, comment, role):
    return {"id": id_, "comment": comment, "kind": "lease", "role": role,
            "key": lease_key(role), "value": None}


RECORDS = [
    reg(1, "Plain ASCII registration of member node-1 for role controller.",
        "controller", "node-1", T0),
    lease(2, "Plain lease: the example of the Rust crate docs (token 4242/7, 30 s lease "
             "from 1700000000000 to 1700000030000).",
          "controller", "node-1", 4242, 7, T0, T0 + 30000),
    reg_tombstone(3, "Registration tombstone: deregisters node-1 from controller. The key is "
                     "the key of record 1 and the value is null.",
                  "controller", "node-1"),
    lease_tombstone(4, "Lease tombstone: clears the lease of controller. The key is the key of "
                       "record 2 and the value is null.",
                    "controller"),
    reg(5, "Non-ASCII role and member: 'contrôleur' (U+00F4 is C3 B4, 11 UTF-8 bytes, 10 chars) "
           "and 'nœud-2' (U+0153 is C5 93). The length prefix counts bytes, not chars.",
        "contr\u00f4leur", "n\u0153ud-2", T0 + 1),
    reg(6, "Member with a non-BMP character: '" + CRAB + "-node-3'. U+1F980 is the 4-byte UTF-8 "
           "sequence F0 9F A6 80, not the 6-byte surrogate pair of Java's modified UTF-8.",
        "controller", CRAB + "-node-3", T0 + 5000),
    lease(7, "Smallest token and times: producer_id 0, producer_epoch 0, granted_at 0, deadline 0.",
          "controller", "node-1", 0, 0, 0, 0),
    lease(8, "producer_epoch 32767 (Short.MAX_VALUE), the last epoch before Kafka rolls the "
             "producer id.",
          "controller", "node-2", 4, 32767, T0 + 60000, T0 + 90000),
    lease(9, "producer_id above 2^32 (4294967296 + 42): all 8 bytes of the i64 matter. Epoch 0 "
             "after a fresh producer id.",
          "controller", "node-2", 4294967296 + 42, 0, T0 + 120000, T0 + 150000),
    lease(10, "Lease for a role with a non-BMP character ('" + CRAB + "-dispatch', 13 UTF-8 bytes) "
              "held by a member with one ('node-" + CRAB + "').",
          CRAB + "-dispatch", "node-" + CRAB, 77, 1, T0 + 1000, T0 + 31000),
    reg(11, "Longest valid names, ASCII: role of 249 bytes, member of 255 bytes.",
        "r" * ROLE_MAX_BYTES, "m" * MEMBER_MAX_BYTES, T0 + 2000),
    reg(12, "Longest valid names, multi-byte: role 'é' x 124 + 'r' (125 chars, 249 bytes), "
            "member '" + CRAB + "' x 63 + 'abc' (66 chars, 255 bytes). Limits count UTF-8 bytes.",
        "\u00e9" * 124 + "r", CRAB * 63 + "abc", T0 + 3000),
    reg(13, "Shortest valid names: role 'a' and member 'b', one byte each.",
        "a", "b", T0 + 4000),
    lease(14, "producer_id 9223372036854775807 (i64 max). A JSON reader must parse this integer "
              "as an exact i64, not as a double.",
          "controller", "node-3", I64_MAX, 1, T0 + 180000, T0 + 210000),
    lease_tombstone(15, "Lease tombstone for the non-BMP role '" + CRAB + "-dispatch'.",
                    CRAB + "-dispatch"),
    reg_tombstone(16, "Registration tombstone for the non-BMP member of record 6; the key equals "
                      "record 6's key.",
                  "controller", CRAB + "-node-3"),
]


# --------------------------------------------------------------------------
# Invalid cases. Each has exactly one problem, and the error is the first
# problem a left-to-right decoder meets. Ids are append-only.
# --------------------------------------------------------------------------

def bad(id_, part, error, comment, data):
    return {"id": id_, "comment": comment, "part": part, "hex": data, "error": error}


GOOD_REG_KEY = registration_key("controller", "node-1")
GOOD_LEASE_KEY = lease_key("controller")
GOOD_REG_VALUE = registration_value("node-1", T0)
GOOD_LEASE_VALUE = lease_value("node-1", 4242, 7, T0, T0 + 30000)
LEASE_FIELDS = i64(4242) + i16(7) + i64(T0) + i64(T0 + 30000)
REG_HEAD = i16(0) + i16(KIND_REGISTRATION)
LEASE_HEAD = i16(0) + i16(KIND_LEASE)
CRAB_CESU8 = b"\xed\xa0\xbe\xed\xb6\x80"  # U+1F980 as modified UTF-8 / CESU-8 writes it

INVALID = [
    # --- key ---
    bad(100, "key", "truncated",
        "Empty key: the version field is incomplete.", b""),
    bad(101, "key", "truncated",
        "Key that ends after the version: the kind field is missing.", i16(0)),
    bad(102, "key", "truncated",
        "Role length 0x7fff (32767) but only 3 bytes ('abc') follow.",
        REG_HEAD + i16(0x7FFF) + b"abc"),
    bad(103, "key", "truncated",
        "Lease key without its member field. The empty member of a lease key is still "
        "written as the 2-byte length 0000; it is not optional.",
        LEASE_HEAD + string("controller")),
    bad(104, "key", "truncated",
        "Registration key whose member length says 6 but only 5 bytes ('node-') follow.",
        REG_HEAD + string("controller") + i16(6) + b"node-"),
    bad(105, "key", "unsupported_version",
        "Key version 1; the rest is the valid registration key of record 1.",
        i16(1) + GOOD_REG_KEY[2:]),
    bad(106, "key", "unsupported_version",
        "Key version -1 (ffff); the rest is the valid lease key of record 2.",
        i16(-1) + GOOD_LEASE_KEY[2:]),
    bad(107, "key", "unknown_kind",
        "Kind 2; role and member are otherwise valid.",
        i16(0) + i16(2) + string("controller") + string("node-1")),
    bad(108, "key", "unknown_kind",
        "Kind -1 (ffff); role and empty member are otherwise valid.",
        i16(0) + i16(-1) + string("controller") + string("")),
    bad(109, "key", "negative_length",
        "Role length ffff (-1), followed by a valid member string.",
        REG_HEAD + i16(-1) + string("node-1")),
    bad(110, "key", "negative_length",
        "Member length 8000 (-32768) at the very end. A decoder that reads the length as "
        "unsigned (32768) would wrongly report truncated.",
        REG_HEAD + string("controller") + i16(-32768)),
    bad(111, "key", "malformed_utf8",
        "Role of one byte ff, which never occurs in UTF-8.",
        REG_HEAD + raw_string(b"\xff") + string("node-1")),
    bad(112, "key", "malformed_utf8",
        "Role 'contr' C0 80 'ller': C0 80 is the overlong encoding of U+0000 that Java's "
        "modified UTF-8 writes. Standard UTF-8 rejects it before any name check.",
        REG_HEAD + raw_string(b"contr\xc0\x80ller") + string("node-1")),
    bad(113, "key", "malformed_utf8",
        "Member 'node-' ED A0 80: an encoded lone surrogate (U+D800), which standard UTF-8 "
        "rejects.",
        REG_HEAD + string("controller") + raw_string(b"node-\xed\xa0\x80")),
    bad(114, "key", "malformed_utf8",
        "Lease key role 'dispatch-' F0 9F A6: the 4-byte sequence of U+1F980 cut after 3 bytes "
        "inside a correctly sized string.",
        LEASE_HEAD + raw_string(b"dispatch-\xf0\x9f\xa6") + string("")),
    bad(115, "key", "malformed_utf8",
        "Role 'x' F4 90 80 80: a 4-byte sequence for U+110000, above U+10FFFF.",
        REG_HEAD + raw_string(b"x\xf4\x90\x80\x80") + string("node-1")),
    bad(116, "key", "trailing_bytes",
        "The valid lease key of record 2 followed by one extra byte 00.",
        GOOD_LEASE_KEY + b"\x00"),
    bad(117, "key", "invalid_name",
        "Registration key with an empty role (length 0000).",
        REG_HEAD + string("") + string("node-1")),
    bad(118, "key", "invalid_name",
        "Registration key with an empty member.",
        REG_HEAD + string("controller") + string("")),
    bad(119, "key", "invalid_name",
        "Lease key whose member is 'node-1': a lease key's member must be empty.",
        LEASE_HEAD + string("controller") + string("node-1")),
    bad(120, "key", "invalid_name",
        "Role 'contr' U+0000 'ller', with U+0000 as the standard UTF-8 byte 00: valid UTF-8, "
        "but an ISO control character.",
        REG_HEAD + string("contr\u0000ller") + string("node-1")),
    bad(121, "key", "invalid_name",
        "Member 'node-1' followed by a newline (U+000A), an ISO control character.",
        REG_HEAD + string("controller") + string("node-1\n")),
    bad(122, "key", "invalid_name",
        "Role of 250 ASCII bytes, one more than the 249-byte limit.",
        REG_HEAD + string("r" * 250) + string("node-1")),
    bad(123, "key", "invalid_name",
        "Role 'é' x 125: only 125 chars but 250 UTF-8 bytes, over the 249-byte limit. The limit "
        "counts bytes, not chars or UTF-16 units.",
        LEASE_HEAD + string("\u00e9" * 125) + string("")),
    bad(124, "key", "invalid_name",
        "Role of three spaces (U+0020): blank.",
        REG_HEAD + string("   ") + string("node-1")),
    bad(125, "key", "invalid_name",
        "Role 'contr' U+007F 'ller': DEL is an ISO control character.",
        LEASE_HEAD + string("contr\u007fller") + string("")),

    # --- registration value ---
    bad(126, "registration-value", "truncated",
        "Empty registration value. A zero-length value is not a tombstone (a tombstone is a "
        "null value); it is a value cut before its version.",
        b""),
    bad(127, "registration-value", "truncated",
        "registered_at cut after 4 of its 8 bytes.",
        GOOD_REG_VALUE[:-4]),
    bad(128, "registration-value", "unsupported_version",
        "Registration value version 1; the rest is the valid value of record 1.",
        i16(1) + GOOD_REG_VALUE[2:]),
    bad(129, "registration-value", "negative_length",
        "Member length ffff (-1).",
        i16(0) + i16(-1) + i64(T0)),
    bad(130, "registration-value", "malformed_utf8",
        "Member 'node-' followed by U+1F980 as Java's modified UTF-8 (DataOutput.writeUTF) "
        "writes it: the surrogate pair ED A0 BE ED B6 80. Standard UTF-8 rejects it; the "
        "correct encoding is F0 9F A6 80.",
        i16(0) + raw_string(b"node-" + CRAB_CESU8) + i64(T0)),
    bad(131, "registration-value", "invalid_name",
        "Registration value with an empty member.",
        i16(0) + string("") + i64(T0)),
    bad(132, "registration-value", "invalid_name",
        "Member of 256 ASCII bytes, one more than the 255-byte limit.",
        i16(0) + string("m" * 256) + i64(T0)),
    bad(133, "registration-value", "invalid_name",
        "Member '" + CRAB + "' x 64: only 64 code points (128 UTF-16 units) but 256 UTF-8 bytes.",
        i16(0) + string(CRAB * 64) + i64(T0)),
    bad(134, "registration-value", "trailing_bytes",
        "The valid registration value of record 1 followed by one extra byte 00.",
        GOOD_REG_VALUE + b"\x00"),
    bad(135, "registration-value", "trailing_bytes",
        "The valid lease value of record 2 read as a registration value: producer_id is read as "
        "registered_at and 18 bytes remain. The key's kind, not the value, picks the layout.",
        GOOD_LEASE_VALUE),

    # --- lease value ---
    bad(136, "lease-value", "truncated",
        "Empty lease value. A zero-length value is not a tombstone.",
        b""),
    bad(137, "lease-value", "truncated",
        "Lease value cut inside producer_id, after 5 of its 8 bytes.",
        i16(0) + string("node-1") + i64(4242)[:5]),
    bad(138, "lease-value", "truncated",
        "Lease value cut inside deadline, the last field, after 7 of its 8 bytes.",
        GOOD_LEASE_VALUE[:-1]),
    bad(139, "lease-value", "truncated",
        "The valid registration value of record 1 read as a lease value: registered_at is read "
        "as producer_id (positive), then producer_epoch is missing.",
        GOOD_REG_VALUE),
    bad(140, "lease-value", "unsupported_version",
        "Lease value version -1 (ffff); the rest is the valid value of record 2.",
        i16(-1) + GOOD_LEASE_VALUE[2:]),
    bad(141, "lease-value", "negative_token",
        "producer_id -1 (ffffffffffffffff); everything else valid.",
        i16(0) + string("node-1") + i64(-1) + i16(7) + i64(T0) + i64(T0 + 30000)),
    bad(142, "lease-value", "negative_token",
        "producer_id -9223372036854775808 (8000000000000000, i64 min).",
        i16(0) + string("node-1") + i64(I64_MIN) + i16(7) + i64(T0) + i64(T0 + 30000)),
    bad(143, "lease-value", "negative_token",
        "producer_epoch -1 (ffff).",
        i16(0) + string("node-1") + i64(4242) + i16(-1) + i64(T0) + i64(T0 + 30000)),
    bad(144, "lease-value", "negative_token",
        "producer_epoch -32768 (8000). A decoder that reads the epoch as unsigned (32768) "
        "would wrongly accept it.",
        i16(0) + string("node-1") + i64(4242) + i16(-32768) + i64(T0) + i64(T0 + 30000)),
    bad(145, "lease-value", "invalid_name",
        "Lease value with an empty member: a lease names its holder.",
        i16(0) + string("") + LEASE_FIELDS),
    bad(146, "lease-value", "invalid_name",
        "Member 'node' U+0085 '1': NEL (C2 85) is a C1 ISO control character, valid UTF-8.",
        i16(0) + string("node\u00851") + LEASE_FIELDS),
    bad(147, "lease-value", "malformed_utf8",
        "Member 'node-' 80: a lone continuation byte.",
        i16(0) + raw_string(b"node-\x80") + LEASE_FIELDS),
    bad(148, "lease-value", "negative_length",
        "Member length fffe (-2).",
        i16(0) + i16(-2) + LEASE_FIELDS),
    bad(149, "lease-value", "trailing_bytes",
        "The valid lease value of record 2 followed by 8 extra zero bytes.",
        GOOD_LEASE_VALUE + b"\x00" * 8),
    # --- names that look like other names (appended later; ids go on from 150) ---
    bad(150, "key", "invalid_name",
        "Role 'control' U+200B 'ler': a zero-width space (E2 80 8B, category Cf) makes it "
        "look like 'controller' but be another transactional.id.",
        REG_HEAD + string("control\u200bler") + string("node-1")),
    bad(151, "key", "invalid_name",
        "Role 'controller' U+202E 'x': RIGHT-TO-LEFT OVERRIDE (E2 80 AE, Cf), a bidi control.",
        LEASE_HEAD + string("controller\u202ex") + string("")),
    bad(152, "key", "invalid_name",
        "Registration key member U+FEFF 'node-1': a byte order mark (EF BB BF, Cf) in front.",
        REG_HEAD + string("controller") + string("\ufeffnode-1")),
    bad(153, "key", "invalid_name",
        "Role 'cafe' U+0301: 'e' followed by COMBINING ACUTE ACCENT is not in NFC (NFC is "
        "U+00E9), so it would look like the role 'caf\u00e9' and be another one.",
        LEASE_HEAD + string("cafe\u0301") + string("")),
    bad(154, "registration-value", "invalid_name",
        "Registration value member 'node' U+00AD '-1': a soft hyphen (C2 AD, Cf), invisible in "
        "most fonts.",
        i16(0) + string("node\u00ad-1") + i64(T0)),
    bad(155, "lease-value", "invalid_name",
        "Lease value member 'n' U+0303 'ode-1': 'n' with COMBINING TILDE is not in NFC (NFC is "
        "U+00F1).",
        i16(0) + string("n\u0303ode-1") + LEASE_FIELDS),
]


# --------------------------------------------------------------------------
# Partitions. Ids are append-only.
# --------------------------------------------------------------------------

PARTITION_ROLES = [
    ("controller", "ASCII, 10 bytes: two full chunks and a 2-byte tail"),
    ("contr\u00f4leur", "non-ASCII (U+00F4), 11 bytes: 3-byte ASCII tail 'eur'"),
    (CRAB + "-dispatch", "non-BMP first, 13 bytes: F0 9F A6 80 in the first chunk, 1-byte tail 'h'"),
    ("dispatch-" + CRAB, "non-BMP last, 13 bytes: 1-byte tail 80, a byte above 7f that must be "
                         "masked with 0xff"),
    ("role-\u00e9", "7 bytes: 3-byte tail 2D C3 A9 whose 2nd and 3rd bytes are above 7f"),
    ("leader-a", "8 bytes: two full chunks, no tail"),
    ("a", "1 byte: no full chunk, 1-byte tail"),
    ("r" * ROLE_MAX_BYTES, "the longest role, 249 bytes: 62 chunks and a 1-byte tail"),
]
PARTITION_COUNTS = (1, 3, 50, 64, 100)


def partition_cases():
    cases = []
    next_id = 500
    for role, why in PARTITION_ROLES:
        data = role.encode("utf-8")
        hashed = murmur2(data)
        for count in PARTITION_COUNTS:
            cases.append({
                "id": next_id,
                "comment": "%s; %d partition%s." % (why, count, "" if count == 1 else "s"),
                "role": role,
                "role_utf8": data.hex(),
                "murmur2": hashed,
                "positive": to_positive(hashed),
                "partitions": count,
                "partition": partition_for(role, count),
            })
            next_id += 1
    return cases


# --------------------------------------------------------------------------
# Assembly and self-checks
# --------------------------------------------------------------------------

def check_ids(cases, first, what):
    ids = [c["id"] for c in cases]
    if ids != list(range(first, first + len(ids))):
        raise AssertionError("%s ids must run from %d without gaps: %r" % (what, first, ids))


def check_records():
    for rec in RECORDS:
        key = decode_key(rec["key"])
        kind = KIND_REGISTRATION if rec["kind"] == "registration" else KIND_LEASE
        assert key["kind"] == kind and key["role"] == rec["role"], rec["id"]
        if kind == KIND_REGISTRATION:
            assert key["member"] == rec["member"], rec["id"]
        else:
            assert key["member"] == "", rec["id"]
        if rec["value"] is None:
            continue
        if kind == KIND_REGISTRATION:
            value = decode_registration_value(rec["value"])
        else:
            value = decode_lease_value(rec["value"])
        for field, decoded in value.items():
            assert rec[field] == decoded, (rec["id"], field)


def check_invalid():
    words = set()
    parts = set()
    for case in INVALID:
        try:
            DECODERS[case["part"]](case["hex"])
        except DecodeError as exc:
            if exc.word != case["error"]:
                raise AssertionError("invalid case %d: decoder says %s, vector says %s"
                                     % (case["id"], exc, case["error"]))
        else:
            raise AssertionError("invalid case %d decodes without error" % case["id"])
        words.add(case["error"])
        parts.add(case["part"])
    missing = set(ERROR_WORDS) - words
    if missing:
        raise AssertionError("no invalid case for %s" % sorted(missing))
    if parts != set(DECODERS):
        raise AssertionError("parts used: %s" % sorted(parts))


def hexed(data):
    return None if data is None else data.hex()


def build():
    check_murmur2()
    check_ids(RECORDS, 1, "record")
    check_ids(INVALID, 100, "invalid")
    check_records()
    check_invalid()
    partitions = partition_cases()

    records = []
    for rec in RECORDS:
        out = dict(rec)
        out["key"] = hexed(rec["key"])
        out["value"] = hexed(rec["value"])
        records.append(out)
    invalid = []
    for case in INVALID:
        out = dict(case)
        out["hex"] = hexed(case["hex"])
        invalid.append(out)

    document = {
        "format": "__coordination_state records, key version 0, value version 0",
        "generator": "golden-vectors/generate.py (standalone; see README.md)",
        "errors": list(ERROR_WORDS),
        "records": records,
        "invalid": invalid,
        "partitions": partitions,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    text = build()
    if argv[1:] == ["--check"]:
        try:
            with open(OUTPUT, encoding="utf-8") as handle:
                current = handle.read()
        except FileNotFoundError:
            current = None
        if current != text:
            sys.stderr.write("%s is not what generate.py produces\n" % OUTPUT)
            return 1
        print("%s is up to date" % OUTPUT)
        return 0
    if argv[1:]:
        sys.stderr.write("usage: generate.py [--check]\n")
        return 2
    with open(OUTPUT, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    print("wrote %s: %d records, %d invalid, %d partitions"
          % (OUTPUT, len(RECORDS), len(INVALID), len(partition_cases())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
