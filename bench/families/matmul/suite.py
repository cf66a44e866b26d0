"""The matmul shape suite: the shapes users multiply, not just the squares.

`bench time --suite shapes` (and check, model) runs these (`--suite shapes:CATEGORY` one
category of them); the report's "Shape suite" section
judges each kernel at each of them against the shape's own limit (bench/ceilings.py,
roof_tflops): the larger of its FLOPs at the measured ceiling of its precision (cuBLAS at
4096^3) and its compulsory bytes (A and B read once, C written once) at the measured copy
bandwidth. A kernel's fraction of that limit is comparable across shapes whatever bounds
them, so a geometric mean over the suite and the worst shape say how competent it is
everywhere.

Each shape is (name, category, M x N x K). The categories:

    kernelbench   the matmuls of KernelBench level 1 (ScalingIntelligence/KernelBench,
                  KernelBench/level1/1-10, commit 423217d of 2026-03-05; its 3-D and
                  batched products as the 2-D product they are; its symmetric, triangular
                  and transposed variants share a shape listed here)
    transformer   projections of a Llama-3-8B-like layer at real token counts (1, 16, 128,
                  1000, 4096, 4097): attention 4096 -> 4096, MLP up 4096 -> 14336, MLP
                  down 14336 -> 4096, and the vocabulary projection 4096 -> 128256
    unaligned     K or N odd, = 2 mod 4, = 4 mod 8: the inputs TMA and 16-byte vector loads
                  cannot take as they are (rows not a multiple of 16 bytes)
    skinny        M or N from 1 to 16: bound by reading the big operand once
    few-tiles     fewer output tiles than SMs, and a long K: split-K's or stream-K's case
    square        the squares of the ladder's tables
"""
from __future__ import annotations

from bench.families.matmul.models import MatmulShape

NAME = "shapes"     # --suite shapes
# The paths for shapes that are not one big GEMM (bench/catalog/matmul_shape_paths.py): the
# suite's report and figure show them; the ladders' sections and figures do not.
PATHS = ("cuda_split_k", "cuda_split_k_tf32", "cuda_split_k_fp32", "triton_split_k")

_TOKENS = (1, 16, 128, 1000, 4096, 4097)
_LAYER = (("attn", 4096, 4096), ("up", 14336, 4096), ("down", 4096, 14336))   # out, in

_LISTED: tuple[tuple[str, str, str], ...] = (
    # KernelBench level 1 (problem number in the name)
    ("kb1-square", "kernelbench", "4096x4096x4096"),
    ("kb2-standard", "kernelbench", "2048x4096x8192"),
    ("kb4-matvec", "kernelbench", "2048x1x1048576"),
    ("kb6-large-k", "kernelbench", "256x256x524288"),
    ("kb7-small-k", "kernelbench", "32768x32768x64"),
    ("kb8-irregular", "kernelbench", "8205x5921x2949"),
    ("kb9-tall-skinny", "kernelbench", "32768x32768x32"),
    ("kb10-3d-tensor", "kernelbench", "16384x768x2048"),
    # transformer projections: tokens x out x in
    *((f"{name}-{t}", "transformer", f"{t}x{out}x{inp}")
      for t in _TOKENS for name, out, inp in _LAYER),
    *((f"vocab-{t}", "transformer", f"{t}x128256x4096") for t in (1, 128, 4097)),
    # unaligned K or N (4096 otherwise)
    ("k-odd", "unaligned", "4096x4096x4097"),
    ("k-2mod4", "unaligned", "4096x4096x4098"),
    ("k-4mod8", "unaligned", "4096x4096x4100"),
    ("n-odd", "unaligned", "4096x4097x4096"),
    ("n-2mod4", "unaligned", "4096x4098x4096"),
    ("n-4mod8", "unaligned", "4096x4100x4096"),
    ("all-odd", "unaligned", "4097x4097x4097"),
    # skinny: M or N of 1 to 16
    ("m3", "skinny", "3x8192x8192"),
    ("n3", "skinny", "8192x3x8192"),
    ("m16", "skinny", "16x8192x8192"),
    ("n16", "skinny", "8192x16x8192"),
    ("n1", "skinny", "8192x1x8192"),
    # few output tiles, long K
    ("few-1000", "few-tiles", "1000x1000x4099"),
    ("few-512", "few-tiles", "512x512x16384"),
    ("few-256", "few-tiles", "256x256x65536"),
    ("few-128", "few-tiles", "128x128x131072"),
    # the squares of the ladder's tables
    ("square-1024", "square", "1024x1024x1024"),
    ("square-2048", "square", "2048x2048x2048"),
    ("square-8192", "square", "8192x8192x8192"),
)

CATEGORIES = ("kernelbench", "transformer", "unaligned", "skinny", "few-tiles", "square")


def _merged(listed) -> tuple[tuple[str, str, str], ...]:
    """Each shape once, named by every entry that has it ("kb1-square / attn-4096"), in the
    category of the first."""
    names: dict[str, list[str]] = {}
    category: dict[str, str] = {}
    for name, cat, shape in listed:
        names.setdefault(shape, []).append(name)
        category.setdefault(shape, cat)
    return tuple((" / ".join(n), category[s], s) for s, n in names.items())


SUITE = _merged(_LISTED)


def shapes() -> list[MatmulShape]:
    return [MatmulShape.parse(text) for _name, _category, text in SUITE]


def text(category: str | None = None) -> str:
    """The suite as a --shapes text; with a category, that category's shapes only (`--suite
    shapes:few-tiles`: a part of the suite to time in a run of its own, with --append)."""
    return ",".join(s for _n, c, s in SUITE if category in (None, c))


def by_shape() -> dict[str, tuple[str, str]]:
    """shape text -> (name, category)."""
    return {s: (n, c) for n, c, s in SUITE}


def intensity(shape: MatmulShape, element_bytes: int) -> float:
    """FLOPs per compulsory byte: 2 M N K / ((M K + K N + M N) x element size), the x axis
    that orders the suite from memory-bound to compute-bound."""
    s = shape
    nbytes = (s.M * s.K + s.K * s.N + s.M * s.N) * element_bytes
    return 2 * s.M * s.N * s.K / nbytes if nbytes else 0.0
