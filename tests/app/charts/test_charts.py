"""The SVG charts of a submission page: well-formed, points where the numbers put them, escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.charts.submission import (
    Point,
    TimeBar,
    bars_from,
    points_from,
    roofline_svg,
    time_bars_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on anything that is not well-formed XML


def circles(root: ET.Element) -> dict[str, tuple[float, float]]:
    return {c.get("data-test", ""): (float(c.get("cx", 0)), float(c.get("cy", 0)))
            for c in root.iter(f"{SVG}circle")}


def test_roofline_places_each_test_by_intensity_and_throughput() -> None:
    points = [Point("t01", 32.0, 0.5), Point("t30", 8192.0, 11.0), Point("t20", 512.0, 11.0)]
    dots = circles(parse(roofline_svg(points, 60.0, 3000.0)))
    assert set(dots) == {"t01", "t20", "t30"}
    assert dots["t01"][0] < dots["t20"][0] < dots["t30"][0]  # more intensity: further right
    assert dots["t30"][1] < dots["t01"][1]  # faster: higher up (smaller y)
    assert dots["t30"][1] == pytest.approx(dots["t20"][1])
    # log scale: 32 -> 512 and 512 -> 8192 are both a factor 16, so the same distance
    assert dots["t30"][0] - dots["t20"][0] == pytest.approx(dots["t20"][0] - dots["t01"][0])


def test_the_roof_bends_at_the_ridge_and_is_flat_at_the_peak() -> None:
    root = parse(roofline_svg([Point("t01", 32.0, 0.5)], 60.0, 3000.0))
    roof = next(p for p in root.iter(f"{SVG}polyline") if p.get("class") == "ceiling")
    corners = [tuple(map(float, xy.split(","))) for xy in roof.get("points", "").split()]
    (x0, y0), (x1, y1), (x2, y2) = corners
    assert x0 < x1 < x2 and y0 > y1  # rising under the bandwidth, up to the ridge (20 FLOP/B)
    assert y1 == pytest.approx(y2)  # then the flat peak
    labels = "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "FP32 peak 60.0 TFLOP/s" in labels and "3000 GB/s" in labels


def test_labels_are_escaped_not_injected() -> None:
    evil = '<script>alert("x")</script>&"'
    svg = roofline_svg([Point(evil, 32.0, 1.0)], 60.0, 3000.0, title=evil)
    root = parse(svg)
    assert "<script>" not in svg
    assert not list(root.iter(f"{SVG}script"))
    assert evil in circles(root)
    assert any(t.text == evil for t in root.iter(f"{SVG}text"))


def test_time_bars_show_time_limit_reference_and_start_cost() -> None:
    bars = [TimeBar("t01", 0.4, 1.0, reference_s=0.001, start_s=0.35),
            TimeBar("t02", 2.5, 2.0)]
    root = parse(time_bars_svg(bars))
    rects = {r.get("data-test"): r for r in root.iter(f"{SVG}rect") if r.get("class") == "time"}
    assert float(rects["t01"].get("width", 0)) < float(rects["t02"].get("width", 0))
    assert rects["t01"].get("fill") == "#2ca02c" and rects["t02"].get("fill") == "#d62728"
    limits = [float(line.get("x1", 0)) for line in root.iter(f"{SVG}line")
              if line.get("class") == "limit"]
    assert limits[0] < limits[1]  # 1 s left of 2 s
    assert len([p for p in root.iter(f"{SVG}path") if p.get("class") == "reference"]) == 1
    start = next(r for r in root.iter(f"{SVG}rect") if r.get("class") == "start")
    assert 0 < float(start.get("width", 0)) < float(rects["t01"].get("width", 0))
    notes = [t.text for t in root.iter(f"{SVG}text")]
    assert "0.4 s / 1 s, 0.0025x ref" in notes


def test_worker_roofline_rows_become_points_and_bars() -> None:
    rows = [{"test_id": "t30", "intensity": 8192.0, "achieved_tflops": 11.0, "seconds": 0.05,
             "reference_s": 0.02, "cuda_start_s": None}]
    assert points_from(rows) == [Point("t30", 8192.0, 11.0)]
    assert bars_from(rows, {"t30": 10.0}) == [TimeBar("t30", 0.05, 10.0, 0.02, None)]
