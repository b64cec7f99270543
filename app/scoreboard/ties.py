"""Which neighbours on the board share a rank: a pure function of the ordered rows.

The rule. Two rows can tie only when they have the same number of passed tests and the same
graded score (the final score, after any late penalty): a tie never joins different numbers
there. Such neighbours tie when their totals are not separated by the measured noise: each
refined total comes with a band of +-z standard errors (z = 1.96, 95%, worker/timing/stats.py),
so the difference of two totals has the band sqrt(band_a**2 + band_b**2) at the same 95%, and
the two tie when |time_a - time_b| <= that. A total with no band (one run, no refinement) has no
measured noise: it ties only with an exactly equal total.

Groups, not chains. A tie group is led by its first row; each following row joins it while it
ties with the group's *leader*, and every member shows the leader's rank with "=" ("4="). A row
that ties with a member but not with the leader starts the next group: A=B and B=C with A<C
gives A 1=, B 1=, C 3. Chaining neighbours instead would let a run of small steps tie the top of
the board with rows far below it; anchoring on the leader keeps every member within the noise
of the row the group is ranked by.

The seam for paired runs (settled pairs, added at the freeze by paired A/B runs of two
submissions on one GPU). `place(rows, settled)` takes `settled`, a collection whose items are

- a tuple `(faster_id, slower_id)`: paired runs ordered the pair definitively;
- a frozenset `{id_a, id_b}`: paired runs found them tied definitively.

A settled outcome overrides the noise rule for that pair (the ids are `Entry.id`, the board's
usernames): a tied pair shares a rank even beyond the bands ("settled by paired runs: tied"), an
ordered pair never does, and two neighbours that the board's totals order the other way round
are swapped first (same passed and score only) so the order follows the paired runs ("ordered
by paired runs"). Pairs that are not neighbours on the board change nothing. The board passes
them through `app/scoreboard/boards.py` `ranked(rows, settled)`: `read` passes those of
app/scoreboard/settled.py (table `paired_runs`, written at the freeze or on the TA's button by
app/scoreboard/paired/), and since an outcome changes what a board shows, recording it bumps the
standing's version like any other change (app/scoreboard/paired/store.py `rank_again`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

CONFIDENCE = "95%"  # the bands' (z = 1.96 standard errors), hence the ties'
WITHIN_NOISE = "within noise"
SETTLED_TIED = "settled by paired runs: tied"
SETTLED_ORDERED = "ordered by paired runs"
TIE_LINE = (f"Tied (=): their totals differ by less than the measured noise ({CONFIDENCE}), "
            "or paired runs found them tied; a tie needs the same score and passed tests.")
Settled = Collection[tuple[str, str] | frozenset[str]]


@dataclass(frozen=True)
class Entry:
    """What ranking needs of one row."""

    id: str  # the row's identity (the username), as settled pairs name it
    score: float  # the graded score (after any late penalty)
    passed: int  # passed tests
    total: float  # total seconds
    band: float | None  # the total's +- at 95% (None: not measured)


@dataclass(frozen=True)
class Placed:
    """One row's place: its rank, how it reads, and why it shares or lost a tie."""

    id: str  # the Entry's id
    rank: int  # competition rank (the group leader's position, from 1)
    tied: bool  # shares its rank with a neighbour
    reason: str  # WITHIN_NOISE | SETTLED_TIED | SETTLED_ORDERED | "" (clearly apart)

    @property
    def label(self) -> str:
        """"4=" for a tie, "4" otherwise."""
        return f"{self.rank}=" if self.tied else str(self.rank)


def comparable(a: Entry, b: Entry) -> bool:
    """Only rows with the same score and passed tests may tie or be reordered by time."""
    return a.score == b.score and a.passed == b.passed


def within_noise(a: Entry, b: Entry) -> bool:
    """|difference| within the combined 95% band (exact equality when either has none)."""
    if a.band is None or b.band is None:
        return a.total == b.total
    return abs(a.total - b.total) <= math.hypot(a.band, b.band)


def outcome(a: Entry, b: Entry, settled: Settled) -> str | None:
    """What paired runs settled about a and b: "tied", "a" or "b" (the faster), or None."""
    if frozenset((a.id, b.id)) in settled:
        return "tied"
    if (a.id, b.id) in settled:
        return "a"
    if (b.id, a.id) in settled:
        return "b"
    return None


def reorder(rows: Sequence[Entry], settled: Settled) -> list[Entry]:
    """The rows with each neighbour pair that paired runs ordered the other way swapped."""
    out = list(rows)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if comparable(a, b) and outcome(a, b, settled) == "b":
            out[i], out[i + 1] = b, a
    return out


def pair_reason(leader: Entry, row: Entry, settled: Settled) -> tuple[bool, str]:
    """Whether `row` ties the group's `leader`, and why (or why a near tie was broken)."""
    if not comparable(leader, row):
        return False, ""
    said = outcome(leader, row, settled)
    if said == "tied":
        return True, SETTLED_TIED
    if said is not None:
        return False, SETTLED_ORDERED if within_noise(leader, row) else ""
    return (True, WITHIN_NOISE) if within_noise(leader, row) else (False, "")


def place(rows: Sequence[Entry], settled: Settled = ()) -> list[Placed]:
    """Ranks for rows already in the board's order (best first), in the order they stand
    after settled pairs (see the module's docstring for the rule)."""
    ordered = reorder(rows, settled) if settled else list(rows)
    placed: list[Placed] = []
    leader = 0
    for i, row in enumerate(ordered):
        tied, reason = pair_reason(ordered[leader], row, settled) if i else (False, "")
        if not tied:
            leader = i
        elif not placed[leader].tied:  # the leader shares its rank too, for the same reason
            placed[leader] = Placed(placed[leader].id, leader + 1, True, reason)
        placed.append(Placed(row.id, leader + 1, tied, reason))
    return placed
