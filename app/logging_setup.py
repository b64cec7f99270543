"""The web service's logging: JSON lines on stderr, each tagged with the submission it is about.

The machinery lives in `flashjudge.logctx` (standard library only) so that the workers, which must
not import app/, tag their lines the same way; this module is the service's entry point to it.
"""

from __future__ import annotations

import logging
import os

from flashjudge.logctx import configure_json_logging, current_submission_id, submission_context

__all__ = ["configure_logging", "current_submission_id", "submission_context"]

# uvicorn installs its own handlers on these; routing them through the root makes them JSON too.
_SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "celery", "alembic")


def configure_logging(level: str | None = None) -> None:
    """Log JSON lines at `level` (default: $FLASHJUDGE_LOG_LEVEL, else INFO); safe to call twice."""
    chosen = (level or os.environ.get("FLASHJUDGE_LOG_LEVEL") or "INFO").upper()
    if chosen not in logging.getLevelNamesMapping():
        raise ValueError(f"FLASHJUDGE_LOG_LEVEL: unknown level {chosen!r} (use DEBUG, INFO, ...)")
    configure_json_logging(chosen)
    for name in _SERVER_LOGGERS:
        server_logger = logging.getLogger(name)
        server_logger.handlers.clear()
        server_logger.propagate = True
