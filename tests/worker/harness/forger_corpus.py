"""The forger corpus as data: tests/hostile/forgers/<name>/ holds solve.cu and expected.toml.

Each forger is a correct kernel plus one attack on the timing; <name>-twin is the same kernel
without it. expected.toml keys: description, tests (hw4 ids), outcomes (any one must hold), and
twin (a forger's twin) or twin_of (a twin's forger). Outcomes, judged against the twin's figure:

  "wrong"            the judge said WA
  "held:<flag>"      accepted but held from the ranking, with that flag
  "flagged:<flag>"   that flag raised, not held, and no more than 10% faster than the twin
  "within:<r>"       accepted, not held, and no more than r faster than the twin (no gain)
  "clean"            accepted, no flag, ranked by its own CUDA events (a twin's outcome)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from worker.harness.verify import TimingVerdict

FORGERS = Path(__file__).resolve().parents[2] / "hostile" / "forgers"
TRITON_FORGERS = FORGERS.parent / "forgers-triton"  # the same attacks on triton-kernel (solve.py)
KINDS = ("wrong", "held", "flagged", "within", "clean")
FLAGGED_MARGIN = 0.10  # "flagged": the judge's clock may not rank it over 10% faster than the twin


@dataclass(frozen=True)
class ForgerCase:
    """One submission of the corpus and what the judge must conclude about it."""

    name: str  # directory name
    source: bytes  # solve.cu (solve.py in the triton corpus)
    description: str  # one line
    tests: tuple[str, ...]  # hw4 test ids
    outcomes: tuple[str, ...]  # any one must hold
    partner: str  # the twin of a forger, or the forger of a twin
    is_twin: bool  # an honest twin


def load_forger(name: str, root: Path = FORGERS) -> ForgerCase:
    data = tomllib.loads((root / name / "expected.toml").read_text())
    is_twin = "twin_of" in data
    (source,) = sorted((root / name).glob("solve.*"))
    return ForgerCase(
        name=name, source=source.read_bytes(),
        description=data["description"], tests=tuple(data["tests"]),
        outcomes=tuple(data["outcomes"]), partner=data["twin_of" if is_twin else "twin"],
        is_twin=is_twin)


def all_forgers(root: Path = FORGERS) -> list[ForgerCase]:
    return [load_forger(p.parent.name, root) for p in sorted(root.glob("*/expected.toml"))]


def parse_outcome(outcome: str) -> tuple[str, str]:
    """("held", "channel") from "held:channel"; ValueError for anything not in KINDS."""
    kind, _, arg = outcome.partition(":")
    if kind not in KINDS or (kind in ("held", "flagged", "within") and not arg):
        raise ValueError(f"unknown outcome {outcome!r}")
    if kind == "within":
        float(arg)
    return kind, arg


def meets(outcome: str, verdict: str, timing: TimingVerdict | None,
          twin_s: float | None) -> bool:
    """Whether the judge's conclusion (verdict, timing) is `outcome`, against the twin's figure."""
    kind, arg = parse_outcome(outcome)
    if kind == "wrong":
        return verdict == "WA"
    if verdict != "AC" or timing is None or timing.ranked_s is None:
        return False
    codes = [f.code for f in timing.flags]
    if kind == "clean":
        return not codes and timing.source == "events"
    if kind == "held":
        return timing.held and arg in codes
    if timing.held or twin_s is None:
        return False
    margin = FLAGGED_MARGIN if kind == "flagged" else float(arg)
    no_gain = timing.ranked_s >= (1 - margin) * twin_s
    return no_gain and (arg in codes if kind == "flagged" else True)
