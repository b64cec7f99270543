"""`flashjudge stop`: stop the `flashjudge serve` running on this machine's data directory.

serve writes its process id to <data dir>/serve.pid; stop sends it SIGTERM (as Ctrl-C in its
terminal would send SIGINT) and waits until it and its workers are gone. The file is checked
against the process's command line, so a stale one left by a crash never signals a stranger.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

PID_FILE = "serve.pid"
WAIT_S = 60.0  # serve gives its workers seconds; this only bounds a wait that went wrong


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stop", help="stop the flashjudge serve of this data dir")
    parser.add_argument("--data-dir", default=None,
                        help="serve's data directory (default: $FLASHJUDGE_DATA_DIR, else ./data)")
    parser.set_defaults(func=run)


def data_dir(given: str | None) -> Path:
    return Path(given or os.environ.get("FLASHJUDGE_DATA_DIR") or "data").resolve()


def pid_file(data: Path) -> Path:
    return data / PID_FILE


def serving_pid(data: Path) -> int | None:
    """The pid in serve.pid, if that process is alive and is a `flashjudge serve`."""
    try:
        pid = int(pid_file(data).read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError):
        return None
    is_serve = b"serve" in argv and any(b"flashjudge" in a for a in argv)
    return pid if is_serve and state != "Z" else None


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def run(args: argparse.Namespace) -> int:
    data = data_dir(args.data_dir)
    pid = serving_pid(data)
    if pid is None:
        print(f"flashjudge stop: no flashjudge serve is running with data dir {data}",
              file=sys.stderr)
        return 1
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + WAIT_S
    while not gone(pid):
        if time.monotonic() > end:
            print(f"flashjudge stop: serve (pid {pid}) still runs after {WAIT_S:.0f} s",
                  file=sys.stderr)
            return 1
        time.sleep(0.1)
    print(f"flashjudge stop: stopped flashjudge serve (pid {pid})")
    return 0
