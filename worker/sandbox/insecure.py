"""Development fallback when bubblewrap cannot run (--insecure): the program runs on the host.

Only paths change: /work becomes the work dir and each bind target becomes its source, so the
same argv works. Nothing is hidden from the program; every result is marked INSECURE.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from worker.sandbox.mounts import PATH, WORK
from worker.sandbox.types import Bind


def host_path(arg: str, workdir: Path, binds: Sequence[Bind]) -> str:
    """Translate one argument from the sandbox's view to the host's."""
    for bind in binds:
        if arg == bind.target:
            return str(bind.source)
    if arg == WORK or arg.startswith(WORK + "/"):
        return str(workdir) + arg[len(WORK):]
    return arg


def direct_command(
    argv: Sequence[str], workdir: Path, binds: Sequence[Bind], env: Mapping[str, str] | None
) -> tuple[list[str], dict[str, str]]:
    """The host command line and its environment (still scrubbed: no worker secrets)."""
    values = {"PATH": PATH, "HOME": str(workdir), "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    values.update({k: host_path(v, workdir, binds) for k, v in (env or {}).items()})
    cmd = [host_path(arg, workdir, binds) for arg in argv]
    if cmd and "/" in cmd[0] and not os.path.isabs(cmd[0]):
        cmd[0] = str(workdir / cmd[0])
    return cmd, values
