"""How uvicorn serves the app: slow clients are dropped, connections are capped.

uvicorn waits forever for a request's line and headers (its keep-alive timer runs only between
requests, and any byte cancels it), so 500 connections dribbling headers stayed open for as long
as their clients liked. `TimedH11Protocol` gives every request `http_header_timeout_s` from its
first byte (or from the connection's start) to its last header, then closes the connection.
Bodies are timed by the app itself (app/web/body_guard.py); `server_options` adds uvicorn's own
connection cap (`limit_concurrency`: past it new requests get 503), keep-alive and header size.
`flashjudge serve` passes them; the compose file's uvicorn command names the same class
(`--http app.core.http_server:TimedH11Protocol`) and passes the defaults as flags
(tests/deploy/test_deploy_compose.py keeps the two equal).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from app.core.config import Settings, get_settings

MAX_HEADER_BYTES = 16 * 1024  # request line and headers; a session cookie and a token fit


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's line and headers."""

    header_timeout_s: float | None = None  # None: FLASHJUDGE_HTTP_HEADER_TIMEOUT_S (settings)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline: asyncio.TimerHandle | None = None
        self.limit_s = self.header_timeout_s or get_settings().http_header_timeout_s

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.between_requests():
            self.arm()  # the next request's first bytes (or still the first's)
        else:
            self.disarm()  # its headers are in: the app times its body

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        super().connection_lost(exc)

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


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn.Config keywords for the deployment's limits (the compose flags say the same)."""
    return {"http": TimedH11Protocol, "limit_concurrency": settings.http_max_connections,
            "timeout_keep_alive": settings.http_keep_alive_s,
            "h11_max_incomplete_event_size": MAX_HEADER_BYTES}
