"""Paired runs in Chromium against a real uvicorn: on the TA page a settled paired comparison offers
"Compare again"; the click asks for a new one, which the table lists as pending, without the
button, while the board keeps the first outcome.

FLASHJUDGE_SHOTS=/some/dir keeps screenshots at 1280 and 390 px (tests/app/utils/served_site.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.db.models import PairedRun
from app.scoreboard.paired import service, store
from tests.app.scoreboard.test_paired_runs import board, outcome
from tests.app.utils.served_site import Site, chromium, log_in, needs_chromium, served, shoot

pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("paired")) as running:
        yield running


def test_a_ta_compares_a_settled_pair_again_from_the_ta_page(site: Site):
    with site.db() as db:
        board(db, site.settings, site.accounts["alice"], site.accounts["bob"])
        service.start(db, site.settings)
        run = db.query(PairedRun).one()
        store.record(db, run.id, run.key, outcome("b-faster"))
    with chromium() as browser:
        page: Any = browser.new_context().new_page()
        log_in(page, site, "tara")
        page.goto(f"{site.url}/admin")
        rows = page.locator("#paired-runs tbody tr")
        assert rows.count() == 1 and "bob faster: ordered by paired runs" in rows.inner_text()
        shoot(page, "admin-paired-settled")
        rows.locator("button", has_text="Compare again").click()
        page.locator("#paired-message").wait_for()
        assert "alice and bob: compared again" in page.locator("#paired-message").inner_text()
        assert rows.count() == 2
        assert rows.nth(0).locator("td").nth(2).inner_text() == "pending"
        assert rows.nth(0).locator("button").count() == 0  # no second request while pending
        assert "Pairs pending 1 · done 1" in page.locator("#paired-progress").inner_text()
        shoot(page, "admin-paired-again")
        page.goto(f"{site.url}/scoreboard")
        assert "bob ahead of alice: ordered by paired runs" in page.inner_text("body")
