"""C / C++ / CUDA source to a normalized token stream, each token with its source line.

Normalization is what makes the fingerprints survive cosmetic edits: comments, whitespace and
preprocessor lines are dropped, every identifier becomes `I` and every literal `L`, while keywords,
CUDA qualifiers and builtins (`__global__`, `__shared__`, `threadIdx`, `__syncthreads`...) and
operators stay as they are, since they carry the structure of the program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

_TOKEN_RE = re.compile(
    r"""
      (?P<comment>/\*.*?(?:\*/|\Z) | //(?:\\\n|[^\n])*)
    | (?P<preproc>^[ \t]*\#(?:\\\n|/\*.*?\*/|[^\n])*)
    | (?P<string>[uUL]?R?"(?:\\.|[^"\\\n])*"? | [uUL]?'(?:\\.|[^'\\\n])*'?)
    | (?P<number>0[xX][0-9a-fA-F']+[uUlL]* | (?:\d[\d']*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)
    | (?P<word>[A-Za-z_]\w*)
    | (?P<op><<=|>>=|->\*|\.\.\.|<<|>>|->|\+\+|--|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|::
             |[][(){};,.?:~!%^&*+=<>|/-])
    | (?P<space>\s+)
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
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
    line = 1
    last = 0
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup
        if kind in ("comment", "preproc", "space"):
            continue
        line += text.count("\n", last, match.start())
        last = match.start()
        tokens.append(_normal_form(kind, match.group()))
        lines.append(line)
    return TokenStream(tokens=tokens, lines=lines)


def _normal_form(kind: str | None, value: str) -> str:
    """The token as fingerprints see it: names and values erased, structure kept."""
    if kind == "word":
        return value if value in KEPT_WORDS else IDENTIFIER
    if kind in ("string", "number"):
        return LITERAL
    return value
