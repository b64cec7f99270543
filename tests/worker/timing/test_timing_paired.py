"""Paired comparisons for real: two c-programs built in the sandbox and run interleaved on the
same prepared inputs (the CPU track); the cuda one on a GPU."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flashjudge.contract.paired import A_FASTER, B_FASTER, FAILED, TIED
from tests.worker.hostile_corpus import load_case
from worker.pipeline import JudgeConfig, JudgeRequest
from worker.running.nodelock import NodeLock
from worker.settings import WorkerSettings
from worker.timing.paired import PairedConfig, compare_submissions
from worker.timing.sequential import RuleConfig

# alpha 0.001: the same program twice is ordered by chance once in a thousand, not once in 25
STRICT = RuleConfig(alpha=0.001, max_rounds=12)


def slowed(files: dict[str, bytes], name: str, sleep_us: int) -> dict[str, bytes]:
    """The same program with a sleep before main (a C constructor: inside the timed run)."""
    prefix = (b"#include <unistd.h>\n__attribute__((constructor)) static void fj_slow(void) "
              b"{ usleep(" + str(sleep_us).encode() + b"); }\n")
    return {**files, name: prefix + files[name]}


def request(files: dict[str, bytes], language: str = "c-program",
            suite: str = "hw4-mini") -> JudgeRequest:
    return JudgeRequest(language, files, suite, ["t01"])


def test_the_same_program_twice_is_not_ordered(engine_cache: Path, judge_config: JudgeConfig):
    files = load_case("correct-seq").files
    result = compare_submissions(request(files), request(dict(files)), ["t01"], engine_cache,
                                 PairedConfig(budget_s=60.0, rule=STRICT), judge_config)
    assert result.outcome == TIED, result
    assert len(result.rounds) >= 2 and result.gpu_s > 0
    assert [r.a_first for r in result.rounds[:4]] == [True, False, True, False]


def test_a_copy_slowed_by_a_sleep_is_ordered_below(engine_cache: Path,
                                                   judge_config: JudgeConfig):
    files = load_case("correct-seq").files
    slow = slowed(files, "hw4.c", 200_000)
    result = compare_submissions(request(slow), request(files), ["t01"], engine_cache,
                                 PairedConfig(budget_s=60.0, rule=STRICT), judge_config)
    assert (result.outcome, result.reason) == (B_FASTER, "ordered"), result
    assert result.low is not None and result.low > 0


def test_a_program_that_fails_a_run_gets_no_order(engine_cache: Path,
                                                  judge_config: JudgeConfig):
    good, wrong = load_case("correct-seq").files, load_case("wrong").files
    result = compare_submissions(request(good), request(wrong), ["t01"], engine_cache,
                                 PairedConfig(budget_s=60.0, rule=STRICT), judge_config)
    assert result.outcome == FAILED and "B's run of t01 in round 1" in (result.error or "")


def test_the_budget_ends_the_rounds(engine_cache: Path, judge_config: JudgeConfig):
    files = load_case("correct-seq").files
    result = compare_submissions(request(files), request(dict(files)), ["t01"], engine_cache,
                                 PairedConfig(budget_s=0.001, rule=STRICT), judge_config)
    assert (result.outcome, result.reason, len(result.rounds)) == (TIED, "budget", 1)


@pytest.mark.gpu
def test_a_cuda_program_slowed_by_a_sleep_is_ordered_below_on_the_gpu(
        engine_cache: Path, judge_config: JudgeConfig):
    files = load_case("cuda-correct").files
    slow = slowed(files, "hw4.cu", 300_000)
    result = compare_submissions(request(files, "cuda-program", "hw4"),
                                 request(slow, "cuda-program", "hw4"), ["t01"], engine_cache,
                                 PairedConfig(budget_s=120.0, rule=STRICT), judge_config)
    assert (result.outcome, result.reason) == (A_FASTER, "ordered"), result


def test_a_comparison_holds_the_node_alone_and_lets_it_go(engine_cache: Path,
                                                          judge_config: JudgeConfig, tmp_path):
    """The rounds' own runs go through the test runner, which holds the node shared: within
    the round that holds it alone they must not wait for it (they would forever)."""
    lock = NodeLock(tmp_path / "locks")
    files = load_case("correct-seq").files
    result = compare_submissions(request(files), request(dict(files)), ["t01"], engine_cache,
                                 PairedConfig(budget_s=2.0, rule=STRICT),
                                 dataclasses.replace(judge_config, node_lock=lock))
    assert result.outcome == TIED and result.rounds
    with lock.alone():  # free again: a second holder gets it at once
        pass


def test_every_worker_judges_with_its_node_lock_in_the_data_directory(tmp_path):
    config = WorkerSettings(data_dir=tmp_path).judge_config()
    assert config.node_lock is not None
    assert config.node_lock.directory == tmp_path.resolve() / "locks"
