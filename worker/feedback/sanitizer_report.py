"""Parsing compute-sanitizer's text report (memcheck, racecheck) into findings for the student.

The report is lines prefixed "========= ". A finding starts on a line with one space after the
prefix ("Invalid __shared__ write of size 16 bytes", "Error: Race reported between ..."); its
details follow, indented further ("at kernel(...)+0x1a0 in /work/hw4.cu:42", "by thread (3,0,0)
in block (0,0,0)", "Address 0x104 is misaligned"). Host backtraces and the summary are skipped.
Pure text in, dataclasses out: tested on captured samples without a GPU.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

PREFIX = "========="
MAX_FINDINGS = 5  # the first few are what a student reads; the rest repeat them
# "at flash(const float *)+0x1a0 in /work/hw4.cu:42" or "at 0x1a0 in /work/hw4.cu:42:flash(...)"
_AT = re.compile(r"\bat (?P<where>.*?) in (?P<file>[^\s:]+):(?P<line>\d+)(?::(?P<func>[^\[]*))?")
_THREAD = re.compile(r"by thread \((?P<t>[\d, ]+)\) in block \((?P<b>[\d, ]+)\)")
_SUMMARY = re.compile(r"^(ERROR|RACECHECK|LEAK|INITCHECK|SYNCCHECK) SUMMARY:\s*(?P<text>.*)")
_SKIP_HEADERS = ("COMPUTE-SANITIZER", "Target application returned", "Saved host backtrace",
                 "Program hit", "Internal Sanitizer Error")
_HOST_DETAIL = ("Host Frame", "Saved host backtrace", "=========")


@dataclass
class SourceLocation:
    """Where in the student's source a finding points."""

    file: str  # the source file as the build saw it, e.g. "/work/hw4.cu" (shown as hw4.cu)
    line: int  # 1-based line number (needs -lineinfo)
    function: str  # the kernel or device function, demangled, offset dropped

    @property
    def short(self) -> str:
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"


@dataclass
class Finding:
    """One error compute-sanitizer reported."""

    tool: str  # "memcheck" | "racecheck"
    kind: str  # first line, e.g. "Invalid __shared__ write of size 16 bytes"
    location: SourceLocation | None  # the first source line named (None: no -lineinfo, host error)
    other_location: SourceLocation | None = None  # racecheck: the other access of the race
    thread: tuple[int, int, int] | None = None  # threadIdx of the faulting thread
    block: tuple[int, int, int] | None = None  # blockIdx of the faulting thread
    details: list[str] | None = None  # the remaining device-side lines (address, misalignment)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["where"] = self.location.short if self.location else None
        return data


@dataclass
class SanitizerReport:
    """A whole run's report: the first findings and the tool's own summary line."""

    tool: str  # which tool ran
    findings: list[Finding]  # at most MAX_FINDINGS, in report order
    total: int  # errors the tool counted (its summary), at least the findings parsed
    summary: str  # e.g. "1 error" (from "ERROR SUMMARY: 1 error"), "" when absent
    host_errors: list[str]  # "Program hit cudaErrorLaunchFailure ..." lines (API errors)
    run: str = ""  # how the sanitized program ended, e.g. "exit_nonzero (exit 1): CUDA error: ..."

    @property
    def clean(self) -> bool:
        return self.total == 0 and not self.host_errors

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = [f.to_dict() for f in self.findings]
        return data


def _triple(text: str) -> tuple[int, int, int]:
    x, y, z = (int(p) for p in text.split(","))
    return (x, y, z)


def _location(text: str) -> SourceLocation | None:
    match = _AT.search(text)
    if match is None:
        return None
    where, func = match.group("where"), match.group("func")
    function = func if func else re.sub(r"\+0x[0-9a-fA-F]+$", "", where)
    return SourceLocation(match.group("file"), int(match.group("line")), function.strip())


def _race_locations(kind: str) -> tuple[SourceLocation | None, SourceLocation | None]:
    """Both accesses of "Race reported between Write access at f+0x10 in a.cu:3 and Read ..."."""
    halves = re.split(r"\s+and\s+(?=\w+ access)", kind, maxsplit=1)
    first = _location(halves[0])
    return first, _location(halves[1]) if len(halves) > 1 else None


def _lines(text: str) -> list[tuple[int, str]]:
    """(indent, content) of every prefixed line; indent 1 starts a finding."""
    out = []
    for raw in text.splitlines():
        if not raw.startswith(PREFIX):
            continue
        body = raw[len(PREFIX):]
        content = body.strip()
        if content:
            out.append((len(body) - len(body.lstrip(" ")), content))
    return out


def _finish(tool: str, kind: str, details: list[str]) -> Finding:
    finding = Finding(tool=tool, kind=kind, location=None, details=[])
    if "Race reported" in kind:
        finding.location, finding.other_location = _race_locations(kind)
        kind = kind.split(" between ")[0].removeprefix("Error: ").removeprefix("Warning: ")
        finding.kind = f"{kind} ({'write' if 'Write access' in finding.kind else 'read'} race)"
    race = finding.location is not None
    for line in details:
        thread = _THREAD.search(line)
        location = None if thread else _location(line)
        if thread:
            finding.thread, finding.block = _triple(thread.group("t")), _triple(thread.group("b"))
        elif location is not None and finding.location is None:
            finding.location = location
        elif location is not None and race and finding.other_location is None:
            finding.other_location = location
        elif location is None and not line.startswith(_HOST_DETAIL):
            finding.details.append(line)  # type: ignore[union-attr]
    return finding


def parse_report(text: str, tool: str = "memcheck", keep: int = MAX_FINDINGS) -> SanitizerReport:
    """The findings of one compute-sanitizer run's output (stdout or its --log-file)."""
    findings: list[Finding] = []
    current: tuple[str, list[str]] | None = None
    summary, host_errors = "", []
    in_host_frames = False
    for indent, content in _lines(text):
        match = _SUMMARY.match(content)
        if match and not summary:  # the first: a second one counts what was not printed
            summary = match.group("text")
        elif content.startswith("Program hit"):
            host_errors.append(content)
        if indent == 1 and not match and not content.startswith(_SKIP_HEADERS):
            if current is not None:
                findings.append(_finish(tool, *current))
            current, in_host_frames = (content, []), False
        elif indent > 1 and current is not None:
            in_host_frames = in_host_frames or content.startswith("Saved host backtrace")
            if not in_host_frames:
                current[1].append(content)
    if current is not None:
        findings.append(_finish(tool, *current))
    counted = re.search(r"(\d+) errors?", summary)  # the tool's count: past --print-limit too
    total = max(len(findings), int(counted.group(1)) if counted else 0)
    return SanitizerReport(tool, findings[:keep], total, summary, host_errors[:keep])
