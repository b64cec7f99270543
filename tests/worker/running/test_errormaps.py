"""A WA test ships the error map of its output: judged for real on the CPU track."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flashjudge.contract import JudgeResult, Verdict
from kernels.errormap import ErrorMap
from kernels.fileformat import InputHeader
from worker.pipeline import JudgeRequest, judge
from worker.running.errormaps import wrong_answer_map
from worker.sandbox.bwrap import Sandbox

SEQ = Path(__file__).resolve().parents[2] / "app" / "utils" / "seq_attention.c"
RIGHT = "o[i * d + x] = (float)(acc / sum);"
ODD_BLOCKS_WRONG = "o[i * d + x] = (float)(acc / sum) + ((i / 32) % 2 ? 0.5f : 0.0f);"


def judged(source: str, engine_cache: Path, sandbox: Sandbox) -> JudgeResult:
    request = JudgeRequest("c-program", {"hw4.c": source.encode()}, "hw4-mini", ["t01"])
    return judge(request, engine_cache, sandbox=sandbox)


def test_a_tiling_bug_comes_back_located_in_the_result(engine_cache: Path,
                                                       cpu_sandbox: Sandbox) -> None:
    source = SEQ.read_text()
    assert RIGHT in source
    result = judged(source.replace(RIGHT, ODD_BLOCKS_WRONG), engine_cache, cpu_sandbox)
    [test] = result.tests
    assert test.verdict == Verdict.WA and test.error_map is not None
    sent = JudgeResult.from_dict(result.to_dict()).tests[0].error_map
    assert sent is not None
    found = ErrorMap.from_dict(sent)
    assert found.reading.startswith("errors only in rows 32-63, 96-127")
    assert "every second 32-row block" in found.reading
    assert found.bad == 320 * 64 * 32  # every value of the odd blocks, in every batch
    assert found.batches_with_errors == 320


def test_a_passing_test_carries_no_map(engine_cache: Path, cpu_sandbox: Sandbox) -> None:
    [test] = judged(SEQ.read_text(), engine_cache, cpu_sandbox).tests
    assert test.verdict == Verdict.AC and test.error_map is None


def test_only_a_wrong_output_gets_a_map_and_a_broken_file_none(tmp_path: Path) -> None:
    header = InputHeader(2, 64, 16)
    want = np.zeros(header.elements, np.float32)
    got = want.copy()
    got[:16] = 1.0  # row 0 of batch 0
    (tmp_path / "want.bin").write_bytes(want.tobytes())
    (tmp_path / "same.bin").write_bytes(want.tobytes())
    (tmp_path / "got.bin").write_bytes(got.tobytes())
    (tmp_path / "short.bin").write_bytes(got.tobytes()[:100])
    pairs: list[tuple[Path | None, Path]] = [(tmp_path / "same.bin", tmp_path / "want.bin"),
             (tmp_path / "got.bin", tmp_path / "want.bin")]
    found = wrong_answer_map(Verdict.WA, pairs, 5e-3, header)
    assert found is not None and found["bad"] == 16  # the second pair: the first has none
    assert wrong_answer_map(Verdict.TLE, pairs, 5e-3, header) is None
    short = [(tmp_path / "short.bin", tmp_path / "want.bin"), (None, tmp_path / "want.bin")]
    assert wrong_answer_map(Verdict.WA, short, 5e-3, header) is None
