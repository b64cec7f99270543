"""GPU models on the service side: which model a result was judged on, and which models the
scoreboard has results of (a fleet mixing models gets one board per model)."""

from __future__ import annotations

from typing import Any

from app.scoreboard.standing.rules import judged_models
from flashjudge.contract import gpu_slug

__all__ = ["gpu_model_of", "judged_models"]  # judged_models: kept with the standing's rules


def gpu_model_of(result: dict[str, Any]) -> str | None:
    """The GPU a result names in its `worker` block (None: the CPU track, or an older worker)."""
    worker = result.get("worker")
    name = worker.get("gpu") if isinstance(worker, dict) else None
    return str(name)[:200] if isinstance(name, str) and gpu_slug(name) else None
