"""The refinement phase of a judged submission: its passed tests run again until their times are
known well enough to rank by (worker/timing/policy.py decides which runs, and when to stop).

It runs after the verdicts were recorded, as its own lower-priority task: the submission is built
again, its suite's inputs are already prepared, and each re-run goes through the same language and
sandbox as the verdict pass, so a refined time measures exactly what the first one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worker.pipeline import JudgeConfig, JudgeRequest, test_runner
from worker.timing.gpustate import GpuMonitor
from worker.timing.policy import PolicyConfig, refine
from worker.timing.report import TimingReport
from worker.timing.result_samples import sample_from_result
from worker.timing.sample import Sample, gpu_sampled
from worker.timing.stats import noise_for


def first_pass(tests: Mapping[str, Mapping[str, Any]]) -> dict[str, Sample]:
    """The verdict pass as the policy reads it, from the recorded tests (test id -> seconds,
    passed, cost_s), in the suite's order."""
    return {tid: Sample(seconds=float(t["seconds"]), passed=bool(t["passed"]),
                        cost_s=float(t.get("cost_s") or t["seconds"]))
            for tid, t in tests.items()}


def refine_submission(request: JudgeRequest, tests: Mapping[str, Mapping[str, Any]],
                      cache_dir: str | Path, config: JudgeConfig | None = None,
                      policy: PolicyConfig | None = None,
                      monitor: GpuMonitor | None = None) -> TimingReport:
    """Re-run the submission's tests within the policy's budget; the report with each test's
    statistic and band and the total's. Only the tests the policy picks are run again."""
    config = config or JudgeConfig()
    with test_runner(request, cache_dir, config=config) as run_test:
        runner = gpu_sampled(lambda test_id: sample_from_result(run_test(test_id)), monitor)
        facts = config.languages.facts(request.language or "")
        policy = policy or PolicyConfig(noise=noise_for(facts))
        return refine(first_pass(tests), runner, policy)
