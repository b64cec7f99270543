"""Slow clients are dropped (500 slowloris connections, 50 of them declaring a
1 GB body, stayed open for the whole 90 s): headers have a deadline, a body that stops or
dribbles gets a 408 and its connection closed, and past the connection cap new requests get
503, and a request's line and headers are capped in size. A real uvicorn with the deployment's
options (app/core/http_server.py) and each of uvicorn's two HTTP protocols as guarded there
(httptools is the deployment's), no database work: the HTTP layer is the same on both
backends."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from app.core.config import Settings
from app.core.http_server import (
    MAX_HEADER_BYTES,
    TimedH11Protocol,
    TimedHttpToolsProtocol,
    server_options,
)
from tests.app.utils.live_server import live_server
from tests.service_fixtures import TEST_SECRET

WAIT_S = 10.0  # how long a test waits for the server to act (its deadlines are 1 s)


@pytest.fixture(params=[TimedHttpToolsProtocol, TimedH11Protocol],
                ids=["httptools", "h11"])
def protocol(request: pytest.FixtureRequest) -> type:
    return request.param


def guarded(protocol: type, header_timeout_s: float = 1.0, per_address: int | None = None
            ) -> type:
    """The protocol with the test's own deadline (and per-address cap)."""
    return type("Guarded", (protocol,), {"header_timeout_s": header_timeout_s,
                                         "per_address": per_address})


def quick_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(environment="test", secret_key=TEST_SECRET, data_dir=tmp_path,
                    suite="hw4-mini", sweep_interval_s=0, freeze_gc_at_start=False,
                    body_idle_timeout_s=1.0, body_min_rate_bytes_s=1000, **overrides)


@contextmanager
def served(settings: Settings, protocol: type) -> Iterator[tuple[str, int]]:
    with live_server(settings, **{**server_options(settings), "http": protocol}) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def connect(address: tuple[str, int], first: bytes = b"") -> socket.socket:
    conn = socket.create_connection(address, timeout=WAIT_S)
    if first:
        conn.sendall(first)
    return conn


def answer(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (fails if it never does)."""
    received = b""
    while chunk := conn.recv(65536):
        received += chunk
    return received


def test_a_client_that_never_finishes_its_headers_is_dropped(tmp_path, protocol):
    with served(quick_settings(tmp_path), guarded(protocol)) as address:
        silent = connect(address)
        dribbling = connect(address, b"GET /healthz HTTP/1.1\r\nHost: judge\r\nX-Slow: ")
        assert answer(silent) == b"" and answer(dribbling) == b""
        with connect(address, b"GET /healthz HTTP/1.1\r\nHost: judge\r\n\r\n") as normal:
            assert normal.recv(65536).startswith(b"HTTP/1.1 200")


def test_a_body_that_stops_coming_gets_a_408(tmp_path, protocol):
    head = (b"POST /login HTTP/1.1\r\nHost: judge\r\nContent-Type: application/x-www-form-"
            b"urlencoded\r\nContent-Length: 100000\r\n\r\nusername=alice&pass")
    with served(quick_settings(tmp_path), guarded(protocol)) as address, \
            connect(address, head) as conn:
        reply = answer(conn)
    assert reply.startswith(b"HTTP/1.1 408") and b"no part of the request body came" in reply


def test_a_body_dribbled_below_the_rate_floor_gets_a_408(tmp_path, protocol):
    head = (b"POST /login HTTP/1.1\r\nHost: judge\r\nContent-Type: application/x-www-form-"
            b"urlencoded\r\nContent-Length: 100000\r\n\r\n")
    with served(quick_settings(tmp_path), guarded(protocol)) as address, \
            connect(address, head) as conn:
        conn.settimeout(0.5)  # the client's own pace: a byte per half second
        reply = b""
        for _ in range(int(4 * WAIT_S)):
            try:
                reply = conn.recv(65536)
                break
            except TimeoutError:
                conn.sendall(b"x")
        conn.settimeout(WAIT_S)
        reply += answer(conn)
    assert reply.startswith(b"HTTP/1.1 408") and b"arrives too slowly" in reply


def test_past_the_connection_cap_a_request_gets_503(tmp_path, protocol):
    capped = quick_settings(tmp_path, http_max_connections=3)
    # the idle connections must outlive the test's request
    with served(capped, guarded(protocol, header_timeout_s=WAIT_S)) as address:
        idle = [connect(address) for _ in range(3)]
        with connect(address, b"GET /healthz HTTP/1.1\r\nHost: judge\r\n\r\n") as extra:
            reply = extra.recv(65536)
        for conn in idle:
            conn.close()
    assert reply.startswith(b"HTTP/1.1 503")


def test_one_address_cannot_hold_every_connection(tmp_path, protocol):
    """Past the per-address cap a connection from that address gets 503 and is closed, and
    never counts against the process's cap: another address is still served."""
    capped = quick_settings(tmp_path, http_max_connections=5)
    with served(capped, guarded(protocol, header_timeout_s=WAIT_S, per_address=3)) as (host,
                                                                                     port):
        idle = [connect((host, port)) for _ in range(3)]
        refused = [connect((host, port)) for _ in range(4)]  # past the cap: dropped at once
        replies = [answer(conn) for conn in refused]
        other = socket.create_connection((host, port), timeout=WAIT_S,
                                         source_address=("127.0.0.2", 0))
        with other:
            other.sendall(b"GET /healthz HTTP/1.1\r\nHost: judge\r\n\r\n")
            reply = other.recv(65536)
        for conn in idle + refused:
            conn.close()
    assert all(r.startswith(b"HTTP/1.1 503") and b"from your address" in r for r in replies)
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


def test_headers_past_the_size_cap_get_a_400_and_the_connection_closed(tmp_path, protocol):
    """A request line and headers over MAX_HEADER_BYTES (h11 counts them itself, the httptools
    protocol as app/core/http_server.py does) are refused; a normal request still gets in."""
    options = {"h11_max_incomplete_event_size": MAX_HEADER_BYTES}  # what h11 is given
    huge = b"GET /healthz HTTP/1.1\r\nHost: judge\r\nX-Big: " + b"a" * (2 * MAX_HEADER_BYTES)
    settings = quick_settings(tmp_path)
    with live_server(settings, **{**server_options(settings), **options,
                                  "http": guarded(protocol, header_timeout_s=WAIT_S)}) as url:
        host, port = url.removeprefix("http://").split(":")
        with connect((host, int(port)), huge) as conn:
            reply = answer(conn)
        with connect((host, int(port)), b"GET /healthz HTTP/1.1\r\nHost: judge\r\n\r\n") \
                as normal:
            assert normal.recv(65536).startswith(b"HTTP/1.1 200")
    assert reply.startswith(b"HTTP/1.1 400"), reply[:200]
