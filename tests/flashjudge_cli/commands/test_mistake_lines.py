"""The console says which classic mistake a wrong output matches: `flashjudge compare
--input`, the judge-local table and the submit table."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from flashjudge.contract import CompileResult, JudgeResult, TestResult, Verdict
from flashjudge_cli.commands import submit as submit_command
from flashjudge_cli.commands.judge_local import show
from flashjudge_cli.main import main
from kernels.cpu_reference import attention_f64
from kernels.fileformat import write_input

LINE = "your output equals attention without the 1/sqrt(d) scale (max diff 2e-05 on batches 0-3)"


@pytest.fixture
def unscaled(tmp_path: Path) -> list[str]:
    """[output, expected, input] of an output that forgot the 1/sqrt(d) scale."""
    qkv = np.random.default_rng(4).uniform(-3, 3, (4, 3, 33, 64)).astype(np.float32)
    write_input(tmp_path / "in", qkv[:, 0], qkv[:, 1], qkv[:, 2])
    attention_f64(qkv[:, 0], qkv[:, 1], qkv[:, 2]).astype(np.float32).tofile(tmp_path / "want")
    attention_f64(qkv[:, 0] * 8.0, qkv[:, 1], qkv[:, 2]).astype(np.float32).tofile(
        tmp_path / "got")
    return [str(tmp_path / "got"), str(tmp_path / "want"), "--input", str(tmp_path / "in")]


def test_compare_with_the_input_names_the_mistake(unscaled, capsys):
    assert main(["compare", *unscaled, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["mistake"]["name"] == "no_scale"
    assert main(["compare", *unscaled]) == 1
    out = capsys.readouterr().out
    assert "looks like: your output equals attention without the 1/sqrt(d) scale" in out


def test_compare_without_the_input_or_of_a_right_output_names_nothing(unscaled, capsys):
    assert main(["compare", unscaled[0], unscaled[1], "--json"]) == 1
    assert "mistake" not in json.loads(capsys.readouterr().out)
    assert main(["compare", unscaled[1], unscaled[1], "--input", unscaled[3], "--json"]) == 0
    assert "mistake" not in json.loads(capsys.readouterr().out)


def test_judge_local_prints_the_line_under_the_table():
    wrong = TestResult("t06", Verdict.WA, 0.1, max_error=2.8,
                       mistake={"name": "no_scale", "line": LINE})
    result = JudgeResult(CompileResult(True), [TestResult("t07", Verdict.AC, 0.1), wrong], 10, 1,
                         "c-program", "hw4-mini", max_score=20)
    buffer = io.StringIO()
    show(result, Console(file=buffer, width=200))
    assert f"t06: {LINE}" in buffer.getvalue()
    assert "t07:" not in buffer.getvalue()


def test_submit_lists_the_lines_of_the_final_state():
    state = {"tests": [{"id": "t06", "mistake": {"name": "no_scale", "line": LINE}},
                       {"id": "t07", "mistake": None}, {"id": "t08"}]}
    assert submit_command.mistake_lines(state) == [f"t06: {LINE}"]
    assert submit_command.mistake_lines({}) == []
