"""The best-so-far chart: one step line per model, dots where a submission became the best."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from app.charts.history import StepPoint, StepSeries, best_so_far_svg

NS = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 11, 20, 9, 0)


def test_a_step_line_falls_at_each_improvement_with_one_dot_each() -> None:
    points = [StepPoint(T0, 20.0, True, "#1", "8 passed"),
              StepPoint(T0 + timedelta(hours=1), 20.0, False, "#2"),
              StepPoint(T0 + timedelta(hours=2), 2.0, True, "#3", "10 passed")]
    svg = ET.fromstring(best_so_far_svg([StepSeries("GTX 1080", points)]))
    [path] = svg.iter(f"{NS}path")
    assert path.attrib["d"].count("H") == 2 and path.get("data-series") == "GTX 1080"
    dots = list(svg.iter(f"{NS}circle"))
    assert [d.findtext(f"{NS}title") for d in dots] == ["#1", "#3"]
    y_first, y_last = float(dots[0].attrib["cy"]), float(dots[1].attrib["cy"])
    assert y_last > y_first  # less time is lower on the chart
    texts = [t.text for t in svg.iter(f"{NS}text")]
    assert "8 passed" in texts and "10 passed" in texts and "11-20 09:00" in texts


def test_labels_are_escaped_and_an_empty_history_says_so() -> None:
    hostile = StepSeries("<script>x</script>", [StepPoint(T0, 1.0, True, "a & b <i>")])
    svg = best_so_far_svg([hostile])
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "a &amp; b &lt;i&gt;" in svg
    ET.fromstring(svg)
    assert "nothing judged yet" in best_so_far_svg([])


def test_one_passing_submission_among_wrong_ones_shows_every_point_and_its_verdict() -> None:
    wa = [StepPoint(T0 + timedelta(hours=h), 0.0, False, "", verdict="WA", own_label=f"#{h}: WA")
          for h in (0, 1)]
    ac = StepPoint(T0 + timedelta(hours=2), 3.0, True, "#3", "10 passed", "AC", "#3: AC", 3.0)
    svg = ET.fromstring(best_so_far_svg([StepSeries("CPU", [*wa, ac])],
                                        zone=ZoneInfo("Asia/Taipei")))
    own = list(svg.iter(f"{NS}rect"))
    own = [r for r in own if r.get("class") == "own"]
    assert [r.get("data-verdict") for r in own] == ["WA", "WA", "AC"]
    assert [r.findtext(f"{NS}title") for r in own] == ["#0: WA", "#1: WA", "#3: AC"]
    texts = [t.text for t in svg.iter(f"{NS}text")]
    assert texts.count("WA") == 2 and texts.count("AC") == 1
    assert "11-20 17:00" in texts and "submitted (Asia/Taipei)" in texts  # 09:00 UTC
