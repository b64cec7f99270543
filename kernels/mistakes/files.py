"""The catalogue on files: the test's input, the student's output and the expected output (each
memory-mapped: only the sampled batches are read), as the judge, the custom runs and
`flashjudge compare --input` have them."""

from __future__ import annotations

import os

from kernels.compare import DEFAULT_TOLERANCE
from kernels.fileformat import open_input, read_output
from kernels.mistakes.blas import one_blas_thread
from kernels.mistakes.match import Mistake, name_mistake
from kernels.mistakes.sample import take_sample


def mistake_of_files(input_path: str | os.PathLike[str], output: str | os.PathLike[str],
                     expected: str | os.PathLike[str], tolerance: float = DEFAULT_TOLERANCE,
                     reading: str = "", first_batch: int | None = None) -> Mistake | None:
    """The mistake `output` matches, or None. `reading` (the error map's line) prefixes a match
    on the wrong values only; `first_batch` (the error map's first wrong batch) saves a scan.
    FormatError when a file does not fit the input's shape."""
    inp = open_input(input_path)
    got = read_output(output, inp.header)
    want = read_output(expected, inp.header)
    with one_blas_thread():
        return name_mistake(take_sample(inp, got, want, tolerance, first_batch), reading)
