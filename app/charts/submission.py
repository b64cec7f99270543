"""SVG charts for a submission page: its roofline, and each test's time vs its limit and reference.

Pure functions from plain numbers (the worker's roofline dicts) to SVG text: no front-end build, no
JavaScript, and nothing imported from the worker (the service reads the result message's JSON).
Every label is escaped, so a test id or GPU name cannot inject markup into the page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

FONT = 'font-family="sans-serif" font-size="11"'


@dataclass(frozen=True)
class Point:
    """One test on the roofline."""

    label: str  # the test id
    intensity: float  # FLOP per byte (x), > 0
    tflops: float  # achieved TFLOP/s (y), > 0


@dataclass(frozen=True)
class TimeBar:
    """One test's time with what it is measured against."""

    label: str  # the test id
    seconds: float  # the submission's time
    limit_s: float  # the test's time limit
    reference_s: float | None = None  # the reference kernel's time
    start_s: float | None = None  # cuda-program: the fixed CUDA start-up cost inside `seconds`


@dataclass(frozen=True)
class Frame:
    """The plot area inside the SVG."""

    width: int = 640  # whole SVG width, px
    height: int = 400  # whole SVG height, px
    left: int = 60  # margin for the y labels
    right: int = 20
    top: int = 30  # room for the title
    bottom: int = 40  # room for the x labels


def log_scale(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    """Map [lo, hi] (positive) logarithmically onto [a, b]."""
    span = math.log10(hi) - math.log10(lo)
    return lambda v: a + (math.log10(v) - math.log10(lo)) / span * (b - a)


def decades(lo: float, hi: float) -> tuple[float, float]:
    """The enclosing powers of ten of [lo, hi]."""
    return 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {FONT}{extra}>'
            f"{escape(text)}</text>")


def _ticks(lo: float, hi: float) -> list[float]:
    return [10.0 ** e for e in range(round(math.log10(lo)), round(math.log10(hi)) + 1)]


def _tick_label(value: float) -> str:
    return f"{value:g}"


def _open(frame: Frame, title: str, label: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{frame.width}" '
            f'height="{frame.height}" viewBox="0 0 {frame.width} {frame.height}" role="img" '
            f"aria-label={quoteattr(label)}>",
            f"<title>{escape(label)}</title>",
            _text(frame.width / 2, 18, title, "middle", ' font-weight="bold"')]


def roofline_svg(points: Sequence[Point], peak_tflops: float, bandwidth_gbs: float,
                 title: str = "Roofline", frame: Frame | None = None) -> str:
    """Log-log intensity vs throughput: the two ceilings and one labelled dot per test."""
    frame = frame or Frame()
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9)  # FLOP/byte where the ceilings meet
    xs = [p.intensity for p in points if p.intensity > 0] + [ridge]
    ys = [p.tflops for p in points if p.tflops > 0] + [peak_tflops]
    x_lo, x_hi = decades(min(xs) / 2, max(xs) * 2)
    y_lo, y_hi = decades(min(ys) / 2, peak_tflops * 1.5)
    sx = log_scale(x_lo, x_hi, frame.left, frame.width - frame.right)
    sy = log_scale(y_lo, y_hi, frame.height - frame.bottom, frame.top)
    parts = _open(frame, title, f"{title}: {len(points)} tests")
    parts += _axes(frame, sx, sy, (x_lo, x_hi), (y_lo, y_hi),
                   "operational intensity (FLOP/byte)", "TFLOP/s")
    parts.append(_ceiling(sx, sy, x_lo, x_hi, ridge, peak_tflops, bandwidth_gbs))
    parts.append(_text(sx(x_hi) - 4, sy(peak_tflops) - 4, f"FP32 peak {peak_tflops:.1f} TFLOP/s",
                       "end"))
    parts.append(_text(sx(x_lo) + 4, sy(max(y_lo, bandwidth_gbs * 1e9 * x_lo / 1e12)) - 6,
                       f"{bandwidth_gbs:.0f} GB/s"))
    for p in points:
        if p.intensity > 0 and p.tflops > 0:
            x, y = sx(p.intensity), sy(p.tflops)
            tip = f"{p.label}: {p.tflops:.3g} TFLOP/s at {p.intensity:.3g} FLOP/B"
            parts.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4" '
                         f'fill="#1f77b4" data-test={quoteattr(p.label)}>'
                         f"<title>{escape(tip)}</title></circle>")
            parts.append(_text(x + 6, y - 6, p.label))
    parts.append("</svg>")
    return "\n".join(parts)


def _ceiling(sx: Callable[[float], float], sy: Callable[[float], float], x_lo: float,
             x_hi: float, ridge: float, peak: float, bandwidth_gbs: float) -> str:
    """The roof: bandwidth * intensity up to the ridge, then the flat peak."""
    start = max(x_lo, peak * 1e-3 * 1e12 / (bandwidth_gbs * 1e9))  # where the slope enters view
    corners = [(start, bandwidth_gbs * 1e9 * start / 1e12), (ridge, peak), (x_hi, peak)]
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in corners)
    return f'<polyline class="ceiling" points="{path}" fill="none" stroke="#d62728" ' \
           f'stroke-width="2"/>'


def _axes(frame: Frame, sx: Callable[[float], float], sy: Callable[[float], float],
          xr: tuple[float, float], yr: tuple[float, float], x_label: str, y_label: str
          ) -> list[str]:
    bottom, left = frame.height - frame.bottom, frame.left
    parts = [f'<rect x="{left}" y="{frame.top}" width="{frame.width - left - frame.right}" '
             f'height="{bottom - frame.top}" fill="none" stroke="#999"/>']
    for t in _ticks(*xr):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{bottom}" x2="{sx(t):.1f}" y2="{frame.top}" '
                     'stroke="#eee"/>')
        parts.append(_text(sx(t), bottom + 14, _tick_label(t), "middle"))
    for t in _ticks(*yr):
        parts.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{frame.width - frame.right}" '
                     f'y2="{sy(t):.1f}" stroke="#eee"/>')
        parts.append(_text(left - 4, sy(t) + 4, _tick_label(t), "end"))
    parts.append(_text((left + frame.width - frame.right) / 2, frame.height - 6, x_label,
                       "middle"))
    parts.append(_text(14, (frame.top + bottom) / 2, y_label, "middle",
                       f' transform="rotate(-90 14 {(frame.top + bottom) / 2:.1f})"'))
    return parts


ROW_HEIGHT = 22
BAR_HEIGHT = 12


def time_bars_svg(bars: Sequence[TimeBar], title: str = "Time per test",
                  width: int = 640) -> str:
    """One row per test on a shared log time axis: the bar is the time (its dark start the CUDA
    start-up cost), the red tick the limit, the blue diamond the reference kernel's time.
    "" when no test has a time (nothing ran, e.g. a compile error): no all-zero chart."""
    if not any(b.seconds > 0 for b in bars):
        return ""
    frame = Frame(width=width, height=60 + ROW_HEIGHT * max(1, len(bars)), left=50, right=150)
    values = [v for b in bars for v in (b.seconds, b.limit_s, b.reference_s, b.start_s)
              if v is not None and v > 0] or [1.0]
    lo, hi = decades(min(values) / 2, max(values) * 1.2)
    sx = log_scale(lo, hi, frame.left, frame.width - frame.right)
    parts = _open(frame, title, f"{title}: {len(bars)} tests")
    bottom = frame.height - frame.bottom
    for t in _ticks(lo, hi):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{frame.top}" x2="{sx(t):.1f}" y2="{bottom}" '
                     'stroke="#eee"/>')
        parts.append(_text(sx(t), bottom + 14, f"{t:g} s", "middle"))
    for row, bar in enumerate(bars):
        parts += _bar_row(bar, frame.top + row * ROW_HEIGHT + 4, sx, frame, lo)
    parts.append("</svg>")
    return "\n".join(parts)


def _bar_row(bar: TimeBar, y: float, sx: Callable[[float], float], frame: Frame,
             lo: float) -> list[str]:
    left, mid = frame.left, y + BAR_HEIGHT / 2
    parts = [_text(left - 6, mid + 4, bar.label, "end")]
    if bar.seconds > 0:
        colour = "#2ca02c" if bar.seconds <= bar.limit_s else "#d62728"
        parts.append(f'<rect class="time" x="{left}" y="{y:.1f}" '
                     f'width="{max(1.0, sx(bar.seconds) - left):.1f}" height="{BAR_HEIGHT}" '
                     f'fill="{colour}" data-test={quoteattr(bar.label)}/>')
    if bar.start_s and bar.start_s > lo:
        parts.append(f'<rect class="start" x="{left}" y="{y:.1f}" '
                     f'width="{sx(min(bar.start_s, bar.seconds or bar.start_s)) - left:.1f}" '
                     f'height="{BAR_HEIGHT}" fill="#000" fill-opacity="0.35"/>')
    if bar.limit_s > 0:
        x = sx(bar.limit_s)
        parts.append(f'<line class="limit" x1="{x:.1f}" y1="{y - 2:.1f}" x2="{x:.1f}" '
                     f'y2="{y + BAR_HEIGHT + 2:.1f}" stroke="#d62728" stroke-width="2"/>')
    if bar.reference_s and bar.reference_s > 0:
        x = sx(bar.reference_s)
        parts.append(f'<path class="reference" d="M{x:.1f},{y - 1:.1f} l4,{mid - y + 1:.1f} '
                     f'l-4,{mid - y + 1:.1f} l-4,{-(mid - y + 1):.1f} z" fill="#1f77b4"/>')
    parts.append(_text(frame.width - frame.right + 6, mid + 4, _bar_note(bar)))
    return parts


def _bar_note(bar: TimeBar) -> str:
    note = f"{bar.seconds:.3g} s / {bar.limit_s:g} s"
    if bar.reference_s and bar.seconds > 0:
        note += f", {bar.reference_s / bar.seconds:.2g}x ref"
    return note


def points_from(rows: Sequence[dict[str, object]]) -> list[Point]:
    """Roofline points from the worker's per-test roofline dicts (TestRoofline.to_dict())."""
    return [Point(str(r["test_id"]), _number(r["intensity"]), _number(r["achieved_tflops"]))
            for r in rows]


def bars_from(rows: Sequence[dict[str, object]], limits: dict[str, float]) -> list[TimeBar]:
    """Time bars from the roofline dicts and each test's time limit (test id -> seconds)."""
    return [TimeBar(str(r["test_id"]), _number(r["seconds"]),
                    limits.get(str(r["test_id"]), 0.0),
                    _optional(r.get("reference_s")), _optional(r.get("cuda_start_s")))
            for r in rows]


def _number(value: object) -> float:
    """float() of a JSON number (or numeric string); TypeError for anything else, as float()."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"expected a number, got {type(value).__name__}")


def _optional(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None
