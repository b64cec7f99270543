"""Measuring how far a piece of code raises the peak resident memory, in a fresh interpreter.

Used by the bounded-memory tests (generator, comparison): the peak (VmHWM) is reset to the current
RSS through /proc/self/clear_refs, so only what `code` itself adds is counted.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PEAK_PROLOGUE = """
import re
def mb(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read())[1]) // 1024
try:
    open("/proc/self/clear_refs", "w").write("5")  # reset the peak (VmHWM) to the current RSS
except OSError:
    raise SystemExit("no /proc/self/clear_refs here: cannot measure the peak RSS")
before = mb("VmRSS")
"""


def peak_rss_growth_mb(code: str) -> int:
    """Run `code` in a fresh interpreter; how far its peak RSS rose above the RSS at the start."""
    script = PEAK_PROLOGUE + textwrap.dedent(code) + '\nprint(mb("VmHWM") - before)\n'
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if "no /proc/self/clear_refs" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    return int(done.stdout)
