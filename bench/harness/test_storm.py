"""Checks of the connection-storm client's SCRAM arithmetic and framing (harness/storm.py)
against RFC 7677's SCRAM-SHA-256 example exchange, so a storm that authenticates does so with a
correct client. Runnable with pytest; bench/security.py --smoke runs them too (run_all)."""
from __future__ import annotations

from . import storm

# RFC 7677, section 3: user "user", password "pencil".
NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_sha256_matches_rfc7677():
    keys = storm.ScramKeys("SCRAM-SHA-256")
    c = storm.ScramClient("user", "pencil", keys, nonce=NONCE)
    assert c.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert c.final(SERVER_FIRST) == CLIENT_FINAL
    c.check(SERVER_FINAL)
    try:
        c.check(b"v=" + b"A" * 44)
        raise AssertionError("a wrong server signature must be refused")
    except ValueError:
        pass


def test_salted_password_is_computed_once_per_salt():
    keys = storm.ScramKeys("SCRAM-SHA-512")
    for _ in range(3):
        storm.ScramClient("user", "pencil", keys, nonce=NONCE).final(SERVER_FIRST)
    assert keys.pbkdf2_count == 1


def test_request_framing():
    # SaslHandshake v1, header v1: size, api key 17, version 1, correlation id 7, client id.
    frame = storm.request(17, 1, 7, storm.sasl_handshake_v1("SCRAM-SHA-512"), flexible=False)
    assert frame[4:12] == bytes.fromhex("00110001" "00000007")
    assert frame.endswith(b"\x00\x0dSCRAM-SHA-512")
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    # SaslAuthenticate v2 response: error 0, null message, 3 auth bytes, lifetime, no tags.
    body = b"\x00\x00" + b"\x00" + b"\x04abc" + bytes(8) + b"\x00"
    assert storm.parse_sasl_authenticate_v2(body) == (0, None, b"abc")
    body = b"\x00\x3a" + b"\x06wrong" + b"\x01" + bytes(8) + b"\x00"
    assert storm.parse_sasl_authenticate_v2(body) == (58, "wrong", b"")


def run_all() -> int:
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
    return len(tests)
