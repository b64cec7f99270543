"""The scoreboard's HTML table: made once per board version for everyone, then each viewer's
copy with their own row marked ("mine", "(you)") by swapping one part of that row.

A table at course scale is a row per student and a cell per test, each time cell shaded against
the fastest passing time: rendered through Jinja it took 180 ms and 1.4 MB at 300 students x 30
tests. The rows are written here with f-strings (the head and foot stay in _scoreboard.html), in
three parts: the user cell, the rank cell, the rest. Each part's HTML and its gzip piece
(app/core/gzip_pieces.py) are kept while what it shows stays (the row's stamp; the rank; the
fastest times the cells are shaded against, cell by cell), so a result that moves one student up
the board re-renders that row and the rank cells it shifted, a new fastest time re-renders that
test's cells, and a viewer's copy, plain or gzip, is the shared bytes with their user cell
swapped.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment
from jinja2.environment import TemplateModule
from jinja2.runtime import Macro
from markupsafe import escape

from app.core.etags import etag_of
from app.core.gzip_pieces import Assembly, member, piece
from app.pages.views import verdict_class
from app.scoreboard.boards import Snapshot
from app.scoreboard.rows import Row, fastest_passing
from flashjudge.timefmt import seconds_text

TEMPLATE = "_scoreboard.html"  # its macros: head, empty, foot
LATE = (' <span class="late" title="submitted after the due time; the score carries its '
        'penalty">late</span>')
MINE = ' class="mine" aria-current="true"'
Part = tuple[bytes, bytes]  # (HTML, its gzip piece)


def part(html: str) -> Part:
    data = html.encode()
    return data, piece(data)


def shade(seconds: float, best: float, band: float | None = None) -> str:
    """A passing time's cell: greener the closer it is to the fastest passing time; its noise
    band (+-, from the timing refinement) in the cell when known."""
    ratio = seconds / best
    light = round(max(95 - 40 / ratio, 55), 1)
    plus = (f' <span class="small">&plusmn;{seconds_text(band)}</span>' if band is not None
            else "")
    return (f'<td class="ac" data-value="{round(seconds, 6)}" style="background: hsl(120, 45%, '
            f'{light}%)" title="{ratio:.2f}x the fastest passing time">{seconds_text(seconds)}'
            f'{plus}</td>')


def cell(test: dict[str, Any] | None, best: float | None) -> str:
    if test and test["verdict"] == "AC" and test["seconds"] and best:
        return shade(test["seconds"], best, test.get("band_s"))
    verdict = test["verdict"] if test else None
    return (f'<td class="{verdict_class(verdict)}" data-value="">'
            f'{escape(verdict) if verdict else ""}</td>')


def user_cell(r: Row, mine: bool) -> str:
    """The row's start: its user (marked for the viewer's own row)."""
    user = escape(r.user)
    return (f'<tr data-user="{user}"{MINE if mine else ""}><td title="{escape(r.display_name)}">'
            f'{user}{" (you)" if mine else ""}{LATE if r.late else ""}</td>')


def rank_cell(rank: int) -> str:
    return f"<td>{rank}</td>"


def totals(r: Row) -> str:
    """Score, passed and the total time (with the refined band)."""
    band = (f' <span class="small" title="noise band of the refined total">&plusmn; '
            f'{r.band_s:.3f}</span>' if r.band_s is not None else "")
    return (f'<td>{r.score}</td><td>{r.passed}</td><td data-value="{r.time}">{r.time:.3f}{band}'
            f'</td>')


@dataclass(frozen=True)
class Rest:
    """A row after its rank cell: the HTML, its gzip piece, and its test cells one by one (a
    new fastest time on a test re-renders that test's cells, not whole rows)."""

    html: bytes
    zipped: bytes
    lead: str  # the totals
    cells: tuple[str, ...]  # one per test column
    shaded: frozenset[str]  # the tests whose cells are shaded against the fastest time

    @classmethod
    def of(cls, r: Row, lead: str, cells: tuple[str, ...]) -> Rest:
        html = (lead + "".join(cells) + "</tr>\n").encode()
        return cls(html, piece(html), lead, cells, shaded(r))


def the_rest(r: Row, test_ids: list[str], fastest: dict[str, float], kept: Rest | None,
             changed: set[str]) -> Rest:
    """What follows the rank: `kept` while it holds, else with the cells of `changed` tests
    rendered again, else rendered whole."""
    if kept is not None and not (changed and kept.shaded & changed):
        return kept
    if kept is None:
        cells = tuple(cell(r.tests.get(t), fastest.get(t)) for t in test_ids)
        return Rest.of(r, totals(r), cells)
    cells = tuple(cell(r.tests.get(t), fastest.get(t)) if t in changed else c
                  for t, c in zip(test_ids, kept.cells, strict=True))
    return Rest.of(r, kept.lead, cells)


def shaded(r: Row) -> frozenset[str]:
    """The tests whose cells in this row are shaded against the board's fastest time."""
    return frozenset(t for t, c in r.tests.items() if c.get("seconds") and c["verdict"] == "AC")


def moved(fastest: dict[str, float], before: dict[str, float]) -> set[str]:
    """Tests whose fastest passing time changed: their shaded cells change in every row."""
    return {t for t in fastest.keys() | before.keys() if fastest.get(t) != before.get(t)}


@dataclass(frozen=True)
class Span:
    """Where one row's user cell lies in a fragment's bytes and in its gzip pieces."""

    start: int
    end: int
    zstart: int
    zend: int
    crc_before: int  # CRC-32 of the bytes before it


@dataclass
class Memo:
    """Parts kept from one version to the next."""

    users: dict[Any, Part] = field(default_factory=dict)  # (cut, user, stamp) -> user cell
    ranks: dict[int, Part] = field(default_factory=dict)  # rank -> rank cell
    rests: dict[Any, Rest] = field(default_factory=dict)  # (cut, user, stamp) -> the rest


@dataclass
class Fragment:
    """The table of one board at one version."""

    body: bytes  # no row marked (what a viewer with no row of their own gets)
    pieces: bytes  # its gzip pieces, concatenated
    crc: int  # CRC-32 of `body`
    etag: str  # of `body`
    spans: dict[str, Span]  # username -> where its user cell lies
    rows: dict[str, Row]  # username -> its row
    fastest: dict[str, float]  # test id -> the fastest passing time
    memo: Memo = field(default_factory=Memo, repr=False)
    marked: dict[str, Part] = field(default_factory=dict, repr=False)  # username -> user cell

    def etag_for(self, username: str | None) -> str:
        """The ETag of what `username` is sent: theirs differs by their marked row."""
        if username is None or username not in self.spans:
            return self.etag
        who = hashlib.blake2b(username.encode(), digest_size=4).hexdigest()
        return self.etag[:-1] + "." + who + '"'

    def mine(self, username: str) -> Part:
        made = self.marked.get(username)
        if made is None:  # two threads may both make it: the same bytes either way
            made = self.marked[username] = part(user_cell(self.rows[username], True))
        return made

    def body_for(self, username: str | None) -> bytes:
        """The table with `username`'s row marked (the shared bytes when they have none)."""
        span = self.spans.get(username) if username else None
        if span is None or username is None:
            return self.body
        return self.body[:span.start] + self.mine(username)[0] + self.body[span.end:]

    def gzip_for(self, username: str | None) -> bytes:
        """The same, gzip: the shared pieces with the viewer's user cell swapped."""
        span = self.spans.get(username) if username else None
        if span is None or username is None:
            return member(self.pieces, self.crc, len(self.body))
        html, zipped = self.mine(username)
        crc = zlib.crc32(memoryview(self.body)[span.end:], zlib.crc32(html, span.crc_before))
        size = len(self.body) - (span.end - span.start) + len(html)
        return member(self.pieces[:span.zstart] + zipped + self.pieces[span.zend:], crc, size)


def add_row(out: Assembly, row: Row, cut: str, test_ids: list[str], fastest: dict[str, float],
            changed: set[str], old: Memo, memo: Memo) -> Span:
    """Append one row from kept parts where they still hold; where its user cell lies."""
    key = (cut, row.user, row.stamp)
    user = memo.users[key] = old.users.get(key) or part(user_cell(row, False))
    rank = memo.ranks[row.rank] = old.ranks.get(row.rank) or part(rank_cell(row.rank))
    rest = memo.rests[key] = the_rest(row, test_ids, fastest, old.rests.get(key), changed)
    span = Span(*out.add(*user))
    out.add(*rank)
    out.add(rest.html, rest.zipped)
    return span


def fragment(env: Environment, snapshot: Snapshot, test_ids: list[str],
             previous: Fragment | None = None) -> Fragment:
    """The table of `snapshot` with no row marked, reusing `previous`'s parts that still hold."""
    macros = env.get_template(TEMPLATE).module
    fastest = fastest_passing(snapshot.rows)
    changed = moved(fastest, previous.fastest) if previous is not None else set()
    old = previous.memo if previous is not None else Memo()
    memo = Memo()
    out = Assembly()
    out.add(*part(str(macro(macros, "head")({"frozen": snapshot.frozen, "test_ids": test_ids}))))
    spans = {row.user: add_row(out, row, snapshot.cut, test_ids, fastest, changed, old, memo)
             for row in snapshot.rows}
    tail = "" if snapshot.rows else str(macro(macros, "empty")({"test_ids": test_ids}))
    out.add(*part(tail + str(macro(macros, "foot")())))
    body = out.body()
    return Fragment(body, out.pieces(), out.crc, etag_of(body), spans,
                    {r.user: r for r in snapshot.rows}, fastest, memo)


def macro(module: TemplateModule, name: str) -> Macro:
    """A macro of the template by name (a TemplateModule's attributes are untyped)."""
    found = getattr(module, name)
    if not isinstance(found, Macro):
        raise TypeError(f"{TEMPLATE} has no macro {name!r}")
    return found
