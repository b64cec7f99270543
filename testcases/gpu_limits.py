"""Time limits per GPU model: a suite's `[gpu_limits]` table, and the suite as one model sees it.

A fleet can mix GPU models (the course's GTX 1080 nodes next to RTX 3070s and H100s), and one set of
limits cannot fit them all. A suite keeps its tests' own `time_limit_s` as the tiers of its
reference model (hw4: 2/6/10 s on the GTX 1080) and lists, per model, that model's limit for each
tier in ascending order (RTX 3070: 1/3/5 s):

    [gpu_limits]
    reference = "GTX 1080"   # the model whose limits are the tests' own
    unlisted = "GTX 1080"    # the listed model whose limits an unlisted model gets
    [gpu_limits.models]
    "GTX 1080" = [2.0, 6.0, 10.0]
    "RTX 3070" = [1.0, 3.0, 5.0]

A GPU name matches a listed model when the model's words (vendor words like NVIDIA or GeForce
dropped) start the name's words; the longest such model wins, so "NVIDIA GeForce GTX 1080 Ti" gets
the GTX 1080's limits unless it is listed itself. An unlisted model (an H100) gets the `unlisted`
model's limits: a fixed tier rather than one scaled by a measured speed of light, because two
workers of one model must apply the very same limits (a measurement differs by a few percent from
node to node and from day to day), and the scoreboard ranks within one model anyway, so generous
limits on a fast GPU only decide what counts as a hang there.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from flashjudge.contract.gpus import gpu_slug, model_words
from testcases.suite import Suite, SuiteError, TestSpec


@dataclass(frozen=True)
class GpuLimits:
    """A suite's limits per GPU model."""

    reference: str  # the model whose limits are the tests' own time_limit_s
    tiers: tuple[float, ...]  # the suite's distinct limits, ascending: the reference's tiers
    models: dict[str, tuple[float, ...]]  # model as written in the suite -> limit of each tier
    unlisted: str  # the listed model whose limits a model not listed gets

    def model_for(self, gpu: str) -> str:
        """The listed model whose limits apply to the GPU named `gpu` (as NVML names it)."""
        words = model_words(gpu)
        matches = [m for m in self.models if words[:len(model_words(m))] == model_words(m)]
        return max(matches, key=lambda m: len(model_words(m)), default=self.unlisted)

    def limit(self, model: str, own_limit_s: float) -> float:
        """A test's limit on a listed model, from the test's own limit (its tier)."""
        return self.models[model][self.tiers.index(own_limit_s)]


def parse_gpu_limits(data: dict[str, Any], tests: list[TestSpec],
                     source: str = "suite") -> GpuLimits | None:
    """The `[gpu_limits]` table of a parsed suite TOML (None when it has none), checked against
    the tests' limits; SuiteError names the offending field."""
    table = data.get("gpu_limits")
    if table is None:
        return None
    where = f"{source}: gpu_limits"
    tiers = tuple(sorted({t.time_limit_s for t in tests}))
    models = {str(name): _tier_limits(values, tiers, f"{where}.models.{name}")
              for name, values in dict(table.get("models") or {}).items()}
    if not models:
        raise SuiteError(f"{where}.models: list at least one model")
    reference = str(table.get("reference", ""))
    unlisted = str(table.get("unlisted", reference))
    for key, name in (("reference", reference), ("unlisted", unlisted)):
        if name not in models:
            raise SuiteError(f"{where}.{key}: {name!r} is not one of the listed models "
                             f"({', '.join(models)})")
    if models[reference] != tiers:
        raise SuiteError(f"{where}.models.{reference}: the reference's limits must be the tests' "
                         f"own, {list(tiers)}")
    return GpuLimits(reference, tiers, models, unlisted)


def _tier_limits(values: Any, tiers: tuple[float, ...], where: str) -> tuple[float, ...]:
    if not isinstance(values, list) or len(values) != len(tiers):
        raise SuiteError(f"{where}: give one limit per tier {list(tiers)} (in seconds)")
    limits = tuple(float(v) for v in values)
    if any(v <= 0 for v in limits) or list(limits) != sorted(limits):
        raise SuiteError(f"{where}: limits must be positive and ascending like the tiers")
    return limits


def load_gpu_limits(suite: Suite) -> GpuLimits | None:
    """The limits table of a shipped suite (None: it lists no models, or is not shipped)."""
    resource = resources.files("testcases") / f"{suite.name}.toml"
    if not resource.is_file():
        return None
    data = tomllib.loads(resource.read_text(encoding="utf-8"))
    return parse_gpu_limits(data, suite.tests, f"{suite.name}.toml")


def suite_on_gpu(suite: Suite, gpu: str | None, limits: GpuLimits | None = None) -> Suite:
    """The suite with the time limits of the GPU named `gpu`; the suite itself for the CPU track
    (None or "cpu") and for a suite that lists no models. `limits` defaults to the shipped
    suite's table."""
    if not gpu_slug(gpu or ""):
        return suite
    limits = limits or load_gpu_limits(suite)
    if limits is None:
        return suite
    model = limits.model_for(gpu or "")
    tests = [dataclasses.replace(t, time_limit_s=limits.limit(model, t.time_limit_s))
             for t in suite.tests]
    return dataclasses.replace(suite, tests=tests)
