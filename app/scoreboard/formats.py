"""A board snapshot as the API serves it: the JSON of app/schemas/scoreboard.py `Board` and the
course's CSV, made once per board version (app/scoreboard/cache.py), plain and gzip.

The JSON is written here rather than validated through the response model on every request
(thousands of test cells each time); its shape is the model's, which the tests check, and the
route keeps the model for the OpenAPI document. Each row's JSON and its gzip piece are kept
while the row's stamp and rank stay (app/core/gzip_pieces.py), so a new version costs the rows
that moved, not a `json.dumps` of the whole board holding the GIL for tens of milliseconds.
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass, field
from typing import Any

from app.core.etags import etag_of
from app.core.gzip_pieces import gzip_whole, member, piece
from app.scoreboard.audience import PUBLIC, TAS, rows_for
from app.scoreboard.boards import Snapshot
from app.scoreboard.rows import Row, to_csv

Part = tuple[bytes, bytes]  # (bytes, their gzip piece)


@dataclass(frozen=True)
class Payload:
    """What one board is answered with in one format."""

    body: bytes  # identity
    gzipped: bytes  # the same, gzip
    etag: str  # of `body`
    memo: dict[Any, Part] = field(default_factory=dict, compare=False, repr=False)  # row parts


def finite_only(value: Any) -> Any:
    """`value` with NaN and infinities as None (JSON has no words for them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_only(v) for v in value]
    return value


def to_json(value: Any) -> bytes:
    """Compact JSON as FastAPI's JSONResponse writes it (a NaN becomes null, not a 500)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        text = json.dumps(finite_only(value), ensure_ascii=False, separators=(",", ":"))
    return text.encode()


def part(data: bytes) -> Part:
    return data, piece(data)


def assemble(parts: list[Part], memo: dict[Any, Part]) -> Payload:
    body = b"".join(p[0] for p in parts)
    gzipped = member(b"".join(p[1] for p in parts), zlib.crc32(body), len(body))
    return Payload(body, gzipped, etag_of(body), memo)


def row_parts(row: Row, cut: str, first: bool, old: dict[Any, Part], memo: dict[Any, Part],
              ta: bool = False) -> list[Part]:
    """One row's JSON in two parts, `{"rank":N,"rank_label":..,"tie":..` and the rest, each
    reused while it holds (a student who moves up shifts the ranks and ties around them, not
    the rest of their rows)."""
    ranks = row.rank_fields()
    rank_key = ("rank", first, *ranks.values())
    rank = memo[rank_key] = old.get(rank_key) or part(
        (b"" if first else b",") + to_json(ranks)[:-1])
    rest_key = (cut, row.user, row.stamp)
    fields = row.to_dict(ta)
    rest = memo[rest_key] = old.get(rest_key) or part(
        b"," + to_json({k: v for k, v in fields.items() if k not in ranks})[1:])
    return [rank, rest]


def board_json(snapshot: Snapshot, previous: Payload | None = None, who: str = PUBLIC
               ) -> Payload:
    """The `Board` response: frozen, gpu_model, gpu_models, ranked rows, for `who`
    (app/scoreboard/audience.py: the public never gets a hidden row or an aliased name)."""
    head = to_json({"frozen": snapshot.frozen, "gpu_model": snapshot.view.gpu_model,
                    "gpu_models": snapshot.models})[:-1] + b',"rows":['
    old = previous.memo if previous is not None else {}
    memo: dict[Any, Part] = {}
    shown = rows_for(snapshot.rows, who)
    rows = [p for i, r in enumerate(shown)
            for p in row_parts(r, snapshot.cut, i == 0, old, memo, who == TAS)]
    return assemble([part(head), *rows, part(b"]}")], memo)


def board_csv(snapshot: Snapshot, test_ids: list[str], who: str = PUBLIC) -> Payload:
    """The CSV for `who`; a frozen board's public export says when it was frozen on every
    row."""
    stamp = snapshot.frozen_at if snapshot.frozen and not snapshot.view.live else None
    body = to_csv(rows_for(snapshot.rows, who), test_ids, stamp, who == TAS).encode()
    return Payload(body, gzip_whole(body), etag_of(body))
