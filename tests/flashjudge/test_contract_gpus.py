"""GPU model names: both sides derive one slug and one judge queue from what NVML reports."""

from __future__ import annotations

import pytest

from flashjudge.contract import gpu_slug, model_queue, same_model


@pytest.mark.parametrize("name, slug", [
    ("NVIDIA GeForce RTX 3070", "rtx-3070"),
    ("NVIDIA GeForce GTX 1080", "gtx-1080"),
    ("NVIDIA H100 80GB HBM3", "h100-80gb-hbm3"),
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"),
    ("cpu", ""), ("", ""),
])
def test_slugs_drop_vendor_words_and_punctuation(name: str, slug: str) -> None:
    assert gpu_slug(name) == slug


def test_each_model_has_its_queue_and_the_cpu_track_none() -> None:
    assert model_queue("NVIDIA GeForce RTX 3070") == "gpu.rtx-3070"
    assert model_queue("cpu") is None and model_queue("") is None


def test_spelling_and_vendor_words_do_not_make_another_model() -> None:
    assert same_model("NVIDIA GeForce RTX 3070", "GeForce RTX 3070")
    assert not same_model("NVIDIA GeForce RTX 3070", "NVIDIA GeForce RTX 3070 Ti")
    assert not same_model("NVIDIA GeForce GTX 1080", None)
