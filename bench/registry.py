"""The registry: one record per kernel, the single source of truth of the suite.

The CLI, the tests, the benchmarks, the plots and the kernel tables all enumerate
:func:`kernels`; nothing else lists kernels by hand. Records live in the modules of
``bench/catalog/`` (one module per group of kernels, found by name); adding a kernel means
adding its record there.

Nothing is imported or built at import time: records hold *loaders* that fetch the
callable (and build the extension, or import Triton) only when a kernel runs.
"""
from __future__ import annotations

import fnmatch
import importlib
import os
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Mapping

from bindings import precision as prec

# What a precision label means (every result row and legend carries one of these).
PRECISIONS = {label: p.meaning for label, p in prec.TABLE.items()}

BACKENDS = ("cuda", "triton", "cublas", "torch")
# The oldest GPU the suite supports (compute capability 8.0: A100, RTX 30xx and newer): the
# CUDA ops are built from it up (bindings/_toolchain.py), and Triton itself needs it.
ARCH_FLOOR = (8, 0)
# The library kernels: what "% of reference" divides by (the first of an op's kernels found
# in this order), profiled only when asked for by name.
REFERENCE_BACKENDS = ("cublas", "torch")


def catalog_modules() -> list[str]:
    """The modules of bench/catalog/, in name order: each has records()."""
    from bench import catalog

    return [f"bench.catalog.{m.name}" for m in sorted(pkgutil.iter_modules(catalog.__path__),
                                                       key=lambda m: m.name)]


@dataclass(frozen=True)
class Kernel:
    """One kernel of the suite.

    name        unique id, used on the command line: "cuda_v3_smem_tiling"
    op          the problem it solves ("matmul"); its family (bench/families/) has the Problem
    backend     "cuda" | "triton" | "cublas" | "torch"
    version     rung of the ladder ("v1", "v1c", "v1.5", "v2", "v3") or a label
    summary     one line: what the kernel does
    source      repository-relative path of the file that holds the kernel
    precisions  precision labels it supports (keys of PRECISIONS)
    loader      precision -> callable(*inputs) -> output; may build or import lazily
    params      precision -> tile parameters (what the traffic model uses), read lazily;
                precision None means the kernel's first precision
    model       (shape, params) -> bench.families.matmul.models.Traffic, or None
    twin        name of the same algorithm in the other language, or None
    runs_on_cpu True if it can run without a GPU (Triton interpreter, torch on CPU)
    formula     the lecture's traffic formula as a student reads it ("2N³/V"), shown in
                the kernel tables and the report; "" if the kernel has none
    min_capability  the oldest GPU it runs on, as a compute capability: the suite's floor
                (8, 0) (Ampere) for most, (9, 0) for the kernels that need Hopper
    needs       what a min_capability above the floor is for ("Hopper: TMA descriptors"),
                said when the kernel is skipped on an older GPU
    max_capability  the newest GPU it runs on, or None for any newer one: (9, 0) for code
                built for sm_90a (wgmma), which no later GPU runs
    random_stream  the random numbers a kernel of a random op draws: "philox4x32-10" for
                the suite's dropout twins, whose check then compares the mask element by
                element with the reference stream (bench/families/memory/problems.py);
                "" where a library draws its own (only the keep rate can be judged)
    chooses     shape, precision -> the registry name of the kernel that runs this shape, for
                an entry that dispatches (cuda_auto, triton_auto): its rows record the choice
                ("choice") and its traffic is the chosen kernel's; None for any other
    refuses     shape -> why the kernel does not take this shape of its op, or "" when it
                does (softmax_row_sram: rows longer than its shared memory; the split
                softmax: columns); check, time, profile and the sanitizer skip such a shape
                with the reason, where calling the kernel would raise it as an error
    """

    name: str
    op: str
    backend: str
    version: str
    summary: str
    source: str
    precisions: tuple[str, ...]
    loader: Callable[[str], Callable]
    params: Callable[..., Mapping[str, int]] = field(default=lambda precision=None: {})
    model: Callable | None = None
    twin: str | None = None
    runs_on_cpu: bool = False
    formula: str = ""
    twin_note: str = ""  # why there is no twin, when twin is None and that is a lesson
    departure: str = ""  # why its measured traffic leaves the model (found in its SASS)
    min_capability: tuple[int, int] = ARCH_FLOOR
    needs: str = ""
    max_capability: tuple[int, int] | None = None
    refuses: Callable | None = None
    random_stream: str = ""
    chooses: Callable | None = None

    def choice(self, shape, precision: str | None = None) -> str:
        """The kernel a dispatching entry runs at this shape and precision ("" for others)."""
        if self.chooses is None:
            return ""
        return self.chooses(shape, precision or self.precisions[0])

    def refusal(self, shape) -> str:
        """Why this kernel does not take `shape` (see `refuses`), or "" when it does."""
        return self.refuses(shape) if self.refuses is not None else ""

    def runner(self, precision: str) -> Callable:
        if precision not in self.precisions:
            raise ValueError(f"{self.name}: precision {precision!r} is not supported; "
                             f"choose from {', '.join(self.precisions)}")
        return self.loader(precision)

    def tile_params(self, precision: str | None = None) -> dict:
        """The tile parameters at this precision, with the precision itself (the models
        take the element size from it)."""
        precision = precision or self.precisions[0]
        return {**dict(self.params(precision)), "precision": precision}

    def traffic(self, shape, precision: str | None = None):
        """The analytic traffic model at this shape and precision (the kernel's first
        precision if None) with the tile parameters it runs at that precision."""
        if self.chooses is not None:
            chosen = by_name().get(self.choice(shape, precision))
            return chosen.traffic(shape, precision) if chosen is not None else None
        if self.model is None:
            return None
        return self.model(shape, self.tile_params(precision))


_cache: list[Kernel] | None = None
_cache_plugins: str | None = None      # the CVT_PLUGINS the cache was made with


def kernels() -> list[Kernel]:
    """Every registered kernel: the catalog's, in catalog order, then the plugins' (files
    named by --plugin or CVT_PLUGINS, installed entry points: bench/plugins.py). Checks that
    names are unique and that every plugin kernel's op exists."""
    global _cache, _cache_plugins, _builtin
    from bench import plugins

    named = os.environ.get(plugins.ENV, "")
    if _cache is None or named != _cache_plugins:
        found: list[Kernel] = []
        for module in catalog_modules():
            found.extend(importlib.import_module(module).records())
        own = {k.name for k in found}
        extra = [r if isinstance(r, Kernel) else Kernel(**r) for r in plugins.records()]
        found.extend(extra)
        names = [k.name for k in found]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            where = {n: [k.source for k in found if k.name == n] for n in dupes}
            raise plugins.PluginError("registry: kernel names defined twice: " + "; ".join(
                f"{n} ({', '.join(w)})" for n, w in where.items())
                + ("" if not own.intersection(dupes) else " (rename the plugin's kernel)"))
        _check_plugin_ops(extra)
        _cache, _cache_plugins, _builtin = found, named, frozenset(own)
    return list(_cache)


def _check_plugin_ops(extra: list[Kernel]) -> None:
    from bench import plugins, problems

    for k in extra:
        if not problems.known(k.op):
            raise plugins.PluginError(f"{k.name} ({k.source}): op {k.op!r} is no op of the "
                                      f"suite; ops: {', '.join(problems.problems())}")
        bad = [p for p in k.precisions if p not in PRECISIONS]
        if bad:
            raise plugins.PluginError(f"{k.name} ({k.source}): unknown precision {bad[0]!r}; "
                                      f"precisions: {', '.join(PRECISIONS)}")
        if k.backend not in BACKENDS:
            raise plugins.PluginError(f"{k.name} ({k.source}): backend {k.backend!r}; "
                                      f"backends: {', '.join(BACKENDS)}")


def forget() -> None:
    """Drops the cached kernel list (after plugins were added: bench.plugins.use)."""
    global _cache
    _cache = None


def get(name: str) -> Kernel:
    for k in kernels():
        if k.name == name:
            return k
    raise KeyError(f"registry: no kernel named {name!r}; `python -m bench list` shows them all")


def by_name() -> dict[str, Kernel]:
    """Every kernel keyed by name (for looking up twins)."""
    return {k.name: k for k in kernels()}


# Kernels kept to show that the harness catches a bug (the wrong copies of "A Practitioner's
# Guide to Triton") carry this
# in their names. select() leaves them out unless a pattern asks for bugs ("*_bug_*"). The
# rule is the catalog's own: a plugin's kernel is never left out for its name (a student's
# my_matmul_bug_kmask is selected by 'my_*').
DELIBERATELY_WRONG = "_bug_"
_builtin: frozenset = frozenset()


def deliberately_wrong(kernel: Kernel) -> bool:
    if not _builtin:
        kernels()
    return DELIBERATELY_WRONG in kernel.name and kernel.name in _builtin


def groups() -> dict[str, Callable[[Kernel], bool]]:
    """Named groups for --kernels, written with a leading "@", from every op family (a glob
    cannot say "the ladder": 'triton_v*' also matches triton_vector_add)."""
    from bench import families

    out: dict = {}
    for family in families.families():
        out.update(family.groups())
    return out


def _matches(k: Kernel, pattern: str) -> bool:
    if pattern.startswith("@"):
        named = groups()
        group = named.get(pattern[1:])
        if group is None:
            raise KeyError(f"registry: no kernel group {pattern!r}; groups: "
                           f"{', '.join('@' + g for g in named)}")
        return group(k)
    return fnmatch.fnmatchcase(k.name, pattern)


def select(patterns: str | None = None, op: str | None = None,
           include_wrong: bool | None = None) -> list[Kernel]:
    """Kernels whose name matches any of the comma-separated glob patterns (all if None),
    or that belong to a named group of an op family (groups(): @ladder, the CUDA ladder
    and its Triton twins; @matmul; @memory).

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
