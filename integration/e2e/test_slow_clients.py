"""Slow clients: a connection has a fixed time to deliver its request head (and body), which bytes
trickling in do not extend, and a few client addresses cannot hold every connection slot."""

from __future__ import annotations

import re
import selectors
import socket
import time

import requests

ATTACKERS = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]  # all loopback on Linux
PER_ATTACKER = 128  # 4 × 128 = 512, the default max-connections: before, they filled every slot
HEAD_TIMEOUT = 3


def _metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert match, f"{name} missing from /metrics"
    return float(match.group(1))


def _open_from(address: str, port: int) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((address, 0))
    sock.settimeout(2)
    try:
        sock.connect(("127.0.0.1", port))
    except OSError:
        sock.close()
        return None
    sock.setblocking(False)
    return sock


class Trickler:
    """Open connections that send one header line per second and never finish the head."""

    def __init__(self):
        self.open: dict[socket.socket, float] = {}
        self.closed_after: dict[socket.socket, float] = {}  # seconds from open to the server's close
        self.selector = selectors.DefaultSelector()

    def add(self, sock: socket.socket):
        sock.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        self.open[sock] = time.monotonic()
        self.selector.register(sock, selectors.EVENT_READ)

    def _close(self, sock: socket.socket):
        self.closed_after[sock] = time.monotonic() - self.open.pop(sock)
        self.selector.unregister(sock)
        sock.close()

    def step(self, seconds: float):
        """Sends a byte line on every open connection, then watches for closes for `seconds`."""
        for sock in list(self.open):
            try:
                sock.send(b"X-Slow: 1\r\n")
            except OSError:
                self._close(sock)
        until = time.monotonic() + seconds
        while self.open and time.monotonic() < until:
            for key, _ in self.selector.select(timeout=max(0.01, until - time.monotonic())):
                sock = key.fileobj
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self._close(sock)

    def close_all(self):
        for sock in list(self.open):
            self._close(sock)


def test_four_addresses_of_slow_clients_cannot_lock_out_an_honest_client(start_server):
    server = start_server(REQUEST_HEAD_TIMEOUT=HEAD_TIMEOUT)
    trickler = Trickler()
    refused = 0
    started = time.monotonic()
    try:
        for address in ATTACKERS:
            for _ in range(PER_ATTACKER):
                sock = _open_from(address, server.port)
                if sock is None:
                    refused += 1
                else:
                    trickler.add(sock)
        trickler.step(0.5)
        # The honest client gets in and answers promptly (before, every slot was taken)...
        t0 = time.monotonic()
        assert requests.get(server.url + "/healthz", timeout=2).status_code == 200
        assert time.monotonic() - t0 < 2
        # ...because each address holds at most its share (max-connections-per-ip, default 32); the
        # rest were closed at once. Under load the server may not have accepted (and refused) every
        # queued connection yet: wait until it has counted all the refusals it owes, then look.
        owed = 4 * PER_ATTACKER - refused - 4 * 32
        deadline = time.monotonic() + 10
        while _metric(server.metrics(), "pricesvc_http_connections_refused_total") < owed:
            assert time.monotonic() < deadline, "the server did not refuse the connections past its limit"
            trickler.step(0.2)
        trickler.step(0.5)
        held_sockets = set(trickler.open)
        held = len(held_sockets)
        assert 0 < held <= 4 * 32, held

        # Trickling a line every second does not keep a connection: the head deadline closes it.
        while trickler.open and time.monotonic() - started < 20:
            trickler.step(1.0)
        assert not trickler.open, f"{len(trickler.open)} slow connections still open after 20 s"
        slow_closes = [seconds for sock, seconds in trickler.closed_after.items() if sock in held_sockets]
        assert len(slow_closes) == held, (len(slow_closes), held)
        assert all(HEAD_TIMEOUT - 0.5 <= seconds <= HEAD_TIMEOUT + 4 for seconds in slow_closes), slow_closes
    finally:
        trickler.close_all()

    metrics = server.metrics()
    assert _metric(metrics, "pricesvc_http_receive_deadline_closed_total") >= held
    assert _metric(metrics, "pricesvc_http_connections_refused_total") >= 4 * PER_ATTACKER - held - refused
    assert requests.get(server.url + "/healthz", timeout=2).status_code == 200


def test_a_body_that_trickles_is_cut_off_at_the_body_deadline(start_server):
    server = start_server(REQUEST_BODY_TIMEOUT=2)
    sock = _open_from("127.0.0.1", server.port)
    assert sock is not None
    sock.setblocking(True)
    sock.settimeout(1.5)
    sock.sendall(b"POST /rest/v1/rpc/price_medians HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n")
    started = time.monotonic()
    closed_after = None
    try:
        while time.monotonic() - started < 15:
            try:
                sock.sendall(b" ")
                data = sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if not data or data.startswith(b"HTTP/1.1 "):
                closed_after = time.monotonic() - started
                break
    finally:
        sock.close()
    assert closed_after is not None, "a body trickling one byte a second kept its connection for 15 s"
    assert 1.5 <= closed_after <= 6, closed_after


def test_the_per_address_limit_is_a_setting_and_keeps_other_addresses_in(start_server):
    server = start_server(MAX_CONNECTIONS_PER_IP=4)
    held = [sock for sock in (_open_from("127.0.0.2", server.port) for _ in range(10)) if sock is not None]
    try:
        # The surplus is closed right after accept: reading it ends at once.
        survivors = []
        deadline = time.monotonic() + 5
        for sock in held:
            sock.setblocking(True)
            sock.settimeout(max(0.05, min(0.3, deadline - time.monotonic())))
            try:
                if sock.recv(1) == b"":
                    continue
            except socket.timeout:
                survivors.append(sock)
            except OSError:
                continue
        assert len(survivors) == 4, len(survivors)
        # Another address is not affected.
        assert requests.get(server.url + "/healthz", timeout=2).status_code == 200
    finally:
        for sock in held:
            sock.close()
