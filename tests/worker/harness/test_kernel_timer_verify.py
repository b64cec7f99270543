"""The rules the judge applies to the trusted timer's report (worker/harness/verify.py).

Reports are written as the timer writes them (JSON, tests/worker/timer_reports.py), so the parser
is exercised too; the numbers model a kernel of 1 ms per call with 0.2 ms of batch overhead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.worker.harness.timer_reports import batch, report, scaled
from worker.harness.timer_report import ReportError, parse_report, read_report
from worker.harness.verify import Calibration, TimingVerdict, fit_calibration, judge_timing

CAL = Calibration(fixed_s=0.2e-3, per_call_s=0.0, noise_s=0.01e-3, flush_ms=0.05)
TOL = 5e-3


def verdict(doc: dict[str, Any], least_s: float | None = None) -> TimingVerdict:
    return judge_timing(parse_report(doc), CAL, TOL, least_s)


def codes(v: TimingVerdict) -> list[str]:
    return [f.code for f in v.flags]


def test_an_honest_run_ranks_by_its_cuda_events_with_no_flag() -> None:
    v = verdict(report())
    assert (v.source, v.wrong, codes(v), v.held) == ("events", None, [], False)
    assert v.ranked_s == pytest.approx(1.0e-3, rel=0.01)
    assert v.timed_calls == 20 and len(v.per_batch_s) == 5


def test_event_times_scaled_down_are_not_believed_and_the_judges_clock_ranks() -> None:
    forged = [batch(i, "timed", events_ms=scaled(i, 0.01)) for i in range(4, 9)]
    v = verdict(report(forged))
    assert codes(v) == ["events-inconsistent"] and not v.held
    assert v.source == "bracket" and v.ranked_s == pytest.approx(1.0e-3, rel=0.01)
    assert "0.040 ms" in v.flags[0].reason and v.events_s == pytest.approx(0.01e-3, rel=0.01)


def test_event_times_longer_than_the_judges_clock_are_not_believed() -> None:
    inflated = [batch(i, "timed", events_ms=scaled(i, 1.2)) for i in range(4, 9)]
    v = verdict(report(inflated))
    assert codes(v) == ["events-inconsistent"] and "more than the judge's own clock" in v.reasons()


def test_one_inconsistent_batch_counts_by_the_clock_and_two_distrust_the_events() -> None:
    """A lone batch is a host hiccup or a forger's try: either way it counts by the judge's
    clock, so forging it gains nothing; a second one and no event time is believed."""
    one = [batch(i, "timed") for i in range(4, 8)] + [batch(8, "timed", events_ms=scaled(8, 0.5))]
    v = verdict(report(one))
    assert codes(v) == [] and v.source == "events"
    assert v.ranked_s == pytest.approx(1.0e-3, rel=0.01)
    assert v.events_s is not None and v.events_s < 0.95e-3
    two = one[:3] + [batch(7, "timed", events_ms=scaled(7, 0.5)), one[4]]
    v = verdict(report(two))
    assert codes(v) == ["events-inconsistent"] and "2 of 5 timed batches" in v.reasons()


def test_a_few_host_hiccups_among_many_batches_count_by_the_clock_without_a_flag() -> None:
    """As seen on an H100: 5 of 50 honest batches ran late on the host. They count by the clock;
    the rest rank by their events; a sixth of the batches disagreeing would still be believed,
    a quarter would not."""
    def run(late: int) -> TimingVerdict:
        timed = [batch(i, "timed", overhead_ms=0.2 + (0.6 if i % 50 < late else 0.0))
                 for i in range(4, 54)]
        return verdict(report(timed))
    v = run(late=5)
    assert codes(v) == [] and v.source == "events"
    assert v.ranked_s == pytest.approx(1.0e-3, rel=0.02)
    assert codes(run(late=10)) == []
    assert codes(run(late=13)) == ["events-inconsistent"] and "13 of 50" in run(13).reasons()


def test_an_underreport_within_the_noise_slack_is_accepted() -> None:
    """The bound on what a forger can hide: 1% of the bracket (documented in the design)."""
    slight = [batch(i, "timed", events_ms=scaled(i, 0.995)) for i in range(4, 9)]
    assert verdict(report(slight)).source == "events"


def test_missing_or_identical_event_times_fall_back_to_the_judges_clock() -> None:
    missing = verdict(report([batch(i, "timed", events_ms=[]) for i in range(4, 9)]))
    assert codes(missing) == ["events-missing"] and missing.events_s is None
    same = [batch(i, "timed", events_ms=[1.0] * 4) for i in range(4, 9)]
    assert codes(verdict(report(same))) == ["events-identical"]


def test_outputs_left_unwritten_when_solve_returned_make_the_run_wrong() -> None:
    pending = [batch(4, "timed", nonfinite=[0, 0, 4096, 0])] + [
        batch(i, "timed") for i in range(5, 9)]
    v = verdict(report(pending))
    assert v.wrong is not None and "batch 4 (timed), call 3 of 4" in v.wrong
    assert "4096 output values" in v.wrong and "still running" in v.wrong


def test_outputs_left_for_the_batchs_last_call_are_wrong_and_the_ta_is_told_why() -> None:
    """Deferral: every call but the last returns at once. Each output is scanned at the end of its
    own call's turn, so the first deferred call is the one named."""
    deferred = [batch(4, "timed", nonfinite=[65536, 65536, 65536, 0])] + [
        batch(i, "timed") for i in range(5, 9)]
    v = verdict(report(deferred))
    assert v.wrong is not None and "batch 4 (timed), call 1 of 4" in v.wrong
    assert "each call must finish its own output" in v.wrong and "a later call" in v.wrong


def test_a_wrong_row_on_a_fresh_random_input_makes_the_run_wrong() -> None:
    wrong = [batch(i, "timed", sampled_error=[2e-6, 0.3, 2e-6, 2e-6]) for i in range(4, 9)]
    v = verdict(report(wrong))
    assert v.wrong is not None and "max error 0.3 on 64 sampled rows" in v.wrong


def test_nan_on_a_sampled_row_is_wrong_not_ignored() -> None:
    doc = report()
    doc["batches"][1]["sampled_error"] = [math.inf]
    assert "wrong on a fresh random input" in (verdict(doc).wrong or "")


def test_a_different_answer_on_the_tests_input_run_again_is_wrong() -> None:
    doc = report()
    doc["batches"][3]["repeat_diff"] = [0.02, -1, -1, -1]
    assert "run again gave another output" in (verdict(doc).wrong or "")


def test_timed_calls_in_half_precision_after_a_precise_checked_call_are_held() -> None:
    sloppy = [batch(i, "timed", sampled_error=[1.2e-3] * 4) for i in range(4, 9)]
    v = verdict(report(sloppy))
    assert v.wrong is None and codes(v) == ["less-precise-timed"] and v.held
    assert "less precise than checked" in v.reasons()


def test_a_few_less_precise_calls_are_tolerated_and_more_are_held() -> None:
    """The bound on what sloppy calls can buy: 5% of the calls (29 after the first here)."""
    one = [batch(4, "timed", sampled_error=[2e-6, 2e-6, 1e-3, 2e-6])] + [
        batch(i, "timed") for i in range(5, 9)]
    assert codes(verdict(report(one))) == []
    two = one + [batch(9, "timed", sampled_error=[1e-3, 2e-6, 2e-6, 2e-6])]
    v = verdict(report(two))
    assert codes(v) == ["less-precise-timed"] and "2 of 33 later calls" in v.reasons()


def test_ordinary_fp32_error_jitter_is_not_called_less_precise() -> None:
    jitter = [batch(i, "timed", sampled_error=[4e-6] * 4) for i in range(4, 9)]
    assert codes(verdict(report(jitter))) == []


def test_a_lucky_first_sample_is_measured_against_the_whole_first_output() -> None:
    """As the honest t20 on an H100: the first call's 64 sampled rows were off by 1.2e-5, its
    whole output by 3.1e-5, and later calls' samples by up to 3e-5."""
    doc = report([batch(i, "timed", sampled_error=[3e-5] * 4) for i in range(4, 9)])
    doc["batches"][0]["sampled_error"] = [1.2e-5]
    assert codes(verdict(doc)) == ["less-precise-timed"]  # the sample alone
    assert codes(judge_timing(parse_report(doc), CAL, TOL, None, first_error=3.1e-5)) == []
    half = report([batch(i, "timed", sampled_error=[1.2e-3] * 4) for i in range(4, 9)])
    held = judge_timing(parse_report(half), CAL, TOL, None, first_error=3.1e-5)
    assert codes(held) == ["less-precise-timed"]


def test_a_kernel_imprecise_everywhere_alike_is_not_flagged() -> None:
    doc = report([batch(i, "timed", sampled_error=[6e-5] * 4) for i in range(4, 9)])
    for b in doc["batches"][:4]:
        b["sampled_error"] = [5e-5] * b["calls"]
    assert codes(verdict(doc)) == []


def test_the_tests_input_run_again_less_precisely_is_held() -> None:
    doc = report()
    doc["batches"][3]["repeat_diff"] = [2e-3, -1, -1, -1]
    v = verdict(doc)
    assert v.wrong is None and codes(v) == ["less-precise-timed"]


def test_messages_out_of_turn_on_the_channel_hold_the_result() -> None:
    doc = report()
    doc["batches"][5]["protocol"] = "2 message(s) arrived out of turn"
    v = verdict(doc)
    assert codes(v) == ["channel"] and v.held and "forked child" in v.reasons()


def test_a_gpu_kept_busy_between_batches_holds_the_result() -> None:
    busy = [batch(i, "timed", flush_ms=2.5) for i in range(4, 9)]
    v = verdict(report(busy))
    assert codes(v) == ["gpu-busy"] and v.held


def test_a_time_under_the_speed_of_light_is_held() -> None:
    v = verdict(report(), least_s=2e-3)
    assert codes(v) == ["below-floor"] and v.held
    assert codes(verdict(report(), least_s=0.5e-3)) == []


def test_writing_into_the_inputs_is_flagged_but_not_held() -> None:
    doc = report()
    doc["batches"][4]["inputs_changed"] = [0, 12, 0, 0]
    v = verdict(doc)
    assert codes(v) == ["inputs-modified"] and not v.held


def test_a_run_stopped_before_any_timed_batch_has_no_figure() -> None:
    v = verdict(report([], too_slow=True))
    assert (v.ranked_s, v.source, v.timed_calls) == (None, "none", 0)


def test_calibration_recovers_the_fixed_and_per_call_overhead() -> None:
    batches = [batch(i, "calibration", c, per_call_ms=0.01, overhead_ms=0.15 + 0.004 * c)
               for i, c in enumerate([1, 2, 4, 8, 16, 32] * 3)]
    doc = {"version": 1, "mode": "calibrate", "B": 4, "N": 1024, "d": 64, "slots": 64,
           "rows_per_call": 64, "too_slow": False, "runner": "ok", "batches": batches}
    cal = fit_calibration(parse_report(doc))
    assert cal.fixed_s == pytest.approx(0.15e-3, rel=0.01)
    assert cal.per_call_s == pytest.approx(0.004e-3, rel=0.01)
    assert cal.noise_s < 1e-6 and cal.flush_ms == pytest.approx(0.05)
    with pytest.raises(ValueError, match="at least 6"):
        fit_calibration(parse_report({**doc, "batches": batches[:2]}))


def test_a_malformed_report_names_the_offending_field() -> None:
    doc = report()
    doc["batches"][2]["role"] = "bonus"
    with pytest.raises(ReportError) as err:
        parse_report(doc)
    assert err.value.field == "batches[2].role"
    doc = report()
    doc["batches"][4]["nonfinite"] = [0]
    with pytest.raises(ReportError, match="nonfinite"):
        parse_report(doc)


def test_reading_a_missing_or_oversized_report_file_is_a_report_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError) as err:
        read_report(tmp_path / "absent.json")
    assert err.value.field == "file"
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (16 << 20) + b"{}")
    with pytest.raises(ReportError, match="larger than"):
        read_report(huge)
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(report()))
    assert read_report(ok).shape == (4, 1024, 64)
