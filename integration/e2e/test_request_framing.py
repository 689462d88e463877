"""Strict framing (RFC 9112 §6.3): a request whose body length two parsers could read differently is
answered 400 and its connection closed, so nothing after it can be read as a second, smuggled request."""

from __future__ import annotations

import json
import socket
import time

import pytest

READ_DEADLINE = 5  # seconds to get an answer and, when the server closes, the end of the stream


def exchange(server, data: bytes, then: bytes = b"") -> tuple[bytes, bool]:
    """Sends `data` (and `then` right after), reads until the server closes or READ_DEADLINE passes.
    Returns what came back and whether the server closed the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=READ_DEADLINE) as sock:
        sock.sendall(data + then)
        received = b""
        deadline = time.monotonic() + READ_DEADLINE
        while time.monotonic() < deadline:
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                return received, False
            except ConnectionResetError:
                return received, True
            if not chunk:
                return received, True
            received += chunk
        return received, False


def responses(received: bytes) -> list[tuple[int, dict, bytes]]:
    """The HTTP/1.1 responses in `received`, each as (status, lower-cased headers, body)."""
    out = []
    rest = received
    while rest.startswith(b"HTTP/1.1 "):
        head, _, rest = rest.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        out.append((int(lines[0].split()[1]), headers, rest[:length]))
        rest = rest[length:]
    return out


SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

AMBIGUOUS = {
    "differing duplicate Content-Length": (
        b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
    "whitespace before the colon of Transfer-Encoding": (
        b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
    "Content-Length together with Transfer-Encoding": (
        b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
    "a transfer coding other than chunked": (
        b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: gzip\r\n\r\n{}"),
    "whitespace before the colon of another header": (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Anything : 1\r\n\r\n"),
    "an auth route with differing Content-Length": (
        b"POST /auth/v1/signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
}


@pytest.mark.parametrize("case", list(AMBIGUOUS))
def test_ambiguous_framing_is_400_and_the_connection_is_closed(server, case):
    received, closed = exchange(server, AMBIGUOUS[case], then=SMUGGLED)
    answers = responses(received)
    # One answer only: the request after it is never read as a second one.
    assert [status for status, _, _ in answers] == [400], received[:600]
    assert closed, "the server must close the connection after refusing the framing"
    status, headers, body = answers[0]
    assert headers.get("connection") == "close"
    error = json.loads(body)
    if b"/auth/v1/" in AMBIGUOUS[case]:
        assert error["error_code"] == "bad_request" and "Malformed request" in error["msg"]
    else:
        assert error["code"] == "PGRST400" and error["message"].startswith("Malformed request: ")


def test_the_early_413_uses_the_same_length_as_the_parser(start_server):
    # The first Content-Length is small, the last one huge: before, the 413 check read the last one and
    # libmicrohttpd the first. Now either would be refused as ambiguous, never half-accepted.
    server = start_server(MAX_BODY_BYTES=1024)
    received, closed = exchange(server, b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\n"
                                        b"Content-Length: 2\r\nContent-Length: 999999\r\n\r\n{}")
    assert [status for status, _, _ in responses(received)] == [400] and closed
    # One declared length over the limit is still the 413 it was.
    received, _ = exchange(server, b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\n"
                                   b"Content-Length: 999999\r\n\r\n")
    assert [status for status, _, _ in responses(received)] == [413], received[:300]


def test_well_framed_requests_keep_their_connection(server):
    # A repeated but identical Content-Length is allowed (RFC 9112 §6.3 lets a server accept it).
    first = (b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
             b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=READ_DEADLINE) as sock:
        sock.sendall(first)
        received = b""
        deadline = time.monotonic() + READ_DEADLINE
        while len(responses(received)) < 2 and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            assert chunk, f"the server closed a well-framed connection: {received!r}"
            received += chunk
        assert [status for status, _, _ in responses(received)] == [405, 200], received[:600]
        # Chunked alone is fine too, on the same connection.
        sock.sendall(b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        more = b""
        while not responses(more) and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            assert chunk, "the server closed a well-framed chunked request's connection"
            more += chunk
        assert [status for status, _, _ in responses(more)] == [405]
