"""The roofline of each test: the work, the least traffic, the speed of light and the speedup.

Pure arithmetic on shapes, times and a SpeedOfLight, so it is tested without a GPU and computed by
the worker after judging (the result message carries `TestRoofline.to_dict()` for the charts).
Work: 4*B*N^2*d FLOPs (Q K^T and P V, one multiply and one add each). Least traffic: Q, K, V read
once (12*B*N*d bytes) and O written once (4*B*N*d bytes). No correct program beats
max(flops / peak, bytes / bandwidth): that is the test's least time (its speed of light).

The result message keeps the key `floor_s` for the least time (WIRE_KEYS): the service stores
and shows it under that name (app/templates/_figures.html, results already recorded).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from flashjudge.contract import LanguageFacts, Timer
from worker.feedback.speed import SpeedOfLight

FLOAT_BYTES = 4
WIRE_KEYS = {"least_s": "floor_s"}  # field -> the key the service stores and reads


@dataclass(frozen=True)
class Work:
    """What one test asks of the GPU, whatever the submission."""

    flops: int  # 4*B*N^2*d floating-point operations
    min_bytes: int  # inputs read once plus the output written once: 16*B*N*d

    @property
    def intensity(self) -> float:
        """Operational intensity at the least traffic, FLOP per byte (the roofline's x)."""
        return self.flops / self.min_bytes


def work(B: int, N: int, d: int) -> Work:
    """The work and least traffic of an attention forward pass over B batches of N x d."""
    return Work(flops=4 * B * N * N * d, min_bytes=(3 + 1) * FLOAT_BYTES * B * N * d)


@dataclass(frozen=True)
class LeastTime:
    """The least time a test can take on a GPU (its speed of light), and which ceiling sets it."""

    compute_s: float  # flops / peak FLOP/s
    memory_s: float  # min_bytes / bandwidth

    @property
    def seconds(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        """"compute" or "memory": the ceiling that is reached first."""
        return "compute" if self.compute_s >= self.memory_s else "memory"


def least_time(w: Work, peak_flops: float, bandwidth_bytes_s: float) -> LeastTime:
    """The least time of `w` under the two ceilings (both strictly positive)."""
    return LeastTime(compute_s=w.flops / peak_flops, memory_s=w.min_bytes / bandwidth_bytes_s)


def wire_dict(value: Any) -> dict[str, Any]:
    """A dataclass as the result message carries it (least_s under its stored key)."""
    return {WIRE_KEYS.get(k, k): v for k, v in asdict(value).items()}


@dataclass(frozen=True)
class TestRoofline:
    """One test's figures, shown next to its time."""

    __test__ = False  # not a pytest class

    test_id: str  # e.g. "t01"
    flops: int  # the work, FLOPs
    min_bytes: int  # the least traffic, bytes
    intensity: float  # FLOP per byte at the least traffic
    seconds: float  # the submission's time for the test
    achieved_tflops: float  # flops / seconds / 1e12
    least_s: float  # max(flops / FP32 peak, min_bytes / bandwidth) on this GPU
    bound: str  # "compute" | "memory": which ceiling sets the least time
    fraction_of_light: float  # least_s / seconds (1.0 would be the speed of light)
    reference_s: float | None  # the reference kernel's time on this test (None: not measured)
    speedup: float | None  # baseline / seconds (> 1: faster than the reference); the baseline is
    # reference_s for a kernel, and cuda_start_s + reference_s for a whole process (the reference
    # kernel in the cheapest CUDA process this worker can start; file I/O not counted)
    cuda_start_s: float | None  # a whole program: the fixed cost of starting a CUDA process here
    start_share: float | None  # a whole program: cuda_start_s / seconds (what cannot be won)

    def to_dict(self) -> dict[str, Any]:
        return wire_dict(self)


def roofline_of(test_id: str, B: int, N: int, d: int, seconds: float, profile: SpeedOfLight,
                reference_s: float | None = None, whole_process: bool = False) -> TestRoofline:
    """The figures of one test timed at `seconds` (whole_process: a whole program's wall time,
    CUDA's start-up included)."""
    w = work(B, N, d)
    f = least_time(w, profile.peak_flops, profile.bandwidth_bytes_s)
    positive = seconds > 0
    start = profile.cuda_start_s if whole_process else None
    baseline = reference_s + (start or 0.0) if reference_s is not None else None
    return TestRoofline(
        test_id=test_id, flops=w.flops, min_bytes=w.min_bytes, intensity=w.intensity,
        seconds=seconds, achieved_tflops=w.flops / seconds / 1e12 if positive else 0.0,
        least_s=f.seconds, bound=f.bound,
        fraction_of_light=f.seconds / seconds if positive else 0.0,
        reference_s=reference_s,
        speedup=baseline / seconds if baseline is not None and positive else None,
        cuda_start_s=start,
        start_share=min(1.0, start / seconds) if start is not None and positive else None,
    )


def submission_roofline(tests: list[Any], shapes: dict[str, tuple[int, int, int]],
                        profile: SpeedOfLight, suite: str, facts: LanguageFacts
                        ) -> list[TestRoofline]:
    """Every timed test of a judged submission (TestResults or their dicts) that has a shape, in
    the language of row `facts` (a whole program's time includes CUDA's start-up).

    `shapes` maps test id -> (B, N, d) (from the suite); reference times come from the profile's
    per-suite measurements. Tests without a time (CE, SE, 0 s) are left out."""
    refs = profile.reference_s.get(suite, {})
    rows = []
    for test in tests:
        test_id, seconds = _get(test, "id"), float(_get(test, "seconds") or 0.0)
        if test_id not in shapes or seconds <= 0:
            continue
        B, N, d = shapes[test_id]
        rows.append(roofline_of(test_id, B, N, d, seconds, profile, refs.get(test_id),
                                whole_process=facts.timer == Timer.PROGRAM))
    return rows


def _get(test: Any, key: str) -> Any:
    return test[key] if isinstance(test, dict) else getattr(test, key)
