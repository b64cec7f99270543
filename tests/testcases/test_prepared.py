"""The prepared cache computes each entry once, keys it by seed, and never trusts half files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.atomicfile import atomic_write
from kernels.cpu_reference import NAME as CPU_NAME
from kernels.cpu_reference import attention_f64
from kernels.fileformat import open_input
from testcases.prepared import PrepareEvent, default_cache_dir, prepare_suite
from testcases.suite import Suite


def test_entries_hold_the_input_and_its_reference_output(tiny_suite: Suite, tmp_path: Path) -> None:
    prepared = prepare_suite(tiny_suite, tmp_path, device="cpu")
    assert list(prepared) == ["u01", "u02"]
    entry = prepared["u02"]
    assert entry.reference == CPU_NAME and entry.seed == 12 and not entry.reused
    data = open_input(entry.input_path).data
    want = attention_f64(data[:, 0], data[:, 1], data[:, 2]).astype(np.float32)
    got = np.fromfile(entry.expected_path, dtype=np.float32).reshape(want.shape)
    np.testing.assert_array_equal(got, want)


def test_second_call_does_no_work(tiny_suite: Suite, tmp_path: Path) -> None:
    prepare_suite(tiny_suite, tmp_path, device="cpu")
    files = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    events: list[PrepareEvent] = []
    again = prepare_suite(tiny_suite, tmp_path, device="cpu", progress=events.append)
    assert all(t.reused for t in again.values())
    assert [(e.test_id, e.stage, e.reused) for e in events] == [
        ("u01", "done", True),
        ("u02", "done", True),
    ]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == files


def test_a_different_seed_is_a_different_entry(tiny_suite: Suite, tmp_path: Path) -> None:
    base = prepare_suite(tiny_suite, tmp_path, device="cpu", tests=["u01"])["u01"]
    other = prepare_suite(tiny_suite, tmp_path, device="cpu", seed=77, tests=["u01"])["u01"]
    assert other.seed == 77 and not other.reused
    assert other.input_path.parent != base.input_path.parent
    assert other.input_path.read_bytes() != base.input_path.read_bytes()


def test_a_truncated_cache_file_is_rebuilt(tiny_suite: Suite, tmp_path: Path) -> None:
    entry = prepare_suite(tiny_suite, tmp_path, device="cpu", tests=["u01"])["u01"]
    good = entry.expected_path.read_bytes()
    entry.expected_path.write_bytes(good[:100])
    again = prepare_suite(tiny_suite, tmp_path, device="cpu", tests=["u01"])["u01"]
    assert not again.reused and again.expected_path.read_bytes() == good


def test_an_interrupted_write_leaves_no_file_under_the_final_name(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "expected.bin"
    with pytest.raises(KeyboardInterrupt), atomic_write(target) as f:
        f.write(b"half")
        raise KeyboardInterrupt
    assert list((tmp_path / "sub").iterdir()) == []


def test_default_cache_dir_follows_the_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", "/srv/fj")
    assert default_cache_dir() == Path("/srv/fj/cache")
    monkeypatch.delenv("FLASHJUDGE_DATA_DIR")
    assert default_cache_dir() == Path("data/cache")
