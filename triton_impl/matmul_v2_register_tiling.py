"""Triton twin of GPU matmul v2, register tiling: an outer product per k.

  idea      C_tile = sum over k of (column k of A_strip) x (row k of B_strip): per k, load
            one value of A per tile row and one value of B per tile column, and do every
            multiply-add between them. Each loaded value serves a whole row or column.
  change    from v1.5: k becomes the outermost loop and the "thread" axis disappears from
            the code. The program loads a column of A and a row of B as 1-D tensors and
            accumulates their outer product a[:, None] * b[None, :] with FFMA (no tl.dot:
            the CUDA twin has no tensor-core or shared-memory step either).
  mapping   lecture (CUDA)                      this file (Triton)
            block of T x T threads              one program: a (T*V) x (T*V) tile of C
            thread (V x V accumulators)         the compiler's threads: num_warps = T*T/32,
                                                so each holds (T*V)^2 / (32*num_warps) = V*V
                                                accumulators, in a shape the compiler picks
            a[V] = A[r0.., k], b[V] = B[k, c0..] a = A[rows, k] ([T*V]), b = B[k, cols] ([T*V])
            V, T                                V, T from cuda/matmul_config.h
            blockIdx.x -> column block          tl.program_id(0) -> column block (same order)
  traffic   what the program's loads request (masked elements request nothing):
              A: each of the ceil(N/TV) program columns reads all of A   = M*K*ceil(N/TV)
              B: each of the ceil(M/TV) program rows reads all of B      = N*K*ceil(M/TV)
              total, N x N x N                                           = 2N^3/(T*V)
              global stores = M * N;  FMAs = ceil(M/TV)*ceil(N/TV) * (TV)^2 * K
            The CUDA twin issues 2N^3/V thread loads (each thread loads its own V + V), of
            which L1 merges the duplicates across a warp. Here the program states the
            sharing: a value is requested once per program, T times fewer requests. What
            the hardware executes lies between the two: the compiler's layout replicates
            the 1-D a and b across the threads that hold the same rows (or columns), and
            each replica is a load instruction; it may also load b coalesced and
            redistribute it through shared memory (a convert_layout). ncu's
            smsp__inst_executed_op_global_ld.sum tells which one it did.
  measured  (H100, SASS for sm_90, docs/performance/ladder.md) it replicates: the outer
            product's default layout gives each thread a 16-row x 1-column strip of the
            64 x 64 tile (one element per thread, 32 lanes along the columns), not a 4 x 4 block.
            Every lane then loads its own copy of the column of A and every row-warp its own
            copy of the row of B: 17 loads per thread per k, 34x the program-level model,
            2.1x the CUDA twin's loads per FFMA, and 2.3x its time. Plain Triton cannot ask
            for a register tile; Gluon's explicit layouts can.
  precond.  float32 (precision "fp32": fp32 FFMA, no tensor cores); any M, N, K >= 0;
            any strides (made row-major by the wrapper, as the CUDA op does);
            M <= 65535 * T * V (grid axis 1; the CUDA launcher folds past it).
  params    V = CVT_V2_V, T = CVT_V2_T (cuda/matmul_config.h, read, never copied).
  run       python -m bench check --kernels 'triton_v2*' --shapes 1000x999x37
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles

NAME = "triton_v2_register_tiling"


@triton.jit
def matmul_v2_register_tiling_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    BLOCK_M: tl.constexpr,                    # = T * V rows of C per program
    BLOCK_N: tl.constexpr,                    # = T * V columns
):
    pid_n = tl.program_id(0).to(tl.int64)     # blockIdx.x: column block (as the CUDA twin)
    pid_m = tl.program_id(1).to(tl.int64)     # blockIdx.y: row block
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N

    a_ptrs = a_ptr + rows * stride_am         # column 0 of the program's strip of A
    b_ptrs = b_ptr + cols * stride_bn         # row 0 of its strip of B
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptrs, mask=row_ok, other=0.0)           # column k of A: BLOCK_M values
        b = tl.load(b_ptrs, mask=col_ok, other=0.0)           # row k of B: BLOCK_N values
        acc = tl.fma(a[:, None], b[None, :], acc)             # outer product, one FFMA each
        a_ptrs += stride_ak
        b_ptrs += stride_bk

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=row_ok[:, None] & col_ok[None, :])


def params() -> dict[str, int]:
    """The CUDA twin's tile parameters (cuda/matmul_config.h), and the launch they imply."""
    return tiles.v2_register_tiling()


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B in float32, with the tile of params()."""
    return _matmul(a, b)


def _matmul(a: torch.Tensor, b: torch.Tensor, *, tile: dict | None = None) -> torch.Tensor:
    """matmul with a tile forced, so that tests cross every tile edge on small shapes (the
    product takes params()): ``tile`` overrides params()."""
    p = tile or params()
    side = p["T"] * p["V"]
    return _common.ladder_matmul(
        NAME, matmul_v2_register_tiling_kernel, a, b,
        lambda M, N: ((triton.cdiv(N, side), triton.cdiv(M, side)), f"M = {M}"),
        BLOCK_M=side, BLOCK_N=side, num_warps=p.get("num_warps", 4))


def _op_impl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b)


def op():
    """torch.ops.cvt_triton.matmul_v2_register_tiling (registered on first call)."""
    return _common.register_op("matmul_v2_register_tiling", _op_impl, derivative="matmul")
