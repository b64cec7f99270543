"""Response shapes of /api/scoreboard, with the GPU model a board ranks within."""

from __future__ import annotations

from pydantic import BaseModel


class TestCell(BaseModel):
    """One test of a row's best submission."""

    verdict: str  # AC, WA, TLE, ...
    seconds: float | None  # its time (None: not run)
    band_s: float | None = None  # +- of the time once the refinement came back


class BoardRow(BaseModel):
    """One student's line."""

    rank: int  # competition rank: ties share it
    rank_label: str  # the rank as shown: "4", or "4=" when tied
    tie: str | None = None  # why it is shared: "within noise", "settled by paired runs: tied"
    user: str  # username; on the public board the alias when the student chose one
    alias: str | None = None  # the name the student chose for the public board
    passed: int  # AC tests of the best submission
    time: float | None  # sum of its per-test seconds (None: verdicts only until the due time)
    score: float  # the graded score: the suite's score after any late penalty (ranked by it)
    raw_score: int  # the suite's score before the late penalty
    penalty_percent: float = 0.0  # what the late penalty took off, percent
    tests: dict[str, TestCell]  # test id -> cell
    late: bool = False  # submitted after the due time (the score carries the penalty)
    band_s: float | None = None  # +- of the time once the refinement came back
    display_name: str | None = None  # TAs only: the student's name
    hidden: bool | None = None  # TAs only: the student opted out of the public board


class Board(BaseModel):
    """The ranked board, for one GPU model or for all."""

    frozen: bool  # students see the board as it stood at the freeze
    gpu_model: str | None = None  # the GPU model it ranks within (None: every model)
    gpu_models: list[str] = []  # the GPU models with judged results (several: one board each)
    rows: list[BoardRow]  # best first


class MyPlace(BaseModel):
    """The caller's own place on the public board (GET /api/scoreboard/me)."""

    on_board: bool  # the caller has a judged, ranked result
    rank: int | None = None  # their rank over every student (hidden ones included)
    rank_label: str | None = None  # "4" or "4="
    of: int  # how many students are ranked
    score: float | None = None  # the graded score
    alias: str | None = None  # the name the public board shows them under
    hidden: bool  # they opted out: the public board leaves them out
    shown_as: str | None = None  # the name on the public board (None: not on it)


class BoardNameIn(BaseModel):
    """How the public board shows me (PUT /api/scoreboard/me)."""

    alias: str | None = None  # None or "": my username
    hidden: bool = False  # leave the public board (I still see my rank; TAs see me)
