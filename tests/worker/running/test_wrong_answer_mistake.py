"""A WA test's result names the classic mistake its output matches; other verdicts carry none,
and a catalogue that cannot read its files leaves the verdict as it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flashjudge.contract import Verdict
from kernels.cpu_reference import attention_f64
from kernels.fileformat import write_input
from worker.running.mistakes import wrong_answer_mistake


def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(no-scale output, expected, input) of a 4 x 64 x 32 input."""
    qkv = np.random.default_rng(3).uniform(-3, 3, (4, 3, 64, 32)).astype(np.float32)
    write_input(tmp_path / "in.bin", qkv[:, 0], qkv[:, 1], qkv[:, 2])
    attention_f64(qkv[:, 0], qkv[:, 1], qkv[:, 2]).astype(np.float32).tofile(tmp_path / "want")
    unscaled = attention_f64(qkv[:, 0] * np.sqrt(32), qkv[:, 1], qkv[:, 2])
    unscaled.astype(np.float32).tofile(tmp_path / "got")
    return tmp_path / "got", tmp_path / "want", tmp_path / "in.bin"


def test_a_wa_output_gets_its_mistake(tmp_path):
    found = wrong_answer_mistake(Verdict.WA, [files(tmp_path)], 5e-3)
    assert found is not None and found["name"] == "no_scale"
    assert found["line"].startswith("your output equals attention without the 1/sqrt(d) scale")


def test_only_wa_is_explained(tmp_path):
    assert wrong_answer_mistake(Verdict.TLE, [files(tmp_path)], 5e-3) is None


def test_the_fresh_output_is_tried_when_the_first_is_right(tmp_path):
    got, want, inp = files(tmp_path)
    found = wrong_answer_mistake(Verdict.WA, [(want, want, inp), (None, want, inp),
                                              (got, want, inp)], 5e-3)
    assert found is not None and found["name"] == "no_scale"


def test_an_unreadable_file_leaves_no_mistake_and_no_exception(tmp_path):
    got, want, inp = files(tmp_path)
    (tmp_path / "short").write_bytes(b"\0" * 12)
    assert wrong_answer_mistake(Verdict.WA, [(tmp_path / "short", want, inp)], 5e-3) is None
    assert wrong_answer_mistake(Verdict.WA, [(got, want, tmp_path / "missing")], 5e-3) is None
