"""A stand-in for a worker in a Slurm job: it writes down each signal it gets, and when.

Run as a job's batch process (`exec` from the script, so Slurm's batch-step signals reach it):
    signal_logger.py [--child] [--exit-on SIGNAL] [--env NAME ...]
Each line on stdout: `<epoch seconds> <role> <event>`, role `main` or `child`; events `start`,
`env NAME=value`, `got SIGTERM` (...), `exit`. With --child it first starts a copy of itself in
a session of its own (as a sandboxed program is), to show who else a signal reaches. With
--exit-on it exits on that signal (a worker that drains at once), else it ignores every signal
it logs and runs until killed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

LOGGED = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP,
          signal.SIGCONT)


def say(role: str, event: str) -> None:
    """One whole line in one write: the main process and its child share the job's output,
    and a signal handler may run inside another's print (two signals at once under load), so
    a print's separate writes of the text and its newline came out interleaved."""
    os.write(1, f"{time.time():.3f} {role} {event}\n".encode())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", action="store_true", help="start a child in its own session")
    parser.add_argument("--role", default="main")
    parser.add_argument("--exit-on", default="", help="a signal name, e.g. SIGTERM")
    parser.add_argument("--env", nargs="*", default=[], help="variables to print")
    args = parser.parse_args()
    leave = getattr(signal, args.exit_on) if args.exit_on else None

    def on_signal(number: int, _frame: object) -> None:
        say(args.role, f"got {signal.Signals(number).name}")
        if number == leave:
            say(args.role, "exit")
            sys.exit(0)

    for sig in LOGGED:
        signal.signal(sig, on_signal)
    if args.child:
        subprocess.Popen([sys.executable, __file__, "--role", "child"], start_new_session=True)
    say(args.role, f"start pid={os.getpid()}")
    for name in args.env:
        say(args.role, f"env {name}={os.environ.get(name, '<unset>')}")
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    raise SystemExit(main())
