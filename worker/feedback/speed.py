"""SpeedOfLight: the speed of light of one worker's GPU, as measured once (speed_of_light.py).

A plain dataclass with no GPU imports, so the roofline arithmetic, the flagging rule and the result
message can use it on machines without a GPU. It travels to the service as `to_dict()`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SpeedOfLight:
    """What a worker's GPU can do at best, and what a CUDA process costs to start there."""

    name: str  # the GPU as the driver names it, e.g. "NVIDIA H100 80GB HBM3"
    sm_count: int  # streaming multiprocessors
    peak_tflops: float  # measured FP32 FMA peak, TFLOP/s (2 FLOPs per FMA)
    bandwidth_gbs: float  # measured device memory bandwidth, GB/s (bytes read + written)
    cuda_start_s: float  # median wall time of an empty CUDA program run in the sandbox, seconds
    measured_at: str  # ISO-8601 UTC time of the measurement
    driver: str = ""  # the driver version the measurement was made under
    tensor_peak_tflops: float = 0.0  # measured FP16 tensor-core matmul rate, TFLOP/s (0: unknown)
    reference_s: dict[str, dict[str, float]] = field(default_factory=dict)  # suite -> test -> s

    @property
    def peak_flops(self) -> float:
        """FP32 peak in FLOP/s."""
        return self.peak_tflops * 1e12

    @property
    def bandwidth_bytes_s(self) -> float:
        """Memory bandwidth in bytes/s."""
        return self.bandwidth_gbs * 1e9

    @property
    def fastest_flops(self) -> float:
        """The highest arithmetic rate any correct submission could reach (tensor cores included):
        the ceiling the anti-cheating least time is computed from."""
        return max(self.peak_tflops, self.tensor_peak_tflops) * 1e12

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpeedOfLight:
        """The inverse of to_dict (unknown keys ignored, so older caches still load)."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})
