"""How uvicorn serves the app: slow clients are dropped, connections are capped.

uvicorn waits forever for a request's line and headers (its keep-alive timer runs only between
requests, and any byte cancels it), so 500 connections dribbling headers stayed open for as long
as their clients liked. `Guarded` gives every request `http_header_timeout_s` from its first
byte (or from the connection's start) to its last header, then closes the connection, and caps
the size of a request's line and headers. Bodies are timed by the app itself
(app/web/body_guard.py); `server_options` adds uvicorn's own connection cap
(`limit_concurrency`: past it new requests get 503) and keep-alive. The deployment serves with
httptools (`TimedHttpToolsProtocol`): at 1,000 board requests a second, uvicorn's pure-Python
h11 took more CPU than the whole app (docs/benchmarks.md).

uvicorn's cap is per process, so one address holding 2,050 idle sockets made every request of
everyone else a 503. `Guarded` also caps the connections open from one address
(`http_max_connections_per_address`): one more is answered 503 and closed at once, so it never
counts against the process's cap. A trusted proxy's address is exempt (every client comes
through it; the proxy caps per address itself, docs/deployment.md).
`flashjudge serve` passes them; the compose file's uvicorn command names the same class
(`--http app.core.http_server:TimedHttpToolsProtocol`) and passes the defaults as flags
(tests/deploy/test_deploy_compose.py keeps the two equal).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.core.config import Settings, get_settings

MAX_HEADER_BYTES = 16 * 1024  # request line and headers; a session cookie and a token fit
TOO_MANY_BODY = b"too many connections open from your address; close some and retry\n"
TOO_MANY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"retry-after: 5\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(TOO_MANY_BODY), TOO_MANY_BODY))
TOO_LARGE_BODY = b"request line and headers too large\n"
TOO_LARGE = (b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
             b"connection: close\r\n"
             b"content-length: %d\r\n\r\n%s" % (len(TOO_LARGE_BODY), TOO_LARGE_BODY))


class Guarded:
    """A deadline for each request's line and headers, and a cap on connections per address,
    for either of uvicorn's HTTP protocols (mixed in before it)."""

    header_timeout_s: float | None = None  # None: FLASHJUDGE_HTTP_HEADER_TIMEOUT_S (settings)
    per_address: int | None = None  # None: FLASHJUDGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS
    open_from: ClassVar[Counter[str]] = Counter()  # address -> connections open (one loop)
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.deadline: asyncio.TimerHandle | None = None
        self.limit_s = self.header_timeout_s or settings.http_header_timeout_s
        cap = self.per_address if self.per_address is not None else \
            settings.http_max_connections_per_address
        self.cap, self.exempt = cap, settings.trusted_proxy_set
        self.address: str | None = None  # counted in open_from while open

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if self.cap and address and address not in self.exempt:
            if self.open_from[address] >= self.cap:
                cast(asyncio.Transport, transport).write(TOO_MANY)
                transport.close()
                return
            self.address = address
            self.open_from[address] += 1
        self.arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)  # type: ignore[misc]
        if self.between_requests():
            self.arm()  # the next request's first bytes (or still the first's)
        else:
            self.disarm()  # its headers are in: the app times its body

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        if self.address is not None:
            self.open_from[self.address] -= 1
            if self.open_from[self.address] <= 0:
                del self.open_from[self.address]
            self.address = None
        super().connection_lost(exc)  # type: ignore[misc]

    def between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def arm(self) -> None:
        if self.deadline is None:
            self.deadline = self.loop.call_later(self.limit_s, self.too_slow)

    def disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def too_slow(self) -> None:
        """No complete request line and headers in time: drop the connection."""
        self.deadline = None
        if self.between_requests() and not self.transport.is_closing():
            self.transport.close()


class TimedH11Protocol(Guarded, H11Protocol):
    """uvicorn's h11 protocol, guarded (h11 caps the header size itself:
    `h11_max_incomplete_event_size`)."""


class TimedHttpToolsProtocol(Guarded, HttpToolsProtocol):
    """uvicorn's httptools protocol (C: a third of the CPU h11 took per board request, the
    deployment's choice), guarded, with the header size capped as h11 caps it: more than
    MAX_HEADER_BYTES before a request's headers are complete is answered 400 and closed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_bytes = 0  # of the request whose headers are still coming

    def data_received(self, data: bytes) -> None:
        if self.between_requests():
            self.header_bytes += len(data)
            if self.header_bytes > MAX_HEADER_BYTES:
                self.refuse_headers()
                return
        super().data_received(data)
        if not self.between_requests():
            self.header_bytes = 0  # its headers are in

    def refuse_headers(self) -> None:
        self.disarm()
        if not self.transport.is_closing():
            self.transport.write(TOO_LARGE)
            self.transport.close()


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn.Config keywords for the deployment's limits (the compose flags say the same)."""
    return {"http": TimedHttpToolsProtocol, "limit_concurrency": settings.http_max_connections,
            "timeout_keep_alive": settings.http_keep_alive_s}
