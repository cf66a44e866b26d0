"""The rows of blocks of a CUDA ladder rung's grid: which dimension of C they run along and
how many rows (or columns) of C each covers, from the rung's tile parameters in the registry.
Those rows go on grid y, which CUDA caps at 65535 blocks; past that the launcher folds them
into (y, z) (cuda/common.cuh: fold_grid, block_y). The tests of that fold pick their shapes
from here: a C of more rows of blocks than grid y holds."""
from __future__ import annotations

from pathlib import Path


def grid_rows(kernel) -> tuple[str, int]:
    """("M" or "N", rows or columns of C per row of blocks) of a CUDA ladder rung, as its
    launcher in cuda/matmul_v*.cu lays out its grid: v1 naive puts the columns of C on y
    (its threadIdx.x runs down a column), every other rung the rows."""
    p = kernel.tile_params("fp32")
    if kernel.version in ("v1", "v1c"):
        return ("N" if kernel.version == "v1" else "M"), p["BLOCK"]
    if kernel.version in ("v1.5", "v2"):
        return "M", p["T"] * p["V"]
    return "M", p["BM"] if "BM" in p else p["L"]


def shape_with_rows(kernel, rows: int, other: int) -> tuple[int, int]:
    """(M, N) whose grid has `rows` rows of blocks, the last one partial (5 rows or columns
    of C), and `other` along the other dimension."""
    dim, per_row = grid_rows(kernel)
    long = (rows - 1) * per_row + 5
    return (long, other) if dim == "M" else (other, long)


def version_of(kernel) -> str:
    """The version name of CVT_MATMUL_OPS (cuda/matmul_config.h) a registry kernel runs:
    cuda/matmul_v1_5_thread_tiling.cu -> v1_5_thread_tiling."""
    return Path(kernel.source).stem.removeprefix("matmul_")
