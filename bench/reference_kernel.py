"""Time the CUDA reference kernel against PyTorch's fp32 SDPA on every hw4 shape.

    python3 bench/reference_kernel.py [--tests t01,t12] [--variant 64:32:3 ...] [--check] [--json F]

Per test: our kernel's ms, its TFLOP/s (4*B*N^2*d / time), torch's scaled_dot_product_attention
in fp32 (EFFICIENT_ATTENTION backend, TF32 off) ms, and the ratio torch/ours (> 1: we are faster).
Timing: CUDA events around R back-to-back launches queued behind a spin kernel (so host launch cost
is not counted), median of repeats, inputs rotated among several fresh random sets so that L2
(50 MB) is not trivially hot.
--check adds the max abs error against float64 on a few batches (first, last, two random).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

try:
    import cupy
except ImportError:  # --help still answers; main() says what is missing
    cupy = None

from kernels import gpu_reference as gr  # noqa: E402
from kernels.fileformat import InputHeader  # noqa: E402

HW4_SHAPES = {  # from hw4-spec.md, used when testcases/hw4.toml is not there
    "t01": (320, 128, 32), "t02": (160, 128, 64), "t03": (160, 256, 32), "t04": (80, 256, 64),
    "t05": (80, 512, 32), "t06": (40, 512, 64), "t07": (40, 1024, 32), "t08": (20, 1024, 64),
    "t09": (20, 2048, 32), "t10": (10, 2048, 64), "t11": (13600, 128, 32), "t12": (9600, 128, 64),
    "t13": (6400, 256, 32), "t14": (2000, 256, 64), "t15": (2000, 512, 32), "t16": (800, 512, 64),
    "t17": (800, 1024, 32), "t18": (300, 1024, 64), "t19": (300, 2048, 32), "t20": (100, 2048, 64),
    "t21": (500, 2048, 32), "t22": (500, 2048, 64), "t23": (100, 4096, 32), "t24": (100, 4096, 64),
    "t25": (30, 8192, 32), "t26": (10, 8192, 64), "t27": (10, 16384, 32), "t28": (4, 16384, 64),
    "t29": (4, 32768, 32), "t30": (2, 32768, 64),
}
ROTATE_BYTES = 200 << 20  # working set across rotated input sets: 4x the H100's L2
TARGET_MS = 30.0  # GPU time per timed repeat

SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


@dataclass
class Row:
    """One line of the table."""

    test: str  # hw4 test id
    B: int
    N: int
    d: int
    variant: str  # kernel configuration timed
    ms: float  # our kernel, median per launch
    tflops: float  # 4*B*N^2*d / time
    torch_ms: float | None  # torch SDPA efficient fp32, None without torch
    ratio: float | None  # torch_ms / ms
    max_error: float | None  # vs float64 on sampled batches (--check)


def hw4_shapes() -> dict[str, tuple[int, int, int]]:
    """(B, N, d) per test, from the suite definition when it exists."""
    try:
        from testcases.suite import load_suite

        return {t.id: (t.B, t.N, t.d) for t in load_suite("hw4").tests}
    except Exception:  # noqa: BLE001 -- the suite module may not exist yet
        return dict(HW4_SHAPES)


@functools.cache
def _spin_kernel() -> cupy.RawKernel:
    """A one-thread kernel that busy-waits: launches queued behind it start back to back."""
    return cupy.RawKernel(SPIN_SOURCE, "spin")


def time_launches(launch: Callable[[int], object], est_ms: float, repeats: int = 5) -> float:
    """Median ms per launch: R launches queued behind a spin kernel, timed with CUDA events."""
    spin = _spin_kernel()
    count = max(1, min(200, int(TARGET_MS / max(est_ms, 1e-3))))
    times = []
    for _ in range(repeats):
        spin((1,), (1,), (np.int64(int(2e6 * (1.0 + 0.05 * count))),))  # ~1 ms + 50 us per launch
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for i in range(count):
            launch(i)
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / count)
    return statistics.median(times)


def estimate_ms(launch: Callable[[int], object]) -> float:
    """One warmed-up launch, timed roughly, to size the timed loop."""
    launch(0)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    launch(1)
    end.record()
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end)


def make_inputs(B: int, N: int, d: int) -> list[tuple[cupy.ndarray, ...]]:
    """Fresh uniform [-3, 3] input sets, enough of them to overflow L2."""
    nbytes = 12 * B * N * d
    sets = max(1, min(8, -(-ROTATE_BYTES // nbytes)))
    rng = cupy.random.RandomState(B * 1_000_003 + N * 101 + d)
    return [
        tuple(rng.uniform(-3.0, 3.0, (B, N, d), dtype=cupy.float32) for _ in range(3))
        for _ in range(sets)
    ]


def time_ours(inputs: list[tuple[cupy.ndarray, ...]], config: gr.KernelConfig) -> float:
    """ms per launch of our kernel."""
    B, N, d = inputs[0][0].shape
    header = InputHeader(B, N, d)
    out = cupy.empty((B, N, d), dtype=cupy.float32)

    def launch(i: int) -> None:
        q, k, v = inputs[i % len(inputs)]
        gr.launch(q, k, v, out, header, N * d, config)

    return time_launches(launch, estimate_ms(launch))


def time_torch(inputs: list[tuple[cupy.ndarray, ...]]) -> float | None:
    """ms per call of torch SDPA (EFFICIENT_ATTENTION, fp32, TF32 off); None without torch."""
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.functional import scaled_dot_product_attention as sdpa
    except ImportError:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tensors = [tuple(torch.as_tensor(x, device="cuda").unsqueeze(1) for x in s) for s in inputs]

    def launch(i: int) -> None:
        sdpa(*tensors[i % len(tensors)])

    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        return time_launches(launch, estimate_ms(launch))


def max_error(inputs: tuple[cupy.ndarray, ...], config: gr.KernelConfig) -> float:
    """Max abs error against float64 on batches first, last and two random ones."""
    q, k, v = inputs
    B = q.shape[0]
    picks = sorted({0, B - 1, *np.random.default_rng(B).integers(0, B, 2).tolist()})
    got = gr.attention_gpu(q[picks], k[picks], v[picks], config)
    want = gr.attention_f64_gpu(q[picks], k[picks], v[picks])
    return float(cupy.abs(got - want).max())


def parse_variant(text: str) -> gr.KernelConfig:
    """'64:32:3' -> KernelConfig(d=64, sub=32, min_blocks=3)."""
    return gr.KernelConfig(*(int(x) for x in text.split(":")))


def bench_test(test: str, shape: tuple[int, int, int], variants: list[gr.KernelConfig],
               check: bool, torch_on: bool) -> list[Row]:
    """All rows for one hw4 test: one per kernel variant of its d."""
    B, N, d = shape
    inputs = make_inputs(B, N, d)
    torch_ms = time_torch(inputs) if torch_on else None
    rows = []
    for config in [c for c in variants if c.d == d] or [gr.DEFAULT_CONFIGS[d]]:
        ms = time_ours(inputs, config)
        err = max_error(inputs[0], config) if check else None
        ratio = torch_ms / ms if torch_ms else None
        tflops = 4 * B * N * N * d / ms / 1e9
        rows.append(Row(test, B, N, d, config.name, ms, tflops, torch_ms, ratio, err))
    del inputs
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def markdown(rows: list[Row]) -> str:
    """The table for docs/benchmarks.md."""
    lines = ["| test | B | N | d | variant | ours ms | TFLOP/s | torch ms | torch/ours | max err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        torch_ms = f"{r.torch_ms:.3f}" if r.torch_ms else "-"
        ratio = f"{r.ratio:.2f}" if r.ratio else "-"
        err = f"{r.max_error:.1e}" if r.max_error is not None else "-"
        lines.append(f"| {r.test} | {r.B} | {r.N} | {r.d} | {r.variant} | {r.ms:.3f} | "
                     f"{r.tflops:.1f} | {torch_ms} | {ratio} | {err} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", help="comma-separated test ids (default: all 30)")
    parser.add_argument(
        "--variant", action="append", default=[], help="d:sub:min_blocks, repeatable"
    )
    parser.add_argument("--check", action="store_true", help="add max abs error vs float64")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch SDPA timing")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    if cupy is None:
        sys.exit("bench/reference_kernel.py needs CuPy and a CUDA GPU (pip install cupy-cuda12x)")
    if not gr.gpu_available():
        print("no CUDA device visible to CuPy: nothing to benchmark", file=sys.stderr)
        return 2
    shapes = hw4_shapes()
    wanted = args.tests.split(",") if args.tests else list(shapes)
    variants = [parse_variant(v) for v in args.variant]
    rows: list[Row] = []
    for test in wanted:
        rows += bench_test(test, shapes[test], variants, args.check, not args.no_torch)
        print(markdown(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {device}; date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
