"""The forger corpus (tests/hostile/forgers/) is well formed, and its outcomes mean what they say.

Running it needs a GPU (test_kernel_timer_gpu.py); here: every forger has an honest twin and a
conclusion the judge can reach, and the outcome check itself is exercised on made-up verdicts.
"""

from __future__ import annotations

import pytest

from testcases.suite import load_suite
from tests.worker.harness.forger_corpus import (
    ForgerCase,
    all_forgers,
    load_forger,
    meets,
    parse_outcome,
)
from worker.harness.verify import Flag, TimingVerdict

CASES = all_forgers()
FORGERS = [c for c in CASES if not c.is_twin]
# forgers that work across calls
CROSS_CALL = ("batch-fusion", "prefetch-next", "spread-even", "deferral-last")
KNOWN_FLAGS = {"events-inconsistent", "events-missing", "events-identical", "less-precise-timed",
               "gpu-busy", "channel", "below-floor", "inputs-modified"}


def test_the_corpus_has_at_least_ten_attacks_each_with_a_twin() -> None:
    assert len(FORGERS) >= 10
    for forger in FORGERS:
        twin = load_forger(forger.partner)
        assert twin.is_twin and twin.partner == forger.name and twin.name == f"{forger.name}-twin"
        assert twin.outcomes == ("clean",) and twin.tests == forger.tests
    assert len(CASES) == 2 * len(FORGERS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_case_is_a_standalone_solve_on_real_tests(case: ForgerCase) -> None:
    assert b'extern "C" void solve(const float* Q' in case.source
    assert b"#include" in case.source and b'#include "' not in case.source  # no shared headers
    hw4 = {t.id for t in load_suite("hw4").tests}
    assert case.tests and set(case.tests) <= hw4


@pytest.mark.parametrize("case", FORGERS, ids=lambda c: c.name)
def test_each_forger_names_conclusions_the_judge_can_reach(case: ForgerCase) -> None:
    for outcome in case.outcomes:
        kind, arg = parse_outcome(outcome)
        assert kind != "clean", "a forger is never clean"
        if kind in ("held", "flagged"):
            assert arg in KNOWN_FLAGS, f"{case.name}: unknown flag {arg}"


def test_work_done_for_another_call_is_in_the_corpus_and_must_come_out_wrong() -> None:
    """Fusing the batch, prefetching the next call, spreading the batch's work or deferring it to
    the last call: each reads or writes another call's slot (found from the pool's layout), and
    each must be WA: a call's inputs exist only from its own turn, its output is poisoned then and
    scanned at its DONE."""
    for name in CROSS_CALL:
        forger = load_forger(name)
        assert forger.outcomes == ("wrong",), name
        assert b"cuMemGetAddressRange" in forger.source and b"where.see(Q, K)" in forger.source
        assert load_forger(forger.partner).outcomes == ("clean",)


def verdict(ranked: float, source: str = "events", *flags: tuple[str, bool]) -> TimingVerdict:
    made = tuple(Flag(code, "why", holds) for code, holds in flags)
    return TimingVerdict(ranked, source, (ranked,), ranked, ranked, None, made, 20)


def test_outcomes_are_judged_against_the_twins_figure() -> None:
    assert meets("wrong", "WA", None, None) and not meets("wrong", "AC", verdict(1e-3), 1e-3)
    assert meets("clean", "AC", verdict(1e-3), None)
    assert not meets("clean", "AC", verdict(1e-3, "bracket", ("events-inconsistent", False)), None)
    assert meets("within:0.10", "AC", verdict(0.95e-3), 1e-3)
    assert not meets("within:0.10", "AC", verdict(0.5e-3), 1e-3), "a gain of 2x is not 'within'"
    assert meets("within:0.10", "AC", verdict(3e-3), 1e-3), "slower than the twin is no gain"
    assert not meets("within:0.10", "AC", verdict(1e-3, "events", ("gpu-busy", True)), 1e-3)


def test_flagged_and_held_need_the_named_flag() -> None:
    forged = verdict(1.02e-3, "bracket", ("events-inconsistent", False))
    assert meets("flagged:events-inconsistent", "AC", forged, 1e-3)
    assert not meets("flagged:channel", "AC", forged, 1e-3)
    assert not meets("flagged:events-inconsistent", "AC", forged, 2e-3), "ranked 2x faster"
    held = verdict(1e-3, "events", ("less-precise-timed", True))
    assert meets("held:less-precise-timed", "AC", held, None)
    assert not meets("held:less-precise-timed", "WA", held, None)
    with pytest.raises(ValueError, match="unknown outcome"):
        parse_outcome("faster")
