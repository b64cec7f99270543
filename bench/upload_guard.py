"""How the front door treats large uploads: for each case the answer a simple
client (urllib: sends everything, then reads) gets, the seconds until then, and the most bytes the
server held in its temp dir meanwhile (Starlette spools upload parts over 1 MB there).

Serves the checkout's app with uvicorn in this process (SQLite in a temp dir), so running it from
another checkout (PYTHONPATH=/path/to/other) compares two versions of the code.

    PYTHONPATH=. .venv/bin/python bench/upload_guard.py [--anonymous-mb 300] [--oversize-mb 40]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from rich.console import Console
from rich.table import Table

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.main import create_app

CHUNK = 1 << 20
TAIL = b"\r\n--B--\r\n"
HEAD = (b'--B\r\nContent-Disposition: form-data; name="language"\r\n\r\nc-program\r\n--B\r\n'
        b'Content-Disposition: form-data; name="files"; filename="hw4.c"\r\n\r\n')


class TempWatch:
    """Polls every 5 ms the size of the files this process holds open under the temp dir (they
    are unlinked at once, so only /proc/self/fd sees them) and keeps the peak."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.peak, self.stop = str(folder), 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def held(self) -> int:
        total = 0
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{fd}").startswith(self.folder):
                    total += os.stat(f"/proc/self/fd/{fd}").st_size
        return total

    def run(self) -> None:
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, self.held())

    def __enter__(self) -> TempWatch:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


@contextlib.contextmanager
def served(settings: Settings) -> Iterator[str]:
    """uvicorn (the same server the deployment runs) in a thread, on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join()


def body(mb: int) -> Iterator[bytes]:
    yield HEAD
    for _ in range(mb):
        yield b"x" * CHUNK
    yield TAIL


def send(url: str, headers: dict[str, str], data: bytes | Iterator[bytes]) -> str:
    request = urllib.request.Request(f"{url}/api/submissions", data=data, method="POST",
                                     headers={"Content-Type": "multipart/form-data; boundary=B",
                                              **headers})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return f"{response.status}"
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {json.loads(exc.read())['detail'][:60]}"
    except (urllib.error.URLError, OSError) as exc:
        return f"no answer: {getattr(exc, 'reason', exc)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--anonymous-mb", type=int, default=300)
    parser.add_argument("--oversize-mb", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        spool = Path(data) / "tmp"
        spool.mkdir()
        tempfile.tempdir = str(spool)  # where Starlette's SpooledTemporaryFile rolls over
        settings = Settings(environment="test", secret_key="bench-secret", data_dir=Path(data),
                            sweep_interval_s=0, suite="hw4-mini")
        upgrade(settings.db_url)
        with session_scope(settings.db_url) as db:
            user = users.add_user(db, "bench", "student", "bench passphrase")
            token = {"Authorization": f"Bearer {users.issue_token(db, user, 'bench', None)}"}
        sized = HEAD + b"x" * (args.oversize_mb * CHUNK) + TAIL
        cases = [(f"anonymous, chunked, {args.anonymous_mb} MB", {}, body(args.anonymous_mb)),
                 (f"token, Content-Length, {args.oversize_mb} MB", token, sized),
                 (f"token, chunked, {args.oversize_mb} MB", token, body(args.oversize_mb))]
        table = Table(title="uploads over the limit (2 MB of sources)")
        for column in ("case", "answer", "seconds", "peak temp MB"):
            table.add_column(column)
        with served(settings) as url:
            for name, headers, data in cases:
                with TempWatch(spool) as watch:
                    start = time.perf_counter()
                    answer = send(url, headers, data)
                    seconds = time.perf_counter() - start
                table.add_row(name, answer, f"{seconds:.2f}", f"{watch.peak / CHUNK:.0f}")
        Console().print(table)


if __name__ == "__main__":
    main()
