"""Response shapes of /api/scoreboard (issue 13 added the GPU model a board ranks within)."""

from __future__ import annotations

from pydantic import BaseModel


class TestCell(BaseModel):
    """One test of a row's best submission."""

    verdict: str  # AC, WA, TLE, ...
    seconds: float | None  # its time (None: not run)


class BoardRow(BaseModel):
    """One student's line."""

    rank: int  # competition rank: ties share it
    user: str  # username
    passed: int  # AC tests of the best submission
    time: float  # sum of its per-test seconds
    score: int  # the suite's score of that submission
    tests: dict[str, TestCell]  # test id -> cell
    late: bool = False  # submitted after the due time (the score carries the penalty)
    band_s: float | None = None  # +- of the time once the refinement came back


class Board(BaseModel):
    """The ranked board, for one GPU model or for all."""

    frozen: bool  # students see the board as it stood at the freeze
    gpu_model: str | None = None  # the GPU model it ranks within (None: every model)
    gpu_models: list[str] = []  # the GPU models with judged results (several: one board each)
    rows: list[BoardRow]  # best first
