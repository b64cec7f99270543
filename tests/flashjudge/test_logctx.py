"""Structured logs: one JSON object per line, the submission id on every line about it."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from app.logging_setup import configure_logging
from flashjudge.logctx import configure_json_logging, current_submission_id, submission_context


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """Route the root logger to a buffer as JSON lines; restore the logging setup after."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    buffer = io.StringIO()
    configure_json_logging("DEBUG", stream=buffer)
    yield buffer
    root.handlers, root.level = saved[0], saved[1]


def records(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_lines_inside_a_submission_carry_its_id(lines: io.StringIO) -> None:
    log = logging.getLogger("worker.pipeline")
    log.info("before")
    with submission_context(42):
        log.info("compiling %s", "hw4.cu")
        logging.getLogger("worker.sandbox.bwrap").warning("run killed", extra={"test": "t03"})
    log.info("after")
    before, compiling, killed, after = records(lines)
    assert "submission_id" not in before and "submission_id" not in after
    assert compiling["submission_id"] == "42" and compiling["msg"] == "compiling hw4.cu"
    assert killed == {**killed, "submission_id": "42", "level": "WARNING", "test": "t03",
                      "logger": "worker.sandbox.bwrap"}


def test_nested_contexts_restore_the_outer_submission(lines: io.StringIO) -> None:
    with submission_context(1):
        with submission_context(2):
            assert current_submission_id() == "2"
        logging.getLogger("app").info("back")
    assert current_submission_id() is None
    assert records(lines)[0]["submission_id"] == "1"


def test_concurrent_requests_keep_their_own_ids(lines: io.StringIO) -> None:
    async def handle(submission_id: int) -> None:
        with submission_context(submission_id):
            await asyncio.sleep(0)  # let the other request run in between
            logging.getLogger("app.api").info("handled %s", submission_id)

    async def both() -> None:
        await asyncio.gather(handle(7), handle(8))

    asyncio.run(both())
    handled = [r for r in records(lines) if r["logger"] == "app.api"]
    assert {(r["msg"], r["submission_id"]) for r in handled} == {
        ("handled 7", "7"), ("handled 8", "8")}


def test_exceptions_stay_on_one_json_line(lines: io.StringIO) -> None:
    with submission_context(5):
        try:
            raise RuntimeError("sandbox vanished")
        except RuntimeError:
            logging.getLogger("worker").exception("judge failed")
    (line,) = lines.getvalue().splitlines()
    record = json.loads(line)
    assert record["submission_id"] == "5" and "RuntimeError: sandbox vanished" in record["exc"]


def test_configuring_twice_does_not_duplicate_lines(lines: io.StringIO) -> None:
    configure_json_logging("INFO", stream=lines)
    logging.getLogger("app").info("once")
    assert len(records(lines)) == 1


def test_an_unknown_log_level_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_LOG_LEVEL", "LOUD")
    with pytest.raises(ValueError, match="FLASHJUDGE_LOG_LEVEL: unknown level 'LOUD'"):
        configure_logging()
