"""The shell user a server-side command acts as, for the audit log: "shell root@host"."""

from __future__ import annotations

import argparse
import functools
import getpass
import socket
from collections.abc import Callable

from app.accounts import audit

Command = Callable[[argparse.Namespace], int]


def label() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"shell {user}@{socket.gethostname()}"


def as_shell(command: Command) -> Command:
    """Run `command` with its audited actions named after the shell user and the machine."""
    @functools.wraps(command)
    def acting(args: argparse.Namespace) -> int:
        with audit.from_shell(label()):
            return command(args)
    return acting
