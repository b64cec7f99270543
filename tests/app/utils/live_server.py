"""The app served by a real uvicorn on a free port, in a thread of the test process: for clients
that speak real HTTP (http.client, urllib, Chromium) against the test database."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from app.core.config import Settings
from app.main import create_app
from tests.app.utils.processes import wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(settings: Settings, port: int | None = None, **options: Any) -> Iterator[str]:
    """Serve create_app(settings) until the block ends; yields the base URL. `port`: a free one
    by default (a test that must name the URL beforehand, e.g. to an OpenID provider, picks it);
    `options` go to uvicorn.Config (e.g. app.core.http_server.server_options(settings))."""
    port = port or free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="live-server", daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), 30, "uvicorn to start")
    assert thread.is_alive(), "uvicorn stopped while starting"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
