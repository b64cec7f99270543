"""SVG of a student's best-so-far total time over time, one step line per GPU model.

House style of app/charts/: a pure function from plain numbers to SVG text, no JavaScript, every
label escaped. Time runs left to right over the student's submissions; the y axis is the
best-so-far's total time on a log scale (totals fall by orders of magnitude over a homework); a
dot marks each submission that became the best, labelled with its passed count when that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from xml.sax.saxutils import escape, quoteattr

from app.charts.submission import FONT, Frame, decades, log_scale

EPOCH = datetime(1970, 1, 1)  # stored times are naive UTC: count from a naive epoch
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
VERDICT_FILL = {"AC": "#4caf50", "WA": "#e53935", "NO": "#e53935", "TLE": "#fb8c00"}  # else purple
MAX_VERDICT_LABELS = 24  # more submissions than this: verdicts only in the points' tooltips


@dataclass(frozen=True)
class StepPoint:
    """The best-so-far right after one submission."""

    at: datetime  # when the submission was made (x)
    total_s: float  # the best-so-far's total time, seconds (y)
    improved: bool  # this submission became the best: a dot
    label: str  # the dot's tooltip, e.g. "#42: 9 passed, 12.3 s"
    mark: str = ""  # text beside the dot (e.g. "9 passed" when the passed count changed)
    verdict: str = ""  # the submission's own verdict, written beside its own point
    own_label: str = ""  # its own point's tooltip, e.g. "#43: WA, 3 passed, 1.2 s"
    own_s: float = 0.0  # its own total time (0: none: drawn on the chart's floor)


@dataclass(frozen=True)
class StepSeries:
    """One GPU model's best-so-far."""

    name: str  # the model, shown in the legend
    points: Sequence[StepPoint]  # in time order


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {FONT}{extra}>'
            f"{escape(text)}</text>")


def seconds(at: datetime) -> float:
    """A naive-UTC time as seconds on the x axis (no local time zone involved)."""
    return (at.replace(tzinfo=None) - EPOCH).total_seconds()


def linear(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    """Map [lo, hi] linearly onto [a, b] (a single value maps to the middle)."""
    if hi <= lo:
        return lambda _v: (a + b) / 2
    return lambda v: a + (v - lo) / (hi - lo) * (b - a)


def best_so_far_svg(series: Sequence[StepSeries], title: str = "Best so far",
                    frame: Frame | None = None, zone: tzinfo = UTC) -> str:
    """The step chart, each submission's own result as a point with its verdict, the time axis
    in `zone` (the course's); an empty chart says there is nothing judged yet."""
    frame = frame or Frame(width=760, height=280, right=220)  # room for model names
    judged = sum(len(s.points) for s in series)
    label = f"{title}: {judged} judged submissions"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="history" width="{frame.width}" '
             f'height="{frame.height}" viewBox="0 0 {frame.width} {frame.height}" role="img" '
             f"aria-label={quoteattr(label)}>", f"<title>{escape(label)}</title>",
             _text(frame.width / 2, 18, title, "middle", ' font-weight="bold"')]
    if not judged:
        parts += [_text(frame.width / 2, frame.height / 2, "nothing judged yet", "middle"),
                  "</svg>"]
        return "\n".join(parts)
    sx, sy, lo, hi, span = _scales(series, frame)
    parts += _axes(frame, sy, lo, hi, span, sx, zone)
    for i, s in enumerate(series):
        parts += _own_points(s, sx, sy, frame, judged <= MAX_VERDICT_LABELS)
        parts += _series(s, COLOURS[i % len(COLOURS)], sx, sy, frame, i)
    parts.append("</svg>")
    return "\n".join(parts)


Scale = Callable[[float], float]


def _scales(series: Sequence[StepSeries], frame: Frame
            ) -> tuple[Scale, Scale, float, float, tuple[float, float]]:
    """x over every submission's time; y (log) over every time shown, best or own."""
    points = [p for s in series for p in s.points]
    times = [seconds(p.at) for p in points]
    sx = linear(min(times), max(times), frame.left + 10, frame.width - frame.right - 10)
    values = [v for p in points for v in (p.total_s, p.own_s) if v > 0] or [1.0]
    lo, hi = decades(min(values) / 1.5, max(values) * 1.5)
    sy = log_scale(lo, hi, frame.height - frame.bottom, frame.top)
    return sx, sy, lo, hi, (min(times), max(times))


def _axes(frame: Frame, sy: Callable[[float], float], lo: float, hi: float,
          span: tuple[float, float], sx: Callable[[float], float], zone: tzinfo) -> list[str]:
    left, right, bottom = frame.left, frame.width - frame.right, frame.height - frame.bottom
    parts = [f'<rect x="{left}" y="{frame.top}" width="{right - left}" '
             f'height="{bottom - frame.top}" fill="none" stroke="#999"/>']
    value = lo
    while value <= hi * 1.0001:
        y = sy(value)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(_text(left - 4, y + 4, f"{value:g} s", "end"))
        value *= 10
    t0, t1 = span
    for t in (t0, t1) if t1 > t0 else (t0,):
        stamp = datetime.fromtimestamp(t, UTC).astimezone(zone).strftime("%m-%d %H:%M")
        parts.append(_text(sx(t), bottom + 14, stamp, "middle"))
    name = getattr(zone, "key", None) or "UTC"
    parts.append(_text((left + right) / 2, frame.height - 6, f"submitted ({name})", "middle"))
    return parts


def _own_points(s: StepSeries, sx: Callable[[float], float], sy: Callable[[float], float],
                frame: Frame, labelled: bool) -> list[str]:
    """Every submission's own result: a diamond coloured by its verdict at its own total time
    (on the floor when it has none), the verdict written above it while there are few."""
    parts = []
    floor = frame.height - frame.bottom - 4
    for p in s.points:
        x = sx(seconds(p.at))
        y = sy(p.own_s) if p.own_s > 0 else floor
        fill = VERDICT_FILL.get(p.verdict, "#8e24aa")
        parts.append(f'<rect class="own" data-verdict={quoteattr(p.verdict)} x="{x - 3.5:.1f}" '
                     f'y="{y - 3.5:.1f}" width="7" height="7" fill="{fill}" '
                     f'transform="rotate(45 {x:.1f} {y:.1f})"><title>{escape(p.own_label)}'
                     f"</title></rect>")
        if labelled and p.verdict:
            parts.append(_text(x, y + 15, p.verdict, "middle", f' fill="{fill}" class="verdict"'))
    return parts


def _series(s: StepSeries, colour: str, sx: Callable[[float], float],
            sy: Callable[[float], float], frame: Frame, row: int) -> list[str]:
    pts = [p for p in s.points if p.total_s > 0]
    if not pts:
        return []
    path = f"M{sx(seconds(pts[0].at)):.1f},{sy(pts[0].total_s):.1f}"
    for p in pts[1:]:
        path += f" H{sx(seconds(p.at)):.1f} V{sy(p.total_s):.1f}"
    parts = [f'<path class="step" d="{path}" fill="none" stroke="{colour}" stroke-width="2" '
             f"data-series={quoteattr(s.name)}/>"]
    for p in pts:
        x, y = sx(seconds(p.at)), sy(p.total_s)
        if p.improved:
            parts.append(f'<circle class="best" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">'
                         f"<title>{escape(p.label)}</title></circle>")
        if p.mark:
            parts.append(_text(x + 5, y - 6, p.mark))
    legend_y = frame.top + 14 + 16 * row
    parts.append(f'<rect x="{frame.width - frame.right + 8}" y="{legend_y - 9}" width="10" '
                 f'height="10" fill="{colour}"/>')
    parts.append(_text(frame.width - frame.right + 22, legend_y, s.name))
    return parts
