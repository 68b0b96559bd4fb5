#!/usr/bin/env python3
"""Generate the golden vectors of the member address records (topic <coordination topic>-members).

This script is the only source of golden-vectors/member-addresses.json. Like
generate.py it is standalone: Python 3 standard library only, its own encoder
and its own reference decoder, written from the layout in README.md ("Member
addresses"). It borrows only the byte helpers and the name rules of
generate.py, which is itself written from the spec; it never imports or calls
code of an implementation under test.

Usage:
    python3 golden-vectors/generate_member_addresses.py           # (re)write the JSON
    python3 golden-vectors/generate_member_addresses.py --check   # exit 1 if the file differs

The layouts (big-endian, signed; a string is an i16 byte length and that many
bytes of standard UTF-8):

    key:    version i16 = 0, member string
    value:  version i16 = 0, url string, written_at i64 (epoch ms)

A null value is a tombstone: the member withdrew its address.
"""

import json
import os
import struct
import sys

from generate import MEMBER_MAX_BYTES, i16, i64, name_problem, raw_string, string

URL_MAX_BYTES = 2048
OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "member-addresses.json")

ERROR_WORDS = (
    "truncated",
    "unsupported_version",
    "negative_length",
    "malformed_utf8",
    "trailing_bytes",
    "invalid_name",
    "invalid_url",
)

# The worked example of README.md, written out by hand from the layout (not by
# this encoder): the generator refuses to write if its encoder disagrees.
WORKED_KEY = "0000" "0006" "6e6f64652d31"
WORKED_VALUE = ("0000" "0014" "687474703a2f2f31302e302e302e373a38303830"
                "0000018bcfe56800")


def key(member):
    return i16(0) + string(member)


def value(url, written_at):
    return i16(0) + string(url) + i64(written_at)


def url_problem(url):
    """None for a valid url, else a description. The rules of README.md, checked in this order."""
    size = len(url.encode("utf-8"))
    if size == 0:
        return "empty"
    if size > URL_MAX_BYTES:
        return "%d bytes, more than %d" % (size, URL_MAX_BYTES)
    for ch in url:
        if not 0x21 <= ord(ch) <= 0x7E:
            return "character U+%04X is not printable ASCII" % ord(ch)
    for scheme in ("http://", "https://"):
        if url.startswith(scheme):
            rest = url[len(scheme):]
            if rest == "" or rest[0] in "/?#":
                return "no host after " + scheme
            return None
    return "does not start with http:// or https://"


class DecodeError(Exception):
    def __init__(self, word, detail):
        assert word in ERROR_WORDS, word
        super().__init__("%s: %s" % (word, detail))
        self.word = word


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, count, what):
        if len(self.data) - self.pos < count:
            raise DecodeError("truncated", "%s needs %d bytes at offset %d" % (what, count, self.pos))
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

    def finish(self):
        if self.pos != len(self.data):
            raise DecodeError("trailing_bytes", "%d bytes after the last field" % (len(self.data) - self.pos))


def decode_key(data):
    r = Reader(data)
    r.version("key")
    member = r.string("member")
    problem = name_problem(member, MEMBER_MAX_BYTES)
    if problem:
        raise DecodeError("invalid_name", "member: " + problem)
    r.finish()
    return {"member": member}


def decode_value(data):
    r = Reader(data)
    r.version("value")
    url = r.string("url")
    problem = url_problem(url)
    if problem:
        raise DecodeError("invalid_url", "url: " + problem)
    written_at = r.i64("written_at")
    r.finish()
    return {"url": url, "written_at": written_at}


def record(id_, comment, member, url, written_at):
    return {"id": id_, "comment": comment, "member": member, "url": url, "written_at": written_at,
            "key": key(member), "value": value(url, written_at)}


def tombstone(id_, comment, member):
    return {"id": id_, "comment": comment, "member": member, "key": key(member), "value": None}


LONG_URL = "http://10.0.0.1:8080/" + "a" * (URL_MAX_BYTES - len("http://10.0.0.1:8080/"))

RECORDS = [
    record(1, "The worked example of README.md: node-1 answers at http://10.0.0.7:8080, written at 1700000000000.",
           "node-1", "http://10.0.0.7:8080", 1700000000000),
    record(2, "https, an IPv6 literal in brackets and a context path; a non-ASCII member 'nœud-2' (U+0153 is C5 93).",
           "nœud-2", "https://[fd00::7]:8443/orders", 1700000000001),
    record(3, "A Kubernetes DNS name with a path; a member with a non-BMP character (U+1F980 is F0 9F A6 80).",
           "🦀-node-3", "http://orders-0.orders.default.svc.cluster.local:8080/api", 1700000005000),
    tombstone(4, "Tombstone: node-1 withdrew its address on a graceful stop. The key is the key of record 1.", "node-1"),
    record(5, "A url of exactly 2048 bytes, the longest allowed.", "node-5", LONG_URL, 1700000000000),
    record(6, "A member of 255 UTF-8 bytes, the longest allowed; written_at 0 and a query in the url.",
           "m" * 255, "http://127.0.0.1:8080/?x=1", 0),
    record(7, "written_at is any i64: the largest.", "node-7", "http://192.168.1.9", 9223372036854775807),
]


def invalid(id_, comment, part, data, error):
    return {"id": id_, "comment": comment, "part": part, "hex": data, "error": error}


GOOD_VALUE_TAIL = i64(1700000000000)

INVALID = [
    invalid(100, "Empty key.", "key", b"", "truncated"),
    invalid(101, "Key version 1.", "key", i16(1) + string("node-1"), "unsupported_version"),
    invalid(102, "Key member length ffff (-1).", "key", i16(0) + bytes.fromhex("ffff"), "negative_length"),
    invalid(103, "Key member length 6 with 5 bytes.", "key", i16(0) + i16(6) + b"node-", "truncated"),
    invalid(104, "Key member with the overlong NUL c0 80.", "key", i16(0) + raw_string(b"n\xc0\x80"), "malformed_utf8"),
    invalid(105, "Key member empty.", "key", i16(0) + string(""), "invalid_name"),
    invalid(106, "Key member blank.", "key", i16(0) + string("  "), "invalid_name"),
    invalid(107, "Key member with a control character U+0007.", "key", i16(0) + string("node\x07"), "invalid_name"),
    invalid(108, "Key with one byte after the member.", "key", key("node-1") + b"\x00", "trailing_bytes"),
    invalid(109, "Empty value (not a tombstone: a tombstone is a null value).", "value", b"", "truncated"),
    invalid(110, "Value version 1.", "value", i16(1) + string("http://10.0.0.7:8080") + GOOD_VALUE_TAIL,
            "unsupported_version"),
    invalid(111, "Value url length 8000 (-32768).", "value", i16(0) + bytes.fromhex("8000"), "negative_length"),
    invalid(112, "Value url with an encoded surrogate ed a0 80.", "value",
            i16(0) + raw_string(b"http://\xed\xa0\x80") + GOOD_VALUE_TAIL, "malformed_utf8"),
    invalid(113, "Value url empty.", "value", i16(0) + string("") + GOOD_VALUE_TAIL, "invalid_url"),
    invalid(114, "Value url of another scheme.", "value", i16(0) + string("ftp://10.0.0.7") + GOOD_VALUE_TAIL,
            "invalid_url"),
    invalid(115, "Value url with an upper-case scheme: the scheme is written in lower case.", "value",
            i16(0) + string("HTTP://10.0.0.7") + GOOD_VALUE_TAIL, "invalid_url"),
    invalid(116, "Value url with a space.", "value", i16(0) + string("http://10.0.0.7/a b") + GOOD_VALUE_TAIL,
            "invalid_url"),
    invalid(117, "Value url with valid UTF-8 outside ASCII (a host name must be written in punycode).", "value",
            i16(0) + string("http://bücher.example") + GOOD_VALUE_TAIL, "invalid_url"),
    invalid(118, "Value url with DEL (7f).", "value", i16(0) + string("http://10.0.0.7/\x7f") + GOOD_VALUE_TAIL,
            "invalid_url"),
    invalid(119, "Value url without a host.", "value", i16(0) + string("http://") + GOOD_VALUE_TAIL, "invalid_url"),
    invalid(120, "Value url whose host is empty: a path right after the scheme.", "value",
            i16(0) + string("https:///orders") + GOOD_VALUE_TAIL, "invalid_url"),
    invalid(121, "Value url of 2049 bytes.", "value", i16(0) + string(LONG_URL + "a") + GOOD_VALUE_TAIL,
            "invalid_url"),
    invalid(122, "Value written_at cut to 7 bytes.", "value", i16(0) + string("http://10.0.0.7") + i64(0)[:7],
            "truncated"),
    invalid(123, "Value with one byte after written_at.", "value",
            value("http://10.0.0.7", 1700000000000) + b"\x00", "trailing_bytes"),
    invalid(124, "Value url that breaks a rule, then a cut written_at: the url is reported (left to right).", "value",
            i16(0) + string("ftp://x") + b"\x00", "invalid_url"),
]


def check():
    assert key("node-1").hex() == WORKED_KEY, key("node-1").hex()
    assert value("http://10.0.0.7:8080", 1700000000000).hex() == WORKED_VALUE
    assert len(LONG_URL.encode("utf-8")) == URL_MAX_BYTES
    for lst, first in ((RECORDS, 1), (INVALID, 100)):
        ids = [entry["id"] for entry in lst]
        assert ids == list(range(first, first + len(lst))), ids
    for rec in RECORDS:
        assert decode_key(rec["key"]) == {"member": rec["member"]}, rec["id"]
        if rec["value"] is not None:
            assert decode_value(rec["value"]) == {"url": rec["url"], "written_at": rec["written_at"]}, rec["id"]
    for case in INVALID:
        decode = decode_key if case["part"] == "key" else decode_value
        try:
            decode(case["hex"])
        except DecodeError as exc:
            assert exc.word == case["error"], (case["id"], exc.word, str(exc))
        else:
            raise AssertionError("invalid case %d decoded" % case["id"])
    assert {case["error"] for case in INVALID} == set(ERROR_WORDS)


def build():
    check()
    records = []
    for rec in RECORDS:
        out = dict(rec)
        out["key"] = rec["key"].hex()
        out["value"] = None if rec["value"] is None else rec["value"].hex()
        records.append(out)
    invalid_cases = []
    for case in INVALID:
        out = dict(case)
        out["hex"] = case["hex"].hex()
        invalid_cases.append(out)
    document = {
        "format": "member address records of <coordination topic>-members, key version 0, value version 0",
        "generator": "golden-vectors/generate_member_addresses.py (standalone; see README.md)",
        "errors": list(ERROR_WORDS),
        "records": records,
        "invalid": invalid_cases,
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
            sys.stderr.write("%s is not what generate_member_addresses.py produces\n" % OUTPUT)
            return 1
        print("%s is up to date" % OUTPUT)
        return 0
    if argv[1:]:
        sys.stderr.write("usage: generate_member_addresses.py [--check]\n")
        return 2
    with open(OUTPUT, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    print("wrote %s: %d records, %d invalid" % (OUTPUT, len(RECORDS), len(INVALID)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
