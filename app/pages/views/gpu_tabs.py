"""The scoreboard page's GPU tabs: when the fleet mixes GPU models, one board per model.

Times on a GTX 1080 and on an H100 do not compare, so a mixed fleet's page ranks within one model
at a time, the most used model first; a fleet of one model (or the CPU track) shows one board.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode


@dataclass(frozen=True)
class GpuTabs:
    """Which boards the page offers and which one it shows."""

    models: list[str]  # one tab per model; empty when there is at most one model
    current: str | None  # the model ranked now (None: every result, no tabs)
    assignment: str | None = None  # whose board, when the page names one
    term: str | None = None  # an archived term's board, when a TA's page names one

    @property
    def query(self) -> str:
        """The query string that keeps the current tab (for the page's refreshes)."""
        return self.model_query(self.current, "?")

    def model_query(self, model: str | None, prefix: str = "") -> str:
        """The query string of one model's tab on this board."""
        keep = {"term": self.term, "assignment": self.assignment, "gpu_model": model}
        keep = {k: v for k, v in keep.items() if v}
        return prefix + urlencode(keep) if keep else ""


def gpu_tabs(models: list[str], wanted: str | None, assignment: str | None = None,
             term: str | None = None) -> GpuTabs:
    """The tabs for a request asking for `wanted`, given the judged models, the most used first
    (app/scoreboard/standing/rules.py; the board cache keeps them): an unknown model shows the
    first tab."""
    if len(models) < 2:
        return GpuTabs([], None, assignment, term)
    return GpuTabs(models, wanted if wanted in models else models[0], assignment, term)
