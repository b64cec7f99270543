"""The testcase, reference, compare and prepare commands: their files, output and exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flashjudge_cli.main import main
from testcases.generator import write_input
from testcases.suite import load_suite


@pytest.fixture
def t07(tmp_path: Path) -> Path:
    """hw4-mini t07 (4 x 33 x 64) as the judge generates it."""
    path = tmp_path / "t07.in"
    write_input(path, load_suite("hw4-mini").test("t07"))
    return path


def test_gen_writes_the_judges_bytes(tmp_path: Path, t07: Path) -> None:
    assert main(["testcase", "gen", "t07", "--suite", "hw4-mini", "-o", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a").read_bytes() == t07.read_bytes()
    assert main(["testcase", "gen", "t07", "--suite", "hw4-mini", "--seed", "3",
                 "-o", str(tmp_path / "b")]) == 0  # fmt: skip
    assert (tmp_path / "b").read_bytes() != t07.read_bytes()


def test_gen_all_writes_every_test(tmp_path: Path) -> None:
    assert main(["testcase", "gen", "--all", str(tmp_path / "d"), "--suite", "hw4-mini"]) == 0
    suite = load_suite("hw4-mini")
    for t in suite.tests:
        assert (tmp_path / "d" / f"{t.id}.in").stat().st_size == t.header.input_bytes


def test_gen_refuses_unknown_tests_and_missing_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["testcase", "gen", "t31", "-o", str(tmp_path / "x")]) == 2
    assert "no test 't31'" in capsys.readouterr().err
    assert main(["testcase", "gen", "t01"]) == 2
    assert main(["testcase", "gen", "t01", "--seed", "-4", "-o", str(tmp_path / "x")]) == 2
    assert "negative" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_list_prints_every_test(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["testcase", "list", "--suite", "hw4"]) == 0
    out = capsys.readouterr().out
    assert all(f"t{i:02d}" in out for i in range(1, 31)) and "13600" in out


def test_reference_then_compare_passes(tmp_path: Path, t07: Path) -> None:
    out = tmp_path / "t07.out"
    assert main(["reference", str(t07), "-o", str(out), "--device", "cpu"]) == 0
    assert out.stat().st_size == 4 * 4 * 33 * 64
    assert main(["compare", str(out), str(out)]) == 0


def test_reference_refuses_an_invalid_input(
    tmp_path: Path, t07: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.in"
    bad.write_bytes(t07.read_bytes()[:-8])
    assert main(["reference", str(bad), "-o", str(tmp_path / "o"), "--device", "cpu"]) == 2
    assert "truncated" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_compare_exit_status_and_json(
    tmp_path: Path, t07: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    want = np.random.default_rng(0).uniform(-1, 1, 4 * 33 * 64).astype(np.float32)
    got = want.copy()
    got[33 * 64 + 64 + 2] += 0.01  # batch 1, row 1, col 2
    want.tofile(tmp_path / "want")
    got.tofile(tmp_path / "got")
    want[:-1].tofile(tmp_path / "short")
    args = ["compare", str(tmp_path / "got"), str(tmp_path / "want"), "--json", "--input", str(t07)]
    assert main(args) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "fail" and report["over_tolerance"] == 1
    assert report["mismatches"][0]["batch"] == 1 and report["mismatches"][0]["col"] == 2
    assert (
        main(["compare", str(tmp_path / "got"), str(tmp_path / "want"), "--tolerance", "0.02"]) == 0
    )
    assert main(["compare", str(tmp_path / "short"), str(tmp_path / "want")]) == 1
    assert main(["compare", str(tmp_path / "nothing"), str(tmp_path / "want")]) == 2


def test_prepare_fills_the_cache_then_reuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["prepare", "--suite", "hw4-mini", "--tests", "t06,t07", "--device", "cpu",
            "--cache-dir", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    assert "new" in capsys.readouterr().out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "t06" in out and "t07" in out and "new" not in out
    assert len(list(tmp_path.rglob("expected-*.bin"))) == 2


def test_prepare_refuses_an_unknown_suite(tmp_path: Path) -> None:
    assert main(["prepare", "--suite", "hw9", "--cache-dir", str(tmp_path)]) == 2


def test_the_console_script_runs(tmp_path: Path, t07: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flashjudge_cli.main", "compare", str(t07), str(tmp_path / "none")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "cannot read expected" in done.stderr
