"""A custom run in Chromium against a real uvicorn: the upload lands on the run's own page, which
follows the run until a worker is done and then reads like a submission's result (verdict, max
error, first mismatches, the error map, the download); "Your recent runs" shows the outcome of
the comparison and updates itself when a run finishes, without a reload.

The test is the worker: it computes the run with the worker's own code (the reference, the
comparison and the error map) and records the outcome as the control worker would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.custom_runs import runs
from app.db.models import CustomRun
from app.submissions import dispatch as queue
from flashjudge.contract import CustomRunPayload
from kernels.fileformat import write_input
from kernels.reference import compute_reference
from tests.app.utils.served_site import Site, chromium, log_in, needs_chromium, served, shoot
from worker.celery_adapter.custom_run import outcome_of

pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served(tmp_path_factory.mktemp("custom"), FLASHJUDGE_CUSTOM_RUN_QUEUE="cpu") as running:
        yield running


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium() as browser:
        yield browser.new_page()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An input, and an output whose last 32-row tile of every batch is wrong."""
    folder = tmp_path_factory.mktemp("files")
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-3, 3, (2, 128, 32)).astype(np.float32) for _ in range(3))
    write_input(folder / "in.bin", q, k, v)
    compute_reference(folder / "in.bin", folder / "right.bin", device="cpu")
    wrong = np.fromfile(folder / "right.bin", dtype=np.float32).reshape(2, 128, 32)
    wrong[:, 96:, :] += 0.5
    wrong.tofile(folder / "wrong.bin")
    return {"input": folder / "in.bin", "wrong": folder / "wrong.bin"}


def compute(site: Site, run_id: int) -> None:
    """What a worker does with the run, recorded as the control worker records it."""
    with site.db() as db:
        run = db.get(CustomRun, run_id)
        assert run is not None
        folder = site.settings.custom_dir / run.folder
        payload = CustomRunPayload(
            run_id=run.id, attempt=run.attempt, input_path=str(folder / "input.bin"),
            output_path=str(folder / "reference.bin"),
            own_output_path=str(folder / "own.bin") if run.has_own_output else None,
            queue=str(queue.custom_queue(site.settings)))
        assert runs.record(db, site.settings, run.id, run.attempt, outcome_of(payload))


def upload(page: Any, site: Site, files: dict[str, Path], own: bool) -> int:
    page.goto(f"{site.url}/custom")
    page.set_input_files("input[name=input]", str(files["input"]))
    if own:
        page.set_input_files("input[name=output]", str(files["wrong"]))
    page.click("#custom-form button")
    page.wait_for_url("**/custom/*")
    return int(page.url.rsplit("/", 1)[1])


def test_a_failing_compare_reads_like_a_result_page(page: Any, site: Site, files):
    log_in(page, site, "alice")
    run_id = upload(page, site, files, own=True)
    assert page.locator("#run-status").inner_text() == "queued"
    assert "This page updates itself" in page.locator("#custom-run").inner_text()
    shoot(page, "custom-run-queued")
    compute(site, run_id)
    page.locator("#custom-run[data-status=done]").wait_for()  # no reload
    assert page.locator("#run-verdict").inner_text() == "WA"
    assert page.locator("#run-max-error").inner_text() == "5.00e-01"
    rows = page.locator("#mismatches tbody tr")
    assert rows.count() >= 1 and rows.first.locator("td").nth(1).inner_text() == "96"
    assert "rows 96-127" in page.locator("#run-errmap .reading").inner_text()
    assert page.locator("#run-errmap svg").count() >= 1
    assert page.locator("#download").get_attribute("href") == f"/api/custom-runs/{run_id}/output"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # no 3,679 px dump
    shoot(page, "custom-run-wa")


def test_recent_runs_show_the_compare_and_update_when_a_run_finishes(page: Any, site: Site,
                                                                    files):
    log_in(page, site, "alice")
    run_id = upload(page, site, files, own=False)
    page.goto(f"{site.url}/custom")
    row = page.locator(f"#custom-runs tr[data-run='{run_id}']")
    assert row.locator(".status").inner_text() == "queued"
    failed = page.locator("#custom-runs tbody tr").nth(1)  # the first test's run
    assert failed.locator(".compare").inner_text() == "WA"
    assert failed.locator("td.num").nth(1).inner_text() == "5.00e-01"
    compute(site, run_id)
    page.locator(f"#custom-runs tr[data-run='{run_id}'] a[download]").wait_for()  # no reload
    assert row.locator(".status").inner_text() == "done"
    assert row.locator(".compare").inner_text() == "not uploaded"
    shoot(page, "custom-list")
