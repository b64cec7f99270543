"""Slow clients against the API process: connections that dribble their headers
(a byte every 2 s) and connections that declare a 1 GB body and send 1 KB every 5 s, how many
the server still holds open as time passes, and whether a normal request is still answered.

Serves the checkout's app with uvicorn in this process, with the deployment's options where the
checkout has them (app/core/http_server.py), so PYTHONPATH=/path/to/other compares versions.

    PYTHONPATH=. .venv/bin/python bench/slow_clients.py [--headers 200] [--bodies 50] [--seconds 45]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import socket
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from rich.console import Console
from rich.table import Table

from app.core.config import Settings
from app.db.migrate import upgrade
from app.main import create_app

BODY_HEAD = (b"POST /login HTTP/1.1\r\nHost: judge\r\nContent-Type: application/x-www-form-"
             b"urlencoded\r\nContent-Length: 1000000000\r\n\r\n")


def deployment_options(settings: Settings) -> dict[str, Any]:
    """app.core.http_server.server_options, or nothing in a checkout from before it."""
    try:
        return importlib.import_module("app.core.http_server").server_options(settings)
    except ModuleNotFoundError:
        return {}


@contextlib.contextmanager
def served(settings: Settings) -> Iterator[tuple[str, int]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(settings), port=port, log_level="critical",
                            **deployment_options(settings))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield "127.0.0.1", port
    server.should_exit = True
    thread.join(timeout=30)


def still_open(conn: socket.socket) -> bool:
    """False once the server closed the connection (an answer may have come first)."""
    conn.setblocking(False)
    try:
        while chunk := conn.recv(65536):
            del chunk
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def nudge(conns: list[socket.socket], data: bytes) -> None:
    for conn in conns:
        with contextlib.suppress(OSError):
            conn.sendall(data)


def answered(address: tuple[str, int]) -> str:
    try:
        with urllib.request.urlopen(f"http://{address[0]}:{address[1]}/healthz", timeout=5) as r:
            return str(r.status)
    except OSError as exc:
        return f"no: {exc}"[:30]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--headers", type=int, default=200)
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=45.0)
    args = parser.parse_args()
    table = Table(title=f"{args.headers} header dribblers, {args.bodies} 1 GB body dribblers")
    for column in ("after s", "headers open", "bodies open", "/healthz"):
        table.add_column(column)
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(environment="test", secret_key="bench-secret", data_dir=Path(data),
                            sweep_interval_s=0, suite="hw4-mini")
        upgrade(settings.db_url)
        with served(settings) as address:
            heads = [socket.create_connection(address) for _ in range(args.headers)]
            nudge(heads, b"GET /healthz HTTP/1.1\r\nHost: judge\r\n")
            bodies = [socket.create_connection(address) for _ in range(args.bodies)]
            nudge(bodies, BODY_HEAD)
            start, report = time.monotonic(), 5.0
            while (elapsed := time.monotonic() - start) < args.seconds:
                nudge([c for c in heads if still_open(c)], b"X")
                if int(elapsed) % 5 == 0:
                    nudge([c for c in bodies if still_open(c)], b"u" * 1024)
                if elapsed >= report:
                    table.add_row(f"{report:.0f}", str(sum(map(still_open, heads))),
                                  str(sum(map(still_open, bodies))), answered(address))
                    report += 10.0
                time.sleep(1.0)
            for conn in heads + bodies:
                conn.close()
    Console().print(table)


if __name__ == "__main__":
    main()
