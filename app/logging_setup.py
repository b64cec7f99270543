"""The web service's logging: JSON lines on stderr, each tagged with the submission it is about.

The machinery lives in `flashjudge.logctx` (standard library only) so that the workers, which must
not import app/, tag their lines the same way; this module is the service's entry point to it.
"""

from __future__ import annotations

import logging
import os
import re

from flashjudge.logctx import configure_json_logging, current_submission_id, submission_context

__all__ = ["configure_logging", "current_submission_id", "submission_context"]

# uvicorn installs its own handlers on these; routing them through the root makes them JSON too.
_SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "celery", "alembic")
# query parameters that carry a secret: a sign-in link's one-time token (GET /set-password?token=)
_SECRET_QUERY = re.compile(r"([?&](?:token|access_token|sig)=)[^&#\s]*", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with the values of secret query parameters replaced by [redacted]."""
    return _SECRET_QUERY.sub(r"\1[redacted]", text)


class RedactSecrets(logging.Filter):
    """uvicorn's access line carries the whole path with its query: a sign-in link opened in a
    browser would leave a working token in every log reader's hands. The filter sits on the
    `uvicorn.access` logger itself, so uvicorn's own handlers (`flashjudge serve`, whose
    uvicorn.run configures logging after the app is built) pass through it too."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


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
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactSecrets) for f in access.filters):
        access.addFilter(RedactSecrets())
