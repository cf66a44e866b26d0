"""The Triton matmuls (triton_impl/): twins of the CUDA ladder, and the kernels of Triton's
matrix-multiplication tutorial and the notebook "Meet Triton".

Loaders import the kernel module only when a kernel runs: a @triton.jit kernel is built for
the GPU or for the interpreter when it is defined, so nothing Triton is imported before
bench.device.setup() has chosen. Tile parameters come from triton_impl.tiles, which does
not import Triton (the twins' tiles are read from cuda/matmul_config.h).

v1 coalesced has no twin: Triton, not the programmer, maps threads to elements, and its
coalescing pass always picks the coalesced mapping (see triton_impl/matmul_v1_naive.py).
"""
from __future__ import annotations

import importlib

from bench.families.matmul import models_triton
from bench.registry import Kernel

ALL_PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


def _module(name: str):
    return importlib.import_module(f"triton_impl.{name}")


def _twin_loader(module: str):
    def load(precision: str):
        return _module(module).op()      # fp32 only: the op takes (a, b)

    return load


def _precision_loader(module: str):
    def load(precision: str):
        op = _module(module).op()

        def run(a, b):
            return op(a, b, precision)

        return run

    return load


def _tiles(fn_name: str):
    """params: a ladder twin's triton_impl.tiles entry (the CUDA twin's tiles; fp32 only)."""
    def params(precision=None):
        from triton_impl import tiles

        return dict(getattr(tiles, fn_name)())

    return params


def _tiles_per_precision(table: str, first: bool = False, module: str = "tiles"):
    """params: the tiles a fast matmul runs at each precision, read lazily from a table of
    triton_impl.tiles (or tiles_hopper) keyed by precision; `first`: the table holds a list
    of autotuning candidates, and the model uses the first (what small problems run)."""
    def params(precision=None):
        tiles = importlib.import_module(f"triton_impl.{module}")
        entry = getattr(tiles, table)
        value = entry[precision or next(iter(entry))]
        return dict(value[0] if first else value)

    return params


def _tiles_constant(name: str):
    """params: one triton_impl.tiles entry for every precision, read lazily."""
    def params(precision=None):
        from triton_impl import tiles

        return dict(getattr(tiles, name))

    return params


def _batched_params(precision=None) -> dict:
    """triton_batched's tiles: tiles.BATCHED for fp32, the first autotuning candidate (what
    small problems run) for the autotuned precisions (tiles.BATCHED_AUTOTUNED)."""
    from triton_impl import tiles

    precision = precision or "fp32"
    if precision in tiles.BATCHED_AUTOTUNED:
        return dict(tiles.AUTOTUNE_CONFIGS[precision][0])
    return dict(tiles.BATCHED[precision])


def _twin(name, version, module, summary, model, params, twin, formula,
          departure: str = "") -> Kernel:
    return Kernel(
        name=name, op="matmul", backend="triton", version=version, summary=summary,
        source=f"triton_impl/{module}.py", precisions=("fp32",), loader=_twin_loader(module),
        params=params, model=model, twin=twin, runs_on_cpu=True, formula=formula,
        departure=departure,
    )


def _seed(name, version, module, summary, model, params) -> Kernel:
    return Kernel(
        name=name, op="matmul", backend="triton", version=version, summary=summary,
        source=f"triton_impl/{module}.py", precisions=ALL_PRECISIONS,
        loader=_precision_loader(module), params=params, model=model, runs_on_cpu=True,
        formula="N³/BLOCK_N + N³/BLOCK_M",
    )


def _bug_loader(bug: str):
    def load(precision: str):
        fn = _module("matmul_bugs").matmul_bug

        def run(a, b):
            return fn(a, b, precision, bug)

        return run

    return load


BUG_SUMMARIES = {
    "drop_k_tile": "the k loop stops one tile early: the last K tile never reaches the sum",
    "zero_1_in_100": "one output in a hundred (row-major index % 100 == 99) stored as 0",
    "drop_n_tail": "where N % 64 is 33..63 the last partial 64-column tile is never stored",
}


def _bug(bug: str) -> Kernel:
    """A deliberately wrong matmul of triton_impl/matmul_bugs.py (left out of every default
    selection: registry.deliberately_wrong)."""
    return Kernel(
        name=f"triton_matmul_bug_{bug}", op="matmul", backend="triton", version=f"bug-{bug}",
        summary="DELIBERATELY WRONG: " + BUG_SUMMARIES[bug],
        source="triton_impl/matmul_bugs.py", precisions=ALL_PRECISIONS, loader=_bug_loader(bug),
        params=_tiles_constant("MATMUL_BUGS"),
        model=models_triton.matmul_blocked, runs_on_cpu=True, formula="N³/BLOCK_N + N³/BLOCK_M",
        twin_note="deliberately wrong: kept to show that the check catches it")


def records() -> list[Kernel]:
    return [
        _twin("triton_v1_naive", "v1", "matmul_v1_naive",
              "one element per compiler thread, [B,B] loads per k; Triton's layout makes it "
              "coalesced (no v1-coalesced twin)",
              models_triton.matmul_v1, _tiles("v1_naive"), twin="cuda_v1_naive", formula="2N³"),
        _twin("triton_v1.5_thread_tiling", "v1.5", "matmul_v1_5_thread_tiling",
              "[T,T,V] tensors: each thread-position computes a VxV block row by row",
              models_triton.matmul_v1_5, _tiles("v1_5_thread_tiling"),
              twin="cuda_v1.5_thread_tiling", formula="N³/V + N³",
              departure="SASS: a thread owns its V neighbour columns, so the V loads of B "
                        "are one 16-byte LDG.E.128: 2 load instructions per k where the "
                        "model (and CUDA) count 1 + V = 5, hence 0.40. Its lanes walk rows, "
                        "not columns: each A load gathers 16 cache lines (CUDA's: 2). "
                        "ncu: both twins are bound by L1's data pipe (93% / 97% busy), "
                        "and this one needs 2.0x the L1 data wavefronts"),
        _twin("triton_v2_register_tiling", "v2", "matmul_v2_register_tiling",
              "(TV)x(TV) program tile; per k a column of A and a row of B, outer product "
              "with FFMA (no tl.dot)",
              models_triton.matmul_v2, _tiles("v2_register_tiling"),
              twin="cuda_v2_register_tiling",
              formula="2N³/(T·V) requested per program (lecture, per thread: 2N³/V)",
              departure="SASS: the outer product's default layout gives each thread a "
                        "16-row x 1-column strip of the 64x64 tile, so a column of A is "
                        "held (and loaded) by all 32 lanes of a warp and a row of B by 4 "
                        "warps: 17 loads per thread per k, 4352 per program against the "
                        "program-level model's 128 = 34x (2.1x the CUDA twin's loads per "
                        "FFMA). Its shared memory is the epilogue's layout conversion of the "
                        "accumulator, once per program"),
        _twin("triton_v3_smem_tiling", "v3", "matmul_v3_smem_tiling",
              "LxL program tile, LxS / SxL tiles through tl.dot(ieee): the compiler stages "
              "them in shared memory (S >= 16)",
              models_triton.matmul_v3, _tiles("v3_smem_tiling"), twin="cuda_v3_smem_tiling",
              formula="global 2N³/L, shared 2N³/V",
              departure="16-byte vector loads: one instruction moves 4 float32, so the "
                        "instruction count is a quarter of the element count (0.25)"),
        _seed("triton_grouped", "grouped", "matmul_grouped",
              "Triton tutorial's tl.dot matmul with L2-grouped program order (tl.swizzle2d), "
              "strided",
              models_triton.matmul_blocked, _tiles_per_precision("GROUPED")),
        _seed("triton_autotuned", "autotuned", "matmul_autotuned",
              "grouped tl.dot matmul autotuned per precision; tf32 computes C^T = B^T A^T "
              "to keep wgmma pipelined",
              models_triton.matmul_wrapped, _tiles_per_precision("AUTOTUNE_CONFIGS", first=True)),
        _seed("triton_batched", "batched", "matmul_batched",
              "(..., m, k) @ (..., k, n), broadcasting, any strides; tf32 on Hopper: Gluon "
              "swap (3-D TMA); else autotuned, fp32 64x64",
              models_triton.matmul_blocked, _batched_params),
        Kernel(
            name="triton_persistent", op="matmul", backend="triton", version="persistent",
            summary="TMA descriptors, one program per SM; tf32: column-major B direct, "
                    "row-major B as C^T = B^T A^T (Gluon)",
            source="triton_impl/matmul_persistent.py", precisions=("tf32", "fp16", "bf16"),
            loader=_precision_loader("matmul_persistent"),
            params=_tiles_per_precision("PERSISTENT_CONFIGS", first=True, module="tiles_hopper"),
            model=models_triton.matmul_persistent, runs_on_cpu=True,
            formula="N³/BLOCK_N + N³/BLOCK_M",
            min_capability=(9, 0),
            needs="Hopper: TMA tensor descriptors (tl.make_tensor_descriptor) and wgmma",
        ),
        *(_bug(bug) for bug in BUG_SUMMARIES),
    ]
