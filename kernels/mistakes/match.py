"""Naming the mistake: every variant of the catalogue on the sample, the closest one named only
when it is within TIGHT of the student's output and at least FACTOR times closer than the right
answer. Distances are max |got - variant| / max(1, |variant|) (absolute below 1, relative above:
an unnormalised output reaches 1e5, where float32 itself is off by 1e-2), NaN and inf counting as
equal to each other and infinitely far from any number.

Three ways to match, tried in order:
- the whole sample: "your output equals attention without the 1/sqrt(d) scale (max diff 3e-07
  on batches 0-3)";
- only the wrong values (over the tolerance; at least MIN_BAD of them), the others being right:
  the error map's reading, then "there your output equals ..." (a bug in some rows only);
- a rounding variant (half precision): the student's rms error within NOISE_FACTOR of its own.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kernels.mistakes.catalogue import CATALOGUE
from kernels.mistakes.sample import Sample, bad_mask
from kernels.mistakes.softmax import Prediction, Variant

TIGHT = 1e-3  # the largest distance at which an output "equals" a variant
FACTOR = 10.0  # the right answer must be at least this many times farther
MIN_BAD = 8  # wrong values a match on the wrong values only needs
NOISE_FACTOR = 3.0  # a rounding variant: rms errors within this factor of each other
NOISE_MAX = 0.05  # ... and both under this: rounding never makes an output wrong by more


@dataclass(frozen=True)
class Mistake:
    """The classic mistake a wrong output matches, in one line for the student."""

    name: str  # the variant's id (kernels/mistakes/catalogue.py), e.g. "no_scale"
    line: str  # the sentence shown on the result page, the API and the CLI
    distance: float  # max |got - variant| / max(1, |variant|) where compared (rounding: rms)
    correct_distance: float  # the same distance to the right answer (inf: NaN where it is not)
    compared: str  # what was compared, e.g. "batches 0-3" or "16 rows of batches 0-1"
    how: str = "all"  # "all" values matched, "wrong" values only, or "errors" of the same size

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("distance", "correct_distance"):
            if not math.isfinite(data[key]):
                data[key] = str(data[key])  # JSON has no inf
        return data

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Mistake:
        """Back from to_dict(); ValueError naming what is missing."""
        try:
            return Mistake(str(data["name"]), str(data["line"]), float(data["distance"]),
                           float(data["correct_distance"]), str(data["compared"]),
                           str(data.get("how", "all")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"mistake: malformed {exc}") from exc


def distance(got: np.ndarray, pred: np.ndarray, keep: np.ndarray) -> float:
    """Max distance over the `keep` places (0.0 when none is kept)."""
    g, p = got[keep], pred[keep]
    finite_g, finite_p = np.isfinite(g), np.isfinite(p)
    if np.any(finite_g != finite_p):
        return math.inf
    both = finite_g & finite_p
    if not both.any():
        return 0.0
    return float(np.max(np.abs(g[both] - p[both]) / np.maximum(1.0, np.abs(p[both]))))


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


@dataclass
class Fit:
    """How one variant's prediction fits the sample."""

    variant: Variant
    prediction: Prediction
    everywhere: float  # distance over every compared value
    on_wrong: float  # distance over the wrong values only
    wrong: int  # wrong values compared


def fit(sample: Sample, variant: Variant, bad: np.ndarray) -> Fit | None:
    """The variant's fit, or None when it does not apply or predicts only NaN (no trace)."""
    pred = variant.predict(sample)
    if pred is None or not np.isfinite(pred.values).any():
        return None
    keep = np.ones(sample.got.shape, bool) if pred.unsure is None else ~pred.unsure
    if not keep.any():
        return None
    wrong = keep & bad
    return Fit(variant, pred, distance(sample.got, pred.values, keep),
               distance(sample.got, pred.values, wrong), int(wrong.sum()))


def sentence(f: Fit) -> str:
    text = f.variant.sentence.format(**f.prediction.words)
    return text


def whole(fits: list[Fit], sample: Sample, right: float) -> Mistake | None:
    """The closest exact variant over the whole sample, if it is tight and far from right."""
    close = [f for f in fits if f.variant.exact and f.everywhere <= TIGHT
             and right > FACTOR * max(f.everywhere, 1e-9)]
    if not close:
        return None
    best = min(close, key=lambda f: f.everywhere)
    pred = best.prediction
    shown = pred.values if pred.unsure is None else pred.values[~pred.unsure]
    said = sentence(best)
    nan = " (NaN/inf at the same places)" if np.isnan(shown).any() and "NaN" not in said else ""
    return Mistake(best.variant.name, f"your output equals {said}{nan} (max diff "
                   f"{best.everywhere:.1g} on {sample.where()})", best.everywhere, right,
                   sample.where())


def on_wrong_only(fits: list[Fit], sample: Sample, right: float, bad: np.ndarray,
                  reading: str) -> Mistake | None:
    """The closest exact variant on the wrong values, the others being right."""
    if bad.all():
        return None
    close = [f for f in fits if f.variant.exact and f.wrong >= MIN_BAD and f.on_wrong <= TIGHT]
    if not close:
        return None
    best = min(close, key=lambda f: f.on_wrong)
    where = reading or "your output is right except at some values"
    return Mistake(best.variant.name, f"{where}; there it equals {sentence(best)} (max diff "
                   f"{best.on_wrong:.1g} on its {best.wrong:,} wrong values of "
                   f"{sample.where()})", best.on_wrong, right, sample.where(), "wrong")


def same_noise(fits: list[Fit], sample: Sample, right: float) -> Mistake | None:
    """A rounding variant whose errors have the size of the student's."""
    if not np.isfinite(sample.got).all():
        return None
    mine = rms(sample.got - sample.want)
    for f in fits:
        theirs = rms(f.prediction.values - sample.want)
        if (not f.variant.exact and 0 < theirs <= NOISE_MAX and mine <= NOISE_MAX
                and 1 / NOISE_FACTOR <= mine / theirs <= NOISE_FACTOR):
            return Mistake(f.variant.name, f"your output looks like {sentence(f)}: its errors "
                           f"(rms {mine:.1g}) have the size of a float16 simulation's (rms "
                           f"{theirs:.1g}) on {sample.where()}", mine, right, sample.where(),
                           "errors")
    return None


def name_mistake(sample: Sample, reading: str = "") -> Mistake | None:
    """The mistake the sample's output matches, or None (a right or an unknown output)."""
    with np.errstate(all="ignore"):
        bad = bad_mask(sample.got, sample.want, sample.tolerance)
        if not bad.any():
            return None
        right = distance(sample.got, sample.want, np.ones(bad.shape, bool))
        fits = [f for v in CATALOGUE if (f := fit(sample, v, bad)) is not None]
        return (whole(fits, sample, right) or on_wrong_only(fits, sample, right, bad, reading)
                or same_noise(fits, sample, right))
