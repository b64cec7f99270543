"""What the result page shows of a WA test's error map: its reading and its SVG at both tiles.

Built from the stored test rows (JudgedTest.detail["error_map"], ErrorMap.to_dict() as the worker
shipped it); a map that does not read back is left out rather than failing the page.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from markupsafe import Markup

from app.charts.errormap import error_map_svg
from app.db.models import JudgedTest
from kernels.errormap import ErrorMap

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MapView:
    """One WA test's map, ready for the template."""

    reading: str  # the one line for the student
    bad: int  # values over the tolerance (or NaN/inf)
    svg32: Markup  # the map at 32-row tiles
    svg64: Markup  # the same at 64-row tiles


def map_view(stored: dict | None, label: str) -> MapView | None:
    """The view of one stored map (a test's, a custom run's); None when absent or unreadable."""
    if not stored:
        return None
    try:
        found = ErrorMap.from_dict(stored)
        return MapView(found.reading, found.bad,
                       Markup(error_map_svg(found, 32)),  # noqa: S704 - escaped by the chart
                       Markup(error_map_svg(found, 64)))  # noqa: S704
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        log.warning("error map of %s not drawable: %s", label, exc)
        return None


def error_maps(tests: Iterable[JudgedTest]) -> dict[str, MapView]:
    """Test id -> its map view, for the tests that carry one."""
    views = {}
    for row in tests:
        view = map_view((row.detail or {}).get("error_map"), row.test_id)
        if view is not None:
            views[row.test_id] = view
    return views
