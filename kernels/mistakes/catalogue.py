"""The registry: every mistake the catalogue knows, in the order ties are broken (the math
first, then the tails, the layouts, and the rounding last). To add one, write a function
Sample -> Prediction | None in the module of its kind and a Variant line in its tuple."""

from __future__ import annotations

from kernels.mistakes.layouts import LAYOUTS
from kernels.mistakes.precision import PRECISION
from kernels.mistakes.softmax import Variant
from kernels.mistakes.tails import TAILS
from kernels.mistakes.variants import MATH

CATALOGUE: tuple[Variant, ...] = (*MATH, *TAILS, *LAYOUTS, *PRECISION)


def variant(name: str) -> Variant:
    """The variant of that name (KeyError when there is none)."""
    for v in CATALOGUE:
        if v.name == name:
            return v
    raise KeyError(name)
