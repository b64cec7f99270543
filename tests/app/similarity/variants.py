"""Edits a student makes to hide a copy: renames, reordered functions, other comments and layout."""

from __future__ import annotations

import re
from pathlib import Path

SOURCES = Path(__file__).parent / "sources"


def source(name: str) -> str:
    return (SOURCES / name).read_text()


def rename(text: str, names: dict[str, str]) -> str:
    """Every whole-word occurrence of each name replaced."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], text)


def function_block(text: str, header: str) -> str:
    """The definition starting at the line that starts with `header`, to its closing "}" line."""
    start = text.index("\n" + header) + 1
    end = text.index("\n}\n", start) + 3
    return text[start:end]


def move_function(text: str, header: str, before: str) -> str:
    """Cut one function definition and paste it in front of another."""
    block = function_block(text, header)
    text = text.replace(block + "\n", "", 1)
    at = text.index("\n" + before) + 1
    return text[:at] + block + "\n" + text[at:]


def recomment(text: str) -> str:
    """Other comments and layout: old comments dropped, two-space indents, a new comment and a
    blank line before every function."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.DOTALL)
    text = re.sub(r"(?m)^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), text)
    text = re.sub(r"(?m)^(\w[^\n;]*\)\s*\{)$", r"/* my helper,\n   written by me */\n\n\1", text)
    return re.sub(r"[ \t]+\n", "\n", text)


TILED_RENAMES = {
    "flash_kernel": "fa_forward", "q_tile": "sQ", "k_tile": "sK", "v_tile": "sV", "lane": "tx",
    "row": "ty", "acc": "o_acc", "m_prev": "mi", "l_prev": "li", "warp_max": "reduce_max",
    "warp_sum": "reduce_sum", "check": "cuda_ok", "batch": "base_off", "correction": "alpha",
}


def disguised_tiled() -> str:
    """tiled.cu renamed, its helpers reordered, its comments and layout changed: a hidden copy."""
    text = move_function(source("tiled.cu"), "__device__ float warp_sum",
                         "__device__ float warp_max")
    text = move_function(text, "void check", "__global__ void flash_kernel")
    return recomment(rename(text, TILED_RENAMES))


def line_of(text: str, fragment: str) -> int:
    """1-based line of the first line containing `fragment`."""
    return text[: text.index(fragment)].count("\n") + 1
