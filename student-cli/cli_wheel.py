"""A PEP 517 build backend for the students' `flashjudge` command (student-cli/).

It writes one wheel, `flashjudge_cli-<version>`, holding only what `flashjudge submit` imports:
the console script's parser (flashjudge_cli/main.py, which offers only the commands whose
modules are present), the submit command with its known-device file, and the shared contract
(flashjudge/contract, flashjudge/timefmt.py), read from the repository root one folder up.
Standard library only: pip builds it with no build requirements, even where no package index can
be reached.
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "flashjudge_cli"
SOURCES = ("flashjudge/__init__.py", "flashjudge/timefmt.py", "flashjudge/contract/*.py",
           "flashjudge_cli/__init__.py", "flashjudge_cli/main.py", "flashjudge_cli/device.py",
           "flashjudge_cli/commands/__init__.py", "flashjudge_cli/commands/submit.py")
REQUIRES = ("httpx>=0.27", "rich>=13.7")
SUMMARY = "Submit to a flashjudge server from your own machine (the command line alone)."


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def metadata() -> str:
    lines = ["Metadata-Version: 2.1", "Name: flashjudge-cli", f"Version: {version()}",
             f"Summary: {SUMMARY}", "Requires-Python: >=3.11",
             *(f"Requires-Dist: {r}" for r in REQUIRES)]
    return "\n".join(lines) + "\n"


def files() -> dict[str, bytes]:
    """Archive name -> bytes of everything the wheel holds but its RECORD."""
    dist = f"{NAME}-{version()}.dist-info"
    found = {str(p.relative_to(ROOT)): p.read_bytes()
             for pattern in SOURCES for p in sorted(ROOT.glob(pattern))}
    found[f"{dist}/METADATA"] = metadata().encode()
    found[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: cli_wheel\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n")
    found[f"{dist}/entry_points.txt"] = (b"[console_scripts]\n"
                                          b"flashjudge = flashjudge_cli.main:main\n")
    return found


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory: str, config_settings: object = None,
                metadata_directory: object = None) -> str:
    wheel = f"{NAME}-{version()}-py3-none-any.whl"
    content = files()
    record = f"{NAME}-{version()}.dist-info/RECORD"
    lines = [record_line(n, d) for n, d in content.items()] + [f"{record},,"]
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in content.items():
            out.writestr(name, data)
        out.writestr(record, "\n".join(lines) + "\n")
    return wheel
