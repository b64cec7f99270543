"""Structured (JSON lines) logging with the submission id on every line about a submission.

Standard library only, on purpose: the service (app/) and the judge workers (worker/) both use it,
and neither may import the other. A contextvar holds the submission being handled; a logging filter
copies it onto every record, so a grep for one id finds every line about that submission, from
the API's acceptance through the worker's sandbox runs to the recorded verdict.

Usage (service or worker):

    configure_json_logging("INFO")
    with submission_context(submission_id):
        log.info("judging")      # -> {"...", "submission_id": 42, "msg": "judging"}
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, TypeVar

_H = TypeVar("_H", bound=logging.Handler)

_SUBMISSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "flashjudge_submission_id", default=None
)

# LogRecord attributes that are plumbing, not data a reader wants in the JSON line.
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


@contextmanager
def submission_context(submission_id: int | str | None) -> Iterator[None]:
    """Tag every log line emitted inside the block (same thread or task) with `submission_id`."""
    token = _SUBMISSION_ID.set(None if submission_id is None else str(submission_id))
    try:
        yield
    finally:
        _SUBMISSION_ID.reset(token)


def current_submission_id() -> str | None:
    """The submission id set by the innermost `submission_context`, or None outside one."""
    return _SUBMISSION_ID.get()


class SubmissionIdFilter(logging.Filter):
    """Copy the current submission id onto each record (an explicit `extra=` value wins)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "submission_id", None) is None:
            record.submission_id = _SUBMISSION_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, submission id, and any extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        submission_id = getattr(record, "submission_id", None)
        if submission_id is not None:
            line["submission_id"] = submission_id
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and key not in line and key != "submission_id":
                line[key] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def json_handler(stream: IO[str] | None = None) -> logging.Handler:
    """A stream handler (stderr by default) that writes JSON lines tagged with the submission id."""
    return _json_lines(logging.StreamHandler(stream or sys.stderr))


class _RootJsonHandler(logging.StreamHandler[IO[str]]):
    """The handler configure_json_logging installs: its class is how a second call finds it."""


def _json_lines(handler: _H) -> _H:
    handler.setFormatter(JsonFormatter())
    handler.addFilter(SubmissionIdFilter())
    return handler


def configure_json_logging(level: str | int = "INFO", stream: IO[str] | None = None) -> None:
    """Make the root logger write JSON lines; idempotent, so calling it twice adds no handler."""
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if not isinstance(h, _RootJsonHandler)]
    root.addHandler(_json_lines(_RootJsonHandler(stream or sys.stderr)))
    root.setLevel(level.upper() if isinstance(level, str) else level)
