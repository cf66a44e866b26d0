"""GPU tier, slow: every CUDA FFMA rung at a C of more rows of blocks than CUDA's grid y holds.

A rung's launcher lays its blocks out in rows along grid y (a row of blocks covers BM rows
of C, or for v1 naive 32 columns), and CUDA caps grid y at 65535 blocks. Past that the
launcher folds the rows into (y, z) and the kernel reads its row as blockIdx.y + gridDim.y
* blockIdx.z (cuda/common.cuh: fold_grid, block_y); the rungs refused such a C before. Here
each rung runs at 65537 rows of blocks (the last one partial), the first count whose fold,
32769 along y by 2 along z, leaves a row of blocks past C: those blocks must return at once.
Every element of C is compared with the float64 reference, in slices: the rows below the old
limit of 65535 rows of blocks and the rows past it. K = 64 and N = 264 (two column tiles of
v6-v8, three of v3-v5) on the 128-bit path; v8's 65537 rows of tiles fill the GPU, so it
runs unsplit and folds as v7.

The same fold runs on the CPU emulator with the limit lowered to 3 blocks
(tests/cpu/test_ffma_rungs.py); tests/gpu/test_matmul_cuda.py places every row of such a C
exactly at K = 1 in the fast tier; tests/gpu/test_large_offsets.py runs RGB -> grey wider
than 65535 column blocks.
"""
from __future__ import annotations

import gc

import pytest

from bench import registry
from bench.families.matmul.problems import matmul_error
from tests.support.grid_rows import grid_rows, shape_with_rows

# up to ~20 GB each: one worker runs them, one after the other (Makefile: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("large-memory")]

LADDER = [k for k in registry.select("@ladder") if k.backend == "cuda"]
ROWS = 65537          # rows of blocks: 65535 (CUDA's grid y) + 2
K, OTHER = 64, 264    # the inner dimension, and C's other dimension
SLICE = 2**18         # rows (columns) of C per slice of the reference: ~4 GB of float64 at most


@pytest.mark.parametrize("kernel", LADDER, ids=[k.name for k in LADDER])
def test_every_element_of_a_c_past_65535_rows_of_blocks(kernel):
    """M = 65536 * BM + 5 (v1 naive: N = 65536 * 32 + 5): up to 11 GB of A and C (BM = 128)
    and ~4 GB for a slice of the reference."""
    import torch

    M, N = shape_with_rows(kernel, ROWS, OTHER)
    dim, per_row = grid_rows(kernel)
    old_limit = 65535 * per_row            # the first row (column) of C the rung refused
    need = 4 * (M * K + K * N + M * N) + 5 * 2**30
    free, _total = torch.cuda.mem_get_info()
    if free < need:
        pytest.skip(f"needs {need / 2**30:.0f} GiB of free GPU memory, {free / 2**30:.1f} GiB free")
    torch.manual_seed(7)
    a = torch.randn(M, K, device="cuda")
    b = torch.randn(K, N, device="cuda")
    out = kernel.runner("fp32")(a, b)
    assert out.shape == (M, N)
    long = M if dim == "M" else N
    assert long > old_limit
    for start in range(0, long, SLICE):
        part = slice(start, min(start + SLICE, long))
        err = (matmul_error(out[part], a[part], b, "fp32") if dim == "M" else
               matmul_error(out[:, part], a, b[:, part], "fp32"))
        assert err <= 1, (f"{kernel.name}: error {err:.3g} bounds at {dim} {part.start}.."
                            f"{part.stop - 1} (the old limit: {dim} = {old_limit})")
    del a, b, out
    gc.collect()
    torch.cuda.empty_cache()
