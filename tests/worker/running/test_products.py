"""The timing refinement reuses the verdict pass's build (worker/running/products.py), judged for
real with bubblewrap and gcc: a refinement whose rebuild could not succeed still runs the kept
product, and a changed file, architecture or flag is another product."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.worker.hostile_corpus import load_case
from worker import pipeline
from worker.pipeline import JudgeRequest, judge
from worker.running.classify import SystemFailure
from worker.running.plan import BuildSettings
from worker.running.products import ProductCache, product_key
from worker.sandbox.bwrap import Sandbox
from worker.settings import WorkerSettings


def test_the_refinement_runs_the_product_the_verdict_pass_built(
        engine_cache: Path, cpu_sandbox: Sandbox, tmp_path: Path) -> None:
    case = load_case("correct-seq")
    request = JudgeRequest("c-program", case.files, "hw4-mini", ["t06"])
    products = ProductCache(tmp_path)
    config = WorkerSettings().judge_config(products=products)
    assert judge(request, engine_cache, sandbox=cpu_sandbox, config=config).passed == 1
    unbuildable = dataclasses.replace(config, build_time_limit_s=0.001)  # a rebuild times out
    with pipeline.test_runner(request, engine_cache, cpu_sandbox, unbuildable) as run_test:
        assert str(run_test("t06").verdict) == "AC"
    elsewhere = dataclasses.replace(unbuildable, products=ProductCache(tmp_path / "x"))
    with pytest.raises(SystemFailure, match="no longer builds"), \
            pipeline.test_runner(request, engine_cache, cpu_sandbox, elsewhere):
        pass  # without the kept product, the rebuild is tried, and fails


def test_a_product_is_kept_per_files_architecture_and_flags(tmp_path: Path) -> None:
    files = {"hw4.cu": b"int main() {}"}
    base = product_key("cuda-program", files, BuildSettings(gpu_arch="90"))
    assert base == product_key("cuda-program", dict(files), BuildSettings(gpu_arch="90"))
    assert base != product_key("cuda-program", {"hw4.cu": b"int main(){}"},
                               BuildSettings(gpu_arch="90"))
    assert base != product_key("cuda-program", files, BuildSettings(gpu_arch="80"))
    assert base != product_key("cuda-program", files,
                               BuildSettings(gpu_arch="90", nvcc_flags=("-lineinfo",)))
    assert base != product_key("cuda-kernel", files, BuildSettings(gpu_arch="90"))


def test_only_the_most_recent_products_are_kept(tmp_path: Path) -> None:
    cache = ProductCache(tmp_path, keep=2)
    source = tmp_path / "hw4"
    for i in range(3):
        source.write_bytes(f"product {i}".encode())
        cache.put(f"key{i}", source)
    assert not cache.get("key0", tmp_path / "out0")  # the oldest went
    assert cache.get("key2", tmp_path / "out2")
    assert (tmp_path / "out2").read_bytes() == b"product 2"
    assert (cache.dir.stat().st_mode & 0o777) == 0o700  # judge-owned, out of the sandbox's reach
