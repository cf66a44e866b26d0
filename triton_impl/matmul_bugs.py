"""Deliberately wrong matmuls: three small mistakes, kept to show that the check catches each.

  idea      the blocked tl.dot matmul (matmul_grouped's kernel in row-major program order),
            with one mistake each, no bigger than a student's. Each must FAIL `bench check`
            on the default check shapes, at every precision, on the CPU (interpreter) and on
            the GPU (tests/interpreter/test_wrong_kernels.py, tests/gpu/test_wrong_kernels.py):
            the check's bound is tight enough to see one lost K tile or one output in a
            hundred (bench/families/matmul/problems.py), and its default shapes put N on both
            halves of a 64-column tile (bench.families.matmul.problems.MatmulProblem).

    BUG = 1  drop_k_tile      the k loop stops one tile early, `range(0, K - BLOCK_K, BLOCK_K)`:
                              the last K tile (full or partial) never reaches the sum, and
                              with one tile (K <= BLOCK_K) nothing does
    BUG = 2  zero_1_in_100    one output in a hundred (row-major index % 100 == 99) is
                              stored as 0, like an element lost to a race
    BUG = 3  drop_n_tail      when N % 64 is in 33..63 the store's mask stops at the last
                              multiple of 64 (`cols < N // 64 * 64`): the last, partial
                              64-column tile is never written; at other N all is well

  registry  triton_matmul_bug_drop_k_tile, triton_matmul_bug_zero_1_in_100,
            triton_matmul_bug_drop_n_tail (bench/catalog/matmul_triton.py): flagged
            deliberately wrong, left out of every default selection.
  run       python -m bench check --kernels 'triton_matmul_bug_*'        (they FAIL, by design)
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles

NAME = "triton_matmul_bug"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
BUGS = {"drop_k_tile": 1, "zero_1_in_100": 2, "drop_n_tail": 3}
TILE = tiles.MATMUL_BUGS


@triton.jit
def matmul_bug_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  # the tile
    INPUT_PRECISION: tl.constexpr,            # "ieee" (FFMA) or "tf32"; ignored for 16-bit
    BUG: tl.constexpr,                        # which mistake (module doc)
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    stop = K
    if BUG == 1:
        stop = K - BLOCK_K                    # BUG: the last K tile is never added
    for k0 in range(0, stop, BLOCK_K):
        k_ok = (k0 + ks) < K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    if BUG == 2:                              # BUG: one output in a hundred is lost
        index = rows[:, None] * N + cols[None, :]
        acc = tl.where(index % 100 == 99, 0.0, acc)
    last_col = N
    if BUG == 3:                              # BUG: at N % 64 in 33..63, stop at a multiple of 64
        if N % 64 >= 33:
            last_col = N // 64 * 64
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < last_col))


def matmul_bug(a: torch.Tensor, b: torch.Tensor, precision: str, bug: str) -> torch.Tensor:
    """C = A @ B with the mistake `bug` (module doc)."""
    name = f"{NAME}_{bug}"
    _common.check_precision(name, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(name, a, b, precision)
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, TILE["BLOCK_M"]) * triton.cdiv(N, TILE["BLOCK_N"]),)
    _common.launch(matmul_bug_kernel, grid, a, b, c, M, N, K,
                   a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   BLOCK_M=TILE["BLOCK_M"], BLOCK_N=TILE["BLOCK_N"], BLOCK_K=TILE["BLOCK_K"],
                   INPUT_PRECISION=_common.DOT_INPUT_PRECISION[precision], BUG=BUGS[bug],
                   num_warps=TILE["num_warps"])
    return c

