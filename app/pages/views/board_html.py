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
from app.pages.views.template_helpers import verdict_class
from app.scoreboard.audience import PUBLIC, TAS, names, rows_for
from app.scoreboard.boards import Snapshot
from app.scoreboard.rows import Row, fastest_passing
from app.scoreboard.ties import TIE_LINE
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


def names_note(r: Row, ta: bool) -> str:
    """What TAs see beside a username: the student's alias and whether they are hidden."""
    if not ta:
        return ""
    alias = (f' <span class="small alias" title="the name the public board shows">as '
             f'&ldquo;{escape(r.alias)}&rdquo;</span>' if r.alias else "")
    hidden = (' <span class="small hidden-mark" title="opted out of the public board">'
              '(hidden)</span>' if r.hidden else "")
    return alias + hidden


def user_cell(r: Row, mine: bool, ta: bool = False) -> str:
    """The row's start: its user (marked for the viewer's own row); on the public board `r`
    already carries the alias in place of the username (app/scoreboard/audience.py)."""
    user = escape(r.user)
    return (f'<tr data-user="{user}"{MINE if mine else ""}><td title="{escape(r.display_name)}">'
            f'{user}{" (you)" if mine else ""}{names_note(r, ta)}{LATE if r.late else ""}</td>')


def rank_cell(label: str, tie: str) -> str:
    """The rank as it reads ("4=" when tied), why in its tooltip."""
    if not tie:
        return f'<td data-value="{label.rstrip("=")}">{label}</td>'
    return (f'<td data-value="{label.rstrip("=")}" class="tie" title="{escape(tie)}">{label}'
            f'</td>')


def score_cell(r: Row) -> str:
    """The graded score; a late penalty shows what it took off."""
    if not r.penalty:
        return f'<td data-value="{r.final:g}">{r.final:g}</td>'
    return (f'<td data-value="{r.final:g}">{r.final:g} <span class="small penalty" '
            f'title="late: {r.penalty:g}% off the score of {r.score}">({r.score} '
            f'&minus;{r.penalty:g}%)</span></td>')


def totals(r: Row) -> str:
    """Score, passed and the total time (with the refined band)."""
    if not r.timed:  # verdicts only until the due time
        return f'{score_cell(r)}<td>{r.passed}</td><td data-value=""></td>'
    band = (f' <span class="small" title="noise band of the refined total (95%)">&plusmn; '
            f'{r.band_s:.3f}</span>' if r.band_s is not None else "")
    return (f'{score_cell(r)}<td>{r.passed}</td><td data-value="{r.time}">{r.time:.3f}{band}'
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
    ranks: dict[tuple[str, str], Part] = field(default_factory=dict)  # (label, tie) -> cell
    rests: dict[Any, Rest] = field(default_factory=dict)  # (cut, user, stamp) -> the rest


@dataclass
class Fragment:
    """The table of one board at one version."""

    body: bytes  # no row marked (what a viewer with no row of their own gets)
    pieces: bytes  # its gzip pieces, concatenated
    crc: int  # CRC-32 of `body`
    etag: str  # of `body`
    spans: dict[str, Span]  # the row's name (username, or alias in public) -> its user cell
    rows: dict[str, Row]  # the row's name -> its row
    fastest: dict[str, float]  # test id -> the fastest passing time
    memo: Memo = field(default_factory=Memo, repr=False)
    marked: dict[str, Part] = field(default_factory=dict, repr=False)  # name -> user cell
    names: dict[str, str] = field(default_factory=dict, repr=False)  # username -> row's name
    ta: bool = False  # the TAs' table (every student, both names)

    def key(self, username: str | None) -> str | None:
        """The name `username`'s row goes by in this table (None: they have no row in it)."""
        return self.names.get(username) if username else None

    def etag_for(self, username: str | None) -> str:
        """The ETag of what `username` is sent: theirs differs by their marked row."""
        name = self.key(username)
        if name is None or name not in self.spans:
            return self.etag
        who = hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
        return self.etag[:-1] + "." + who + '"'

    def mine(self, name: str) -> Part:
        made = self.marked.get(name)
        if made is None:  # two threads may both make it: the same bytes either way
            made = self.marked[name] = part(user_cell(self.rows[name], True, self.ta))
        return made

    def body_for(self, username: str | None) -> bytes:
        """The table with `username`'s row marked (the shared bytes when they have none)."""
        name = self.key(username)
        span = self.spans.get(name) if name else None
        if span is None or name is None:
            return self.body
        return self.body[:span.start] + self.mine(name)[0] + self.body[span.end:]

    def gzip_for(self, username: str | None) -> bytes:
        """The same, gzip: the shared pieces with the viewer's user cell swapped."""
        name = self.key(username)
        span = self.spans.get(name) if name else None
        if span is None or name is None:
            return member(self.pieces, self.crc, len(self.body))
        html, zipped = self.mine(name)
        crc = zlib.crc32(memoryview(self.body)[span.end:], zlib.crc32(html, span.crc_before))
        size = len(self.body) - (span.end - span.start) + len(html)
        return member(self.pieces[:span.zstart] + zipped + self.pieces[span.zend:], crc, size)


def add_row(out: Assembly, row: Row, cut: str, test_ids: list[str], fastest: dict[str, float],
            changed: set[str], old: Memo, memo: Memo, ta: bool = False) -> Span:
    """Append one row from kept parts where they still hold; where its user cell lies."""
    key = (cut, row.user, row.stamp)
    user = memo.users[key] = old.users.get(key) or part(user_cell(row, False, ta))
    label = (row.label or str(row.rank), row.tie)
    rank = memo.ranks[label] = old.ranks.get(label) or part(rank_cell(*label))
    rest = memo.rests[key] = the_rest(row, test_ids, fastest, old.rests.get(key), changed)
    span = Span(*out.add(*user))
    out.add(*rank)
    out.add(rest.html, rest.zipped)
    return span


def fragment(env: Environment, snapshot: Snapshot, test_ids: list[str],
             previous: Fragment | None = None, who: str = PUBLIC) -> Fragment:
    """The table of `snapshot` for `who` (app/scoreboard/audience.py) with no row marked,
    reusing `previous`'s parts that still hold."""
    macros = env.get_template(TEMPLATE).module
    rows, ta = rows_for(snapshot.rows, who), who == TAS
    fastest = fastest_passing(rows)
    changed = moved(fastest, previous.fastest) if previous is not None else set()
    old = previous.memo if previous is not None else Memo()
    memo = Memo()
    out = Assembly()
    out.add(*part(str(macro(macros, "head")({
        "frozen": snapshot.frozen, "test_ids": test_ids, "tie_line": tie_line(rows),
        "late": any(r.penalty for r in rows)}))))
    spans = {row.user: add_row(out, row, snapshot.cut, test_ids, fastest, changed, old, memo,
                               ta) for row in rows}
    tail = "" if rows else str(macro(macros, "empty")({"test_ids": test_ids}))
    out.add(*part(tail + str(macro(macros, "foot")())))
    body = out.body()
    named = {r.user: r.user for r in rows} if ta else names(snapshot.rows)
    return Fragment(body, out.pieces(), out.crc, etag_of(body), spans,
                    {r.user: r for r in rows}, fastest, memo, names=named, ta=ta)


def tie_line(rows: list[Row]) -> str:
    """The one line that says why ranks are shared, when some are (empty otherwise)."""
    return TIE_LINE if any(r.label.endswith("=") for r in rows) else ""


def macro(module: TemplateModule, name: str) -> Macro:
    """A macro of the template by name (a TemplateModule's attributes are untyped)."""
    found = getattr(module, name)
    if not isinstance(found, Macro):
        raise TypeError(f"{TEMPLATE} has no macro {name!r}")
    return found
