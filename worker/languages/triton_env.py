"""Whether this worker can judge triton-kernel: a Python inside the sandbox's view (/usr) that
imports torch and triton with a GPU. Asked once per process (the heartbeat says the answer, so the
service offers the language only where some worker can judge it)."""

from __future__ import annotations

import functools
import subprocess

CANDIDATES = ("/usr/bin/python3", "/usr/local/bin/python3")  # /usr is what the sandbox sees
PROBE = "import torch, triton; assert torch.cuda.is_available(); print(torch.__version__)"
PROBE_TIMEOUT_S = 120.0  # the first import of torch reads a gigabyte from disk


@functools.lru_cache(maxsize=1)
def triton_python() -> str | None:
    """The first candidate Python that imports torch and triton and sees a GPU; None if none."""
    for python in CANDIDATES:
        try:
            subprocess.run([python, "-I", "-c", PROBE], capture_output=True, check=True,
                           timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError):
            continue
        return python
    return None
