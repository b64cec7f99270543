"""GPU models as both sides name them: one slug per model, and the judge queue of one model.

A submission is judged on one GPU model: its rejudges and timing refinements go to the queue
`gpu.<slug>`, which every GPU worker of that model consumes besides `gpu` (worker/celery_adapter/
app.py adds it at start). Both sides must derive the same slug from the name NVML/nvidia-smi gives
("NVIDIA GeForce RTX 3070" -> "rtx-3070"), so the rule lives here.
"""

from __future__ import annotations

import re

VENDOR_WORDS = frozenset({"nvidia", "geforce", "tesla", "quadro"})  # dropped: they never decide
MODEL_QUEUE_PREFIX = "gpu."  # per-model judge queues: gpu.<slug>


def model_words(name: str) -> list[str]:
    """The words that name a model, lower case, vendor words dropped:
    "NVIDIA H100 80GB HBM3" -> ["h100", "80gb", "hbm3"]."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return [w for w in words if w not in VENDOR_WORDS]


def gpu_slug(name: str) -> str:
    """A stable, queue-safe name of a GPU model ("" for none or the CPU track)."""
    words = model_words(name)
    return "" if words in ([], ["cpu"]) else "-".join(words)


def model_queue(name: str) -> str | None:
    """The judge queue of one GPU model (None when `name` names no GPU)."""
    slug = gpu_slug(name)
    return f"{MODEL_QUEUE_PREFIX}{slug}" if slug else None


def same_model(a: str | None, b: str | None) -> bool:
    """Whether two GPU names are the same model (spelling and vendor words aside)."""
    return gpu_slug(a or "") == gpu_slug(b or "")
