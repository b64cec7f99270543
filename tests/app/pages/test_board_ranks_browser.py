"""The board in Chromium shows its ranks: ties as "1=" with the one line that says
why, and a late submission's graded score with its penalty, ranked below an on-time one. A
screenshot is kept with the test's files (tmp_path) for a person to look at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.scoreboard.ties import TIE_LINE
from app.submissions import recording
from app.wiring import wired_sessions
from tests.app.pages.test_scoreboard_browser import Site, page, site  # noqa: F401 (fixtures)
from tests.app.utils.factories import judged_result, make_submission


def record(where: Site, name: str, seconds: float, band: float | None = None,
           penalty: float = 0.0) -> None:
    with wired_sessions(where.settings.db_url)() as db:
        sub = make_submission(db, where.accounts[name])
        sub.late, sub.late_penalty = bool(penalty), penalty
        db.commit()
        result = judged_result(10, seconds)
        if band is not None:
            result["timing"] = {"total_s": seconds * 10, "total_band_s": band}
        recording.record_result(db, where.settings, sub.id, 1, result)


def cells(tab: Any, column: int) -> list[str]:
    return tab.locator(f"table.board tbody tr td:nth-child({column})").all_inner_texts()


def test_ties_and_late_penalties_read_on_the_page(page: Any, site: Site,  # noqa: F811
                                                  tmp_path: Path):
    record(site, "alice", 1.8350, band=1.19)  # alice and bob 7 ms apart: a tie at 95%
    record(site, "bob", 1.8357, band=0.71)
    record(site, "carol", 0.1, penalty=20.0)  # the fastest, but late: 48 of 60
    page.goto(f"{site.url}/scoreboard")
    line = page.locator("#tie-line")
    assert line.inner_text() == TIE_LINE
    assert cells(page, 2) == ["1=", "1=", "3"]
    assert [c.split()[0] for c in cells(page, 3)] == ["60", "60", "48"]
    assert "(60 −20%)" in cells(page, 3)[2]
    assert page.locator("#late-line").is_visible()
    shot = tmp_path / "board-ties-penalty.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 0
