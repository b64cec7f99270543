"""Custom-run uploads against their limits: how many of 20 uploads sent at once
get a slot (limit 5 per hour), and the most bytes an upload whose input is longer than its header
announces puts on disk before its refusal (the temp dir Starlette spooled to, plus the custom-run
scratch dir).

Serves the checkout's app with uvicorn in this process (SQLite in a temp dir), so running it from
another checkout (PYTHONPATH=/path/to/other) compares two versions of the code.

    PYTHONPATH=. .venv/bin/python bench/custom_upload.py [--pad-mb 40]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import uvicorn
from rich.console import Console
from rich.table import Table

from app.accounts import users
from app.core.config import Settings
from app.db.migrate import upgrade
from app.db.session import session_scope
from app.main import create_app
from kernels.fileformat import write_input

MB = 1 << 20


class DiskWatch:
    """Polls every 5 ms the bytes under `folders`: files this process holds open there (spooled
    temp files are unlinked at once) and files still on disk; keeps the peak."""

    def __init__(self, *folders: Path) -> None:
        self.folders, self.peak, self.stop = [str(f) for f in folders], 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def held(self) -> int:
        seen: dict[tuple[int, int], int] = {}
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{fd}").startswith(tuple(self.folders)):
                    st = os.stat(f"/proc/self/fd/{fd}")
                    seen[st.st_dev, st.st_ino] = st.st_size
        for folder in self.folders:
            for path in Path(folder).rglob("*"):
                with contextlib.suppress(OSError):
                    st = path.stat()
                    if path.is_file():
                        seen[st.st_dev, st.st_ino] = st.st_size
        return sum(seen.values())

    def run(self) -> None:
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, self.held())

    def __enter__(self) -> DiskWatch:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


@contextlib.contextmanager
def served(settings: Settings) -> Iterator[str]:
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


def upload(url: str, token: str, content: bytes) -> str:
    body = (b'--B\r\nContent-Disposition: form-data; name="input"; filename="in.bin"\r\n\r\n'
            + content + b"\r\n--B--\r\n")
    request = urllib.request.Request(f"{url}/api/custom-runs", data=body, method="POST", headers={
        "Content-Type": "multipart/form-data; boundary=B", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return str(response.status)
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {json.loads(exc.read())['detail'][:50]}"
    except (urllib.error.URLError, OSError) as exc:  # refused and closed while still sending
        return f"no answer: {getattr(exc, 'reason', exc)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pad-mb", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        spool = Path(data) / "tmp"
        spool.mkdir()
        tempfile.tempdir = str(spool)  # where Starlette's SpooledTemporaryFile rolls over
        settings = Settings(environment="test", secret_key="bench-secret", data_dir=Path(data),
                            sweep_interval_s=0, suite="hw4-mini", custom_run_queue="cpu",
                            custom_runs_per_hour=5, submit_interval_s=0)
        upgrade(settings.db_url)
        with session_scope(settings.db_url) as db:
            tokens = [users.issue_token(db, users.add_user(db, f"s{i}", "student", None), "b",
                                        None) for i in range(2)]
        rng = np.random.default_rng(1)
        write_input(Path(data) / "in.bin", *(rng.uniform(-3, 3, (2, 128, 32)).astype(np.float32)
                                             for _ in range(3)))
        good = (Path(data) / "in.bin").read_bytes()
        table = Table(title="custom-run uploads")
        for column in ("case", "answers", "peak MB on disk"):
            table.add_column(column)
        with served(settings) as url:
            with ThreadPoolExecutor(20) as pool:
                answers = list(pool.map(lambda _: upload(url, tokens[0], good)[:3], range(20)))
            table.add_row("20 at once, limit 5 per hour",
                          ", ".join(f"{answers.count(a)}x {a}" for a in sorted(set(answers))), "")
            with DiskWatch(spool, settings.custom_dir) as watch:
                before = watch.held()
                answer = upload(url, tokens[1], good + b"\0" * (args.pad_mb * MB))
            table.add_row(f"input + {args.pad_mb} MB past its size", answer,
                          f"{(watch.peak - before) / MB:.1f}")
        Console().print(table)


if __name__ == "__main__":
    main()
