"""The result page shows a WA test's error map and its reading next to the test."""

from __future__ import annotations

import numpy as np

from app.submissions import recording
from kernels.errormap import error_map_arrays
from kernels.fileformat import InputHeader
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, make_submission


def last_tile_wrong() -> dict:
    """The map of an hw4-mini t10-shaped output (N=128) whose last 32 rows are wrong."""
    header = InputHeader(4, 128, 32)
    want = np.zeros((4, 128, 32), np.float32)
    got = want.copy()
    got[:, 96:, :] = 1.0
    return error_map_arrays(got, want, header).to_dict()


def test_a_wa_test_shows_where_it_is_wrong(client, db, settings, student):
    sub = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["tests"][9]["error_map"] = last_tile_wrong()
    recording.record_result(db, settings, sub.id, 1, result)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML).text
    cell = page[page.index('id="errmap-t10"'):]
    cell = cell[:cell.index("</td>")]
    assert "<strong>Where:</strong> errors only in rows 96-127 of every batch" in cell
    assert "the last 32-row tile" in cell and "4,096 wrong values" in cell
    assert cell.count("<svg") == 2 and "<details open>" in cell
    assert page.count('class="errmap-cell"') == 1  # the AC tests carry none


def test_the_map_arrives_with_the_test_while_judging(client, db, settings, student):
    sub = make_submission(db, student)
    test = {**judged_result(0, 0.5, total=1)["tests"][0], "error_map": last_tile_wrong()}
    assert recording.record_progress(db, sub.id, 1, {"type": "test-done", "test": test})
    login(client, student)
    partial = client.get(f"/partials/submissions/{sub.id}", headers=HTML).text
    assert 'id="errmap-t01"' in partial and "the last 32-row tile" in partial


def test_a_damaged_map_leaves_the_page_working(client, db, settings, student):
    sub = make_submission(db, student)
    result = judged_result(9, 0.5)
    result["tests"][9]["error_map"] = {"B": 4, "reading": "half a map"}
    recording.record_result(db, settings, sub.id, 1, result)
    login(client, student)
    page = client.get(f"/submissions/{sub.id}", headers=HTML)
    assert page.status_code == 200 and "errmap-t10" not in page.text
    api = client.get(f"/api/submissions/{sub.id}", headers=student.headers)
    assert api.status_code == 200
