"""What the board cache keeps from one version to the next never shows: a table or JSON built
from the previous version's parts is byte for byte the one built from nothing, through a random
walk of new results, moved ranks, new fastest times, renames, late marks and bands, and each
viewer's copy (plain and gzip) is the table with only their row marked."""

from __future__ import annotations

import copy
import gzip
import random
from typing import Any

from app.db.models.standing import FROZEN, LIVE
from app.pages.rendering import templates
from app.pages.views import board_html
from app.scoreboard import formats
from app.scoreboard.boards import Snapshot, View, ranked
from app.scoreboard.rows import Row

TESTS = [f"t{i:02d}" for i in range(1, 11)]


def new_row(rng: random.Random, user: str, stamp: int) -> Row:
    passed = rng.randint(0, 10)
    tests: dict[str, dict[str, Any]] = {
        t: {"verdict": "AC" if i < passed else rng.choice(["WA", "TLE"]),
            "seconds": rng.choice([0.1, 0.2, 0.3, rng.uniform(0.05, 1)])}
        for i, t in enumerate(TESTS)}
    return Row(0, user, user.title(), passed, round(sum(c["seconds"] for c in tests.values()), 6),
               3 * passed, stamp, tests, rng.random() < 0.2,
               rng.choice([None, 0.01]), stamp)


def snapshot(rows: list[Row], cut: str, version: int) -> Snapshot:
    return Snapshot(version, View(False, None), cut, None, [], ranked(copy.deepcopy(rows)))


def test_parts_kept_across_versions_build_the_same_bytes_as_from_nothing():
    rng = random.Random(11)
    rows = [new_row(rng, f"u{i:02d}", 1) for i in range(25)]
    table = payload = None
    for version in range(2, 60):
        for _ in range(rng.randint(1, 3)):  # a result, a rename, a refinement...
            i = rng.randrange(len(rows) + 1)
            if i == len(rows):
                rows.append(new_row(rng, f"u{len(rows):02d}", version))
            else:
                rows[i] = new_row(rng, rows[i].user, version)
        cut = FROZEN if version % 17 == 0 else LIVE
        snap = snapshot(rows, cut, version)
        table = board_html.fragment(templates.env, snap, TESTS, table)
        fresh = board_html.fragment(templates.env, snapshot(rows, cut, version), TESTS)
        assert table.body == fresh.body and table.pieces == fresh.pieces
        assert gzip.decompress(table.gzip_for(None)) == fresh.body
        payload = formats.board_json(snap, payload)
        assert payload.body == formats.board_json(snapshot(rows, cut, version)).body
        assert gzip.decompress(payload.gzipped) == payload.body


def test_each_viewer_copy_differs_only_by_their_marked_row():
    rng = random.Random(5)
    rows = [new_row(rng, f"u{i:02d}", 1) for i in range(12)]
    table = board_html.fragment(templates.env, snapshot(rows, LIVE, 1), TESTS)
    for row in rows:
        mine = table.body_for(row.user)
        assert gzip.decompress(table.gzip_for(row.user)) == mine
        assert mine.replace(board_html.MINE.encode(), b"").replace(b" (you)", b"") == table.body
        assert mine.count(b" (you)") == 1
    assert table.body_for("nobody") == table.body and table.etag_for("nobody") == table.etag
    assert len({table.etag_for(r.user) for r in rows}) == len(rows)
