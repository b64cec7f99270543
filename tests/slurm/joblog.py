"""Reading what the signal logger (tests/slurm/signal_logger.py) wrote in a job's output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.slurm.cluster import wait_until


@dataclass(frozen=True)
class Event:
    """One line of the logger: when, which process, what."""

    at: float  # epoch seconds
    role: str  # "main" (the batch process) or "child" (its child in a session of its own)
    what: str  # "start pid=N", "got SIGTERM", "exit", "env NAME=value"


def events(output: Path) -> list[Event]:
    """The logger's lines in a job's output (Slurm's own lines, e.g. `*** JOB 7 ... CANCELLED
    AT ...`, are left out)."""
    if not output.exists():
        return []
    found = []
    for line in output.read_text(errors="replace").splitlines():
        at, _, rest = line.partition(" ")
        role, _, what = rest.partition(" ")
        if role in ("main", "child") and at.replace(".", "", 1).isdigit():
            found.append(Event(float(at), role, what))
    return found


def signals(output: Path, role: str) -> list[str]:
    """The signals a process of the job logged, in order ("SIGTERM", ...)."""
    return [e.what.removeprefix("got ") for e in events(output)
            if e.role == role and e.what.startswith("got ")]


def pids(output: Path) -> dict[str, int]:
    """role -> pid of the processes that started."""
    return {e.role: int(e.what.split("=")[1]) for e in events(output)
            if e.what.startswith("start pid=")}


def wait_for_event(output: Path, role: str, what: str, deadline_s: float) -> Event:
    """The first event `what` of `role`, waited for."""
    def seen() -> Event | None:
        return next((e for e in events(output) if e.role == role and e.what == what), None)
    return wait_until(seen, deadline_s, f"{role} to log {what!r} in {output}")


def wait_started(output: Path, roles: tuple[str, ...], deadline_s: float = 30) -> dict[str, int]:
    """Wait until every role has started; their pids."""
    def all_started() -> dict[str, int] | None:
        found = pids(output)
        return found if set(roles) <= set(found) else None
    return wait_until(all_started, deadline_s, f"{', '.join(roles)} to start in {output}")


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()
