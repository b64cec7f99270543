"""Whether this worker can judge triton-kernel: a Python that imports torch and triton and sees a
GPU, and what of it lies outside /usr (the sandbox shows /usr whole; a virtualenv or conda prefix
elsewhere is bound read-only into the runner's sandbox at the same path). Asked once per process;
the heartbeat says the answer, so the service offers the language only where a worker can judge it.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

PROBE = ("import json, os, sys, torch, triton; assert torch.cuda.is_available(); "
         "print(json.dumps([sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname("
         "torch.__file__)), os.path.dirname(os.path.dirname(triton.__file__))]))")
PROBE_TIMEOUT_S = 120.0  # the first import of torch reads a gigabyte from disk
VISIBLE = ("/usr/",)  # what every sandbox sees already


@dataclass(frozen=True)
class TritonPython:
    """The interpreter the triton runner uses, and the directories its sandbox must see."""

    python: str  # absolute path of the interpreter
    binds: tuple[str, ...]  # its prefixes and site-packages outside /usr (bound read-only)


def _candidates() -> list[str]:
    found = ["/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3") or "",
             sys.executable]
    return list(dict.fromkeys(p for p in found if p))


def _visible(path: str) -> bool:
    return path == "/usr" or path.startswith(VISIBLE)


def _probe(python: str) -> TritonPython | None:
    try:
        done = subprocess.run([python, "-I", "-c", PROBE], capture_output=True, text=True,
                              check=True, timeout=PROBE_TIMEOUT_S)
        dirs = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    outside = [str(d) for d in dirs if not _visible(str(d))]
    if not _visible(python):
        outside.append(python.rsplit("/", 2)[0])  # the interpreter's own prefix
    return TritonPython(python, tuple(dict.fromkeys(outside)))


@functools.lru_cache(maxsize=1)
def triton_runtime() -> TritonPython | None:
    """The first candidate Python that imports torch and triton and sees a GPU; None if none."""
    for python in _candidates():
        found = _probe(python)
        if found is not None:
            return found
    return None


def triton_python() -> str | None:
    """The interpreter of triton_runtime(), or None where this worker cannot judge triton."""
    found = triton_runtime()
    return found.python if found is not None else None


_background: list[threading.Thread] = []  # the one probe started by known_triton_python()


def known_triton_python() -> str | None:
    """triton_python() once known, without waiting: the first call starts the probe in the
    background and answers None until it is done (the heartbeat must not stall on torch's
    import, which takes seconds to a minute on a cold node)."""
    if not _background:
        thread = threading.Thread(target=triton_runtime, daemon=True, name="triton-probe")
        _background.append(thread)
        thread.start()
    return None if _background[0].is_alive() else triton_python()
