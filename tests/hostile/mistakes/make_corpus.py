"""Writes the mistake corpus: one directory per mistake and language, each a complete
submission made of attention_row.inc (the row computation, with the mistake's #define) and the
language's main (main_c.inc, main_cuda.inc, main_kernel.inc), plus its expected.toml. Run it after
changing a template: `python3 tests/hostile/mistakes/make_corpus.py`; the files it writes are
committed, and tests/worker/test_mistake_corpus.py checks they are up to date."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
# mistake directory -> (#define, the catalogue's variant name without its tile, C tests)
MISTAKES: dict[str, tuple[str, str]] = {
    "no-scale": ("NO_SCALE", "no_scale"),
    "scale-inv-d": ("SCALE_INV_D", "scale_1_over_d"),
    "scale-sqrt-d": ("SCALE_SQRT_D", "scale_sqrt_d"),
    "scale-int-zero": ("SCALE_ZERO", "scale_zero"),
    "no-rescale": ("NO_RESCALE", "no_rescale"),
    "no-rescale-sum": ("NO_RESCALE_SUM", "no_rescale_sum"),
    "no-division": ("NO_DIVISION", "no_division"),
    "qk-swapped": ("QK_SWAPPED", "qk_swapped"),
    "k-not-transposed": ("K_NOT_TRANSPOSED", "k_not_transposed"),
    "keys-dropped": ("KEYS_DROPPED", "keys_dropped"),
    "keys-twice": ("KEYS_TWICE", "keys_twice"),
    "keys-zero-padded": ("KEYS_ZERO_PADDED", "keys_zero_padded"),
    "keys-clamped": ("KEYS_CLAMPED", "keys_clamped"),
    "rows-unwritten": ("ROWS_UNWRITTEN", "rows_unwritten"),
    "half-accumulation": ("HALF_ACCUMULATION", "half_accumulation"),
    "o-transposed": ("O_TRANSPOSED", "o_transposed"),
    "previous-batch": ("PREVIOUS_BATCH", "previous_batch"),
    "batch-zero": ("BATCH_ZERO_EVERYWHERE", "batch_zero_everywhere"),
    "planar-input": ("PLANAR_INPUT", "planar_input"),
    "batch-stride": ("BATCH_STRIDE_ND", "batch_stride_nd"),
    "b-n-swapped": ("B_N_SWAPPED", "b_n_swapped"),
    "no-max-no-scale": ("NO_MAX -DNO_SCALE", "no_max_no_scale"),
    "no-max": ("NO_MAX", ""),  # harmless here: scores are at most 9 sqrt(d) = 72 < 88.7
    "correct": ("", ""),
}
# the layouts a cuda-kernel cannot get wrong: solve() receives Q, K, V as separate arrays
NOT_KERNEL = {"planar-input", "batch-stride", "b-n-swapped"}
LANGUAGES = {"c": ("c-program", "hw4.c", "main_c.inc"),
             "cuda": ("cuda-program", "hw4.cu", "main_cuda.inc"),
             "kernel": ("cuda-kernel", "solve.cu", "main_kernel.inc")}
TESTS = {"no-max-no-scale": ["t09"],  # hw4-mini: N = 2048, d = 64: unscaled scores overflow
         "half-accumulation": ["t08"]}  # N = 1000: float16's errors pass the tolerance
DEFAULT_TESTS = ["t06", "t07"]  # N = 100 and 33: not multiples of the tiles


def source(define: str, main: str) -> str:
    defines = "".join(f"#define {name} 1\n" for name in define.replace("-D", "").split())
    head = ("/* A FlashAttention submission with one planted mistake (the mistake corpus): "
            f"{define or 'none'}.\n * Written by make_corpus.py from attention_row.inc and "
            f"{main}. */\n#include <math.h>\n#include <stddef.h>\n")
    return head + defines + (HERE / "attention_row.inc").read_text() + (HERE / main).read_text()


def expected(name: str, language: str, variant: str) -> str:
    gpu = language != "c-program"
    verdicts = '["AC"]' if not variant else '["WA", "AC"]'
    tests = TESTS.get(name, DEFAULT_TESTS)
    return (f'description = "mistake corpus: {name} ({language})"\nlanguage = "{language}"\n'
            f'verdicts = {verdicts}\ntests = {tests!r}\nsuite = "hw4-mini"\n'
            f'gpu = {str(gpu).lower()}\nmistake = "{variant}"\n').replace("'", '"')


def corpus() -> dict[Path, str]:
    """Every file of the corpus and its content."""
    files: dict[Path, str] = {}
    for name, (define, variant) in MISTAKES.items():
        for short, (language, file_name, main) in LANGUAGES.items():
            if short == "kernel" and name in NOT_KERNEL:
                continue
            folder = HERE / f"{short}-{name}"
            files[folder / file_name] = source(define, main)
            files[folder / "expected.toml"] = expected(name, language, variant)
    return files


if __name__ == "__main__":
    for path, text in corpus().items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
