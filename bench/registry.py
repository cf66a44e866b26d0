"""The registry: one record per kernel, the single source of truth of the suite.

The CLI, the tests, the benchmarks, the plots and the README table all enumerate
:func:`kernels`; nothing else lists kernels by hand. Records live in the modules of
``bench/catalog/`` (one module per family); adding a kernel means adding its record there.

Nothing is imported or built at import time: records hold *loaders* that fetch the
callable (and build the extension, or import Triton) only when a kernel runs.
"""
from __future__ import annotations

import fnmatch
import importlib
from dataclasses import dataclass, field
from typing import Callable, Mapping

# What a precision label means (every result row and legend carries one of these).
PRECISIONS = {
    "fp32": "float32 inputs, IEEE FFMA arithmetic (no tensor cores, TF32 off)",
    "tf32": "float32 inputs rounded to TF32 on tensor cores, float32 accumulate",
    "fp16": "float16 inputs on tensor cores, float32 accumulate, float16 output",
    "bf16": "bfloat16 inputs on tensor cores, float32 accumulate, bfloat16 output",
    "u8": "uint8 data (images), float32 arithmetic",
}

BACKENDS = ("cuda", "triton", "cublas", "torch")

# Catalog modules, in the order their kernels are listed.
CATALOG = (
    "bench.catalog.matmul_cuda",
    "bench.catalog.matmul_triton",
    "bench.catalog.matmul_reference",
    "bench.catalog.memory_bound",
)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the suite.

    name        unique id, used on the command line: "cuda_v3_smem_tiling"
    op          the problem it solves ("matmul"); see bench/problems.py
    backend     "cuda" | "triton" | "cublas" | "torch"
    version     rung of the ladder ("v1", "v1c", "v1.5", "v2", "v3") or a label
    summary     one line: what the kernel does
    source      repository-relative path of the file that holds the kernel
    precisions  precision labels it supports (keys of PRECISIONS)
    loader      precision -> callable(*inputs) -> output; may build or import lazily
    params      tile parameters (what the traffic model uses), read lazily
    model       (shape, params) -> bench.models.Traffic, or None
    twin        name of the same algorithm in the other language, or None
    runs_on_cpu True if it can run without a GPU (Triton interpreter, torch on CPU)
    formula     the lecture's traffic formula as a student reads it ("2N³/V"), shown in
                the README table and the report; "" if the kernel has none
    """

    name: str
    op: str
    backend: str
    version: str
    summary: str
    source: str
    precisions: tuple[str, ...]
    loader: Callable[[str], Callable]
    params: Callable[[], Mapping[str, int]] = field(default=lambda: {})
    model: Callable | None = None
    twin: str | None = None
    runs_on_cpu: bool = False
    formula: str = ""
    twin_note: str = ""  # why there is no twin, when twin is None and that is a lesson
    departure: str = ""  # why its measured traffic leaves the model (found in its SASS)

    def runner(self, precision: str) -> Callable:
        if precision not in self.precisions:
            raise ValueError(f"{self.name}: precision {precision!r} is not supported; "
                             f"choose from {', '.join(self.precisions)}")
        return self.loader(precision)

    def traffic(self, shape):
        """The analytic traffic model at this shape with this kernel's parameters."""
        if self.model is None:
            return None
        return self.model(shape, self.params())


_cache: list[Kernel] | None = None


def kernels() -> list[Kernel]:
    """Every registered kernel, in catalog order. Checks that names are unique."""
    global _cache
    if _cache is None:
        found: list[Kernel] = []
        for module in CATALOG:
            found.extend(importlib.import_module(module).records())
        names = [k.name for k in found]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise RuntimeError(f"registry: duplicate kernel names {dupes}")
        _cache = found
    return list(_cache)


def get(name: str) -> Kernel:
    for k in kernels():
        if k.name == name:
            return k
    raise KeyError(f"registry: no kernel named {name!r}; `python -m bench list` shows them all")


def by_name() -> dict[str, Kernel]:
    """Every kernel keyed by name (for looking up twins)."""
    return {k.name: k for k in kernels()}


# Kernels kept to show that the harness catches a bug (the guide's wrong copies) carry this
# in their names. select() leaves them out unless a pattern asks for bugs ("*_bug_*").
DELIBERATELY_WRONG = "_bug_"


def deliberately_wrong(kernel: Kernel) -> bool:
    return DELIBERATELY_WRONG in kernel.name


# Named groups for --kernels, written with a leading "@". A glob cannot say "the ladder":
# 'triton_v*' also matches triton_vector_add.
LADDER_VERSIONS = ("v1", "v1c", "v1.5", "v2", "v3")
GROUPS = {
    "ladder": lambda k: k.op == "matmul" and k.backend in ("cuda", "triton")
    and k.version in LADDER_VERSIONS,
    "matmul": lambda k: k.op == "matmul",
    "memory": lambda k: k.op != "matmul",
}


def _matches(k: Kernel, pattern: str) -> bool:
    if pattern.startswith("@"):
        group = GROUPS.get(pattern[1:])
        if group is None:
            raise KeyError(f"registry: no kernel group {pattern!r}; groups: "
                           f"{', '.join('@' + g for g in GROUPS)}")
        return group(k)
    return fnmatch.fnmatchcase(k.name, pattern)


def select(patterns: str | None = None, op: str | None = None,
           include_wrong: bool | None = None) -> list[Kernel]:
    """Kernels whose name matches any of the comma-separated glob patterns (all if None),
    or that belong to a named group: @ladder (the CUDA ladder and its Triton twins),
    @matmul, @memory.

    Deliberately wrong kernels are included only if include_wrong is True, or (None) if a
    pattern contains "bug": `check --kernels '*'` and the default report never run them."""
    chosen = kernels()
    pats = [p.strip() for p in (patterns or "").split(",") if p.strip()]
    if include_wrong is None:
        include_wrong = any("bug" in p for p in pats)
    if not include_wrong:
        chosen = [k for k in chosen if not deliberately_wrong(k)]
    if op is not None:
        chosen = [k for k in chosen if k.op == op]
    if pats:
        chosen = [k for k in chosen if any(_matches(k, p) for p in pats)]
    return chosen
