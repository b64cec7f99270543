"""C / C++ / CUDA source to a normalized token stream, each token with its source line.

Normalization is what makes the fingerprints survive cosmetic edits: comments, whitespace and
preprocessor lines are dropped, every identifier becomes `I` and every literal `L`, while keywords,
CUDA qualifiers and builtins (`__global__`, `__shared__`, `threadIdx`, `__syncthreads`...) and
operators stay as they are, since they carry the structure of the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

IDENTIFIER = "I"
LITERAL = "L"

_C_KEYWORDS = """
auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while bool true false nullptr class constexpr const_cast delete dynamic_cast explicit
friend mutable namespace new operator private protected public reinterpret_cast static_assert
static_cast template this throw try catch typename using virtual
"""
_CUDA_WORDS = """
__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __restrict
__forceinline__ __noinline__ __launch_bounds__ threadIdx blockIdx blockDim gridDim warpSize
__syncthreads __syncwarp
size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
float2 float3 float4 int2 int3 int4 dim3
"""
KEPT_WORDS = frozenset((_C_KEYWORDS + _CUDA_WORDS).split())

# Pass 1 blanks out what never counts (comments, preprocessor lines: newlines kept so lines still
# number right) and shrinks literals to "" (so a "//" inside a string is not a comment).
_STRIP_RE = re.compile(
    r"""
      (?P<string>"(?:\\.|[^"\\\n])*"? | '(?:\\.|[^'\\\n])*'?)
    | /\*.*?(?:\*/|\Z) | //(?:\\\n|[^\n])*
    | ^[ \t]*\#(?:\\\n|/\*.*?\*/|[^\n])*
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
# Pass 2, line by line: tokens; anything else (whitespace, stray characters) is skipped.
_TOKEN_RE = re.compile(
    r"""
      ""
    | 0[xX][0-9a-fA-F']+[uUlL]* | (?:\d[\d']*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*
    | [A-Za-z_]\w*
    | <<=|>>=|->\*|\.\.\.|<<|>>|->|\+\+|--|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|::
    | [][(){};,.?:~!%^&*+=<>|/-]
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class TokenStream:
    """A document's normalized tokens, in source order."""

    tokens: list[str]  # normalized text of each token: a keyword, an operator, "I" or "L"
    lines: list[int]  # 1-based source line of each token (same length as tokens)


def normalize(text: str) -> TokenStream:
    """Lex `text` and normalize it; characters no C-like token starts with are skipped, so any
    text (even not C at all) gives a stream rather than an error."""
    tokens: list[str] = []
    lines: list[int] = []
    for number, line in enumerate(_STRIP_RE.sub(_blank, text).split("\n"), start=1):
        found = _TOKEN_RE.findall(line)
        if found:
            tokens.extend(_normal_form(token) for token in found)
            lines.extend([number] * len(found))
    return TokenStream(tokens=tokens, lines=lines)


def _blank(match: re.Match[str]) -> str:
    if match.group("string") is not None:
        return '""' + "\n" * match.group().count("\n")
    return " " + "\n" * match.group().count("\n")


@lru_cache(maxsize=65536)
def _normal_form(token: str) -> str:
    """The token as fingerprints see it: names and values erased, structure kept."""
    first = token[0]
    if first.isalpha() or first == "_":
        return token if token in KEPT_WORDS else IDENTIFIER
    if first.isdigit() or first == '"' or (first == "." and len(token) > 1):
        return LITERAL
    return token
