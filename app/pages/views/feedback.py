"""What the submission page shows of a judging's feedback: figures per test, the two SVG charts,
the diagnosis findings and who may ask for a profile. Built from the stored JSON only; a block
that does not have the expected shape is left out rather than failing the page."""

from __future__ import annotations

import logging
from typing import Any

from markupsafe import Markup

from app.charts.submission import bars_from, points_from, roofline_svg, time_bars_svg

log = logging.getLogger(__name__)


def charts(feedback: dict[str, Any] | None, limits: dict[str, float]) -> dict[str, Markup]:
    """{"roofline": svg, "bars": svg} for a feedback block with rows; {} otherwise."""
    rows = (feedback or {}).get("roofline") or []
    gpu = (feedback or {}).get("gpu") or {}
    if not rows or not gpu:
        return {}
    try:
        title = f"Roofline on {gpu.get('name', 'the GPU')}"
        roofline = roofline_svg(points_from(rows), float(gpu["peak_tflops"]),
                                float(gpu["bandwidth_gbs"]), title=title)
        bars = time_bars_svg(bars_from(rows, limits),
                             title="Time against the limit and the reference kernel")
    except (KeyError, TypeError, ValueError) as exc:  # an odd block: the page still renders
        log.warning("feedback block not drawable: %s", exc)
        return {}
    return {"roofline": Markup(roofline), "bars": Markup(bars)}  # noqa: S704 - escaped SVG


def rows_by_test(feedback: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Test id -> its roofline row (TestRoofline.to_dict())."""
    return {str(r.get("test_id")): r for r in (feedback or {}).get("roofline") or []
            if isinstance(r, dict)}


def findings(diagnosis: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every finding of every sanitizer run, flattened for a table, with its run's ending."""
    out = []
    for report in (diagnosis or {}).get("reports") or []:
        for f in report.get("findings") or []:
            out.append({"tool": report.get("tool", ""), "kind": f.get("kind", ""),
                        "where": f.get("where") or "", "thread": _triple(f.get("thread")),
                        "block": _triple(f.get("block")),
                        "details": "; ".join(f.get("details") or []),
                        "run": report.get("run", "")})
    return out


def _triple(value: Any) -> str:
    return "(" + ",".join(str(v) for v in value) + ")" if value else ""
